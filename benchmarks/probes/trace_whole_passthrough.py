"""Trace supervision, relative parity program, whole MLP learned: where is the learned
sub-layer wrong, and what restores accuracy: passing the slots the rules do not write through
unchanged (as the compiled MLP does), or the same learned MLP run with the tolerant compiled
attention (:mod:`rasplab.analysis.trace_attention`) instead of the exact one?  Prints one
JSON object.

    python benchmarks/probes/trace_whole_passthrough.py
"""

import json
import time

import numpy as np
import torch

from rasplab.analysis.trace_attention import tolerant_attention
from rasplab.analysis.trace_config import load_trace_config
from rasplab.analysis.trace_supervision import (
    LearnedMLP,
    WholeMLP,
    mlp_pairs,
    run_learned,
    train_mlp,
)
from rasplab.compiler import compile_program
from rasplab.programs import get_program

t0 = time.process_time()
entry = get_program("parity_sequential_relative")
prog = entry.program()
cfg = load_trace_config(
    "configs/trace_supervision/parity_sequential_relative_cpu.yaml", {"train_samples": 1000}
)
model = compile_program(prog)
train, _ = entry.inputs(cfg.train_lengths, 1000, 0, "train")
x, y = mlp_pairs(prog, model.layout, [entry.encode(s) for s in train])
torch.manual_seed(0)
mlp = WholeMLP(model.layout, cfg)
loss = train_mlp(mlp, x, y, cfg)
mlp.eval()
with torch.no_grad():
    got = mlp(torch.tensor(x, dtype=torch.float32)).numpy()
err = np.abs(got - y)
per_slot = {s.name: round(float(err[:, s.start : s.stop].max()), 4) for s in model.layout.slots}
written = LearnedMLP(prog, model.layout, cfg).written.tolist()


class Passthrough(torch.nn.Module):
    def forward(self, z):
        out = z.clone()
        full = mlp(z)
        out[:, written] = full[:, written]
        heads = [i for s in model.layout.slots if s.head for i in range(s.start, s.stop)]
        out[:, heads] = 0.0
        return out


test, _ = entry.inputs("0-20", 200, 0, "test")
ids = [entry.encode(s) for s in test]
layers = min(prog.max_layers, max(len(s) for s in ids) + 2)
acc = {}
runs = (
    ("whole, exact attention", model, mlp),
    ("whole, other slots passed through, exact attention", model, Passthrough()),
    ("whole, tolerant attention", tolerant_attention(model), mlp),
)
for name, compiled, m in runs:
    outs = run_learned(compiled, m, ids, layers)
    acc[name] = float(
        np.mean([entry.decode(i, o) == entry.reference(s) for i, o, s in zip(ids, outs, test)])
    )
print(
    json.dumps(
        {
            "train_mse": loss,
            "max_abs_error_per_slot": per_slot,
            "written_dims": len(written),
            "width": model.layout.width,
            "accuracy_length_0_20": acc,
            "cpu_s": round(time.process_time() - t0, 1),
        }
    )
)
