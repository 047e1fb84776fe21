"""Trace supervision, whole MLP: how well does one training setting fit one program's traces,
and is the assembled model right in distribution?  Prints one JSON object: the number of
distinct pairs, the train MSE and the largest error per slot (in residual units, numerical
dims unscaled), accuracy on test inputs, CPU-s.

The learning-rate schedule (linear warm-up, then exponential decay to ``--decay`` times the
peak) is this probe's own, to see whether a decayed rate fits better; the package trains at
a constant rate. ``--scale`` is ``trace.numeric_scale``, ``--attention`` ``trace.attention``.

    python benchmarks/probes/trace_whole_fit.py --program parity_sum_mod_2_categorical \
        --layers 4 --hidden 256 --lr 1e-3 --steps 1500 --scale 1000 --train 300 --test 100
"""

import argparse
import json
import time

import numpy as np
import torch

from rasplab.analysis.trace_attention import tolerant_attention
from rasplab.analysis.trace_config import TraceConfig
from rasplab.analysis.trace_supervision import WholeMLP, mlp_pairs, run_learned
from rasplab.compiler import compile_program
from rasplab.programs import get_program

ap = argparse.ArgumentParser()
ap.add_argument("--program", default="parity_sequential_relative")
ap.add_argument("--steps", type=int, default=3000)
ap.add_argument("--lr", type=float, default=3e-3)
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--hidden", type=int, default=128)
ap.add_argument("--decay", type=float, default=1.0, help="final / peak learning rate")
ap.add_argument("--warmup", type=int, default=0)
ap.add_argument("--noise", type=float, default=0.1)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--attention", choices=["tolerant", "exact"], default="tolerant")
ap.add_argument("--train", type=int, default=1000)
ap.add_argument("--test", type=int, default=200)
ap.add_argument("--test-lengths", default="0-20")
a = ap.parse_args()

t0 = time.process_time()
torch.manual_seed(0)
entry = get_program(a.program)
prog = entry.program()
model = compile_program(prog)
if a.attention == "tolerant":
    model = tolerant_attention(model)
train, _ = entry.inputs("0-20", a.train, 0, "train")
x, y = mlp_pairs(prog, model.layout, [entry.encode(s) for s in train])
cfg = TraceConfig(hidden_layers=a.layers, hidden_size=a.hidden, numeric_scale=a.scale)
mlp = WholeMLP(model.layout, cfg)
xs = torch.tensor(x, dtype=torch.float32) * mlp.scale
ys = torch.tensor(y, dtype=torch.float32) * mlp.scale
opt = torch.optim.Adam(mlp.parameters(), lr=a.lr)
gen = torch.Generator().manual_seed(0)
for step in range(a.steps):
    warm = min(1.0, (step + 1) / a.warmup) if a.warmup else 1.0
    for group in opt.param_groups:
        group["lr"] = a.lr * warm * a.decay ** (step / a.steps)
    idx = torch.randint(0, len(xs), (256,), generator=gen)
    noisy = xs[idx] + torch.randn(256, xs.shape[1], generator=gen) * a.noise
    loss = ((mlp.net(noisy) - (ys[idx] - noisy)) ** 2).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
mlp.eval()
with torch.no_grad():
    err = ((xs + mlp.net(xs) - ys) / mlp.scale).abs().numpy()  # residual units
worst = {"one": float(err[:, 0].max())}
worst.update({s.name: float(err[:, s.start : s.stop].max()) for s in model.layout.slots})
test, _ = entry.inputs(a.test_lengths, a.test, 0, "test")
ids = [entry.encode(s) for s in test]
outs = run_learned(model, mlp, ids, min(prog.max_layers, max(len(s) for s in ids) + 2))
right = [entry.decode(i, o) == entry.reference(s) for i, o, s in zip(ids, outs, test)]
print(
    json.dumps(
        {
            "args": vars(a),
            "pairs": len(x),
            "train_mse": float((err**2).sum(1).mean()),
            "max_abs_error_per_slot": {k: round(v, 5) for k, v in worst.items()},
            "accuracy": float(np.mean(right)),
            "cpu_s": round(time.process_time() - t0, 1),
        }
    )
)
