"""Trace supervision: traced pairs equal the compiled residuals, the runner equals the
interpreter, a trained MLP plugged into the compiled model computes parity."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.analysis.trace_config import TraceConfig, load_trace_config
from rasplab.analysis.trace_supervision import (
    WholeMLP,
    mlp_pairs,
    run_learned,
    trace_supervise,
    train_mlp,
)
from rasplab.compiler import compile_program
from rasplab.errors import RasplabError
from rasplab.lang import input_var, program, var
from rasplab.programs import get_program
from rasplab.programs.base import LibraryProgram

PARITY = [
    "parity_sequential_relative",
    "parity_sequential_absolute",
    "parity_sum_mod_2_categorical",
]
TEXTS = ["", "1", "0 1", "1 1 0", "1 0 1 1", "0 0 1 1 1 0"]


class CompiledMLP(torch.nn.Module):
    """The compiled MLP as a module with the learned MLP's contract (residual in, out)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        self.model.mlp_(y)
        return y


def _compiled_pairs(model, ids) -> set:
    """(before MLP, after MLP) residual rows of the compiled model itself, every layer."""
    rows = set()
    for seq in ids:
        if not seq:
            continue
        lengths = torch.tensor([len(seq)])
        x = model.embed(torch.tensor([seq]), lengths)
        for _ in range(model.spec["max_layers"]):
            a = model.attend_(x.clone())
            m = a.clone()
            model.mlp_(m)
            for p in range(len(seq)):
                rows.add(tuple(np.round(np.concatenate([a[0, p], m[0, p]]).tolist(), 6)))
            x = m
            if model.halted(x, lengths).all():
                break
    return rows


@pytest.mark.parametrize("name", PARITY)
def test_traced_pairs_are_the_compiled_residuals(name):
    entry = get_program(name)
    prog = entry.program(max_length=8) if name != "parity_sequential_relative" else entry.program()
    model = compile_program(prog)
    ids = [entry.encode(t) for t in TEXTS]
    a, b = mlp_pairs(prog, model.layout, ids)
    traced = {tuple(np.round(np.concatenate([x, y]), 6).tolist()) for x, y in zip(a, b)}
    assert traced == _compiled_pairs(model, ids)


@pytest.mark.parametrize("name", PARITY)
def test_runner_with_the_compiled_mlp_matches_the_reference(name):
    entry = get_program(name)
    model = compile_program(entry.program())
    ids = [entry.encode(t) for t in TEXTS]
    outs = run_learned(model, CompiledMLP(model), ids, 12)
    assert [entry.decode(i, o) for i, o in zip(ids, outs)] == [entry.reference(t) for t in TEXTS]


def test_trained_mlp_computes_parity_at_every_length():
    # the narrower variant: only the written slots learned, buckets and head resets compiled
    cfg = TraceConfig(
        train_samples=200, test_samples=150, steps=1500, learning_rate=3e-3, mlp="written"
    )
    result = trace_supervise(get_program("parity_sequential_relative"), cfg)
    record = result.record()
    assert record["length_le_20"] == 1.0
    assert record["length_gt_20"] > 0.95 and record["ones_gt_20"] > 0.95
    assert record["mlp_train_loss"] < 0.01
    assert max(result.lengths) > 20 and len(result.correct) == 150


def test_whole_mlp_learns_the_whole_output_vector():
    # ALTA App. C.1: input vector -> output vector; nothing is reset or bucketed by compiled
    # parts, so the head outputs' return to zero must be learned too
    entry = get_program("parity_sequential_relative")
    model = compile_program(entry.program())
    train, _ = entry.inputs("0-20", 200, 0, "train")
    inputs, outputs = mlp_pairs(entry.program(), model.layout, [entry.encode(x) for x in train])
    cfg = TraceConfig(steps=1500, learning_rate=3e-3)
    assert cfg.mlp == "whole"
    mlp = WholeMLP(model.layout, cfg)
    train_mlp(mlp, inputs, outputs, cfg)
    with torch.no_grad():
        got = mlp(torch.tensor(inputs, dtype=torch.float32)).numpy()
    heads = [i for s in model.layout.slots if s.head for i in range(s.start, s.stop)]
    assert np.abs(inputs[:, heads]).max() > 0.4 and np.abs(outputs[:, heads]).max() == 0
    assert np.abs(got - outputs).max() < 0.15
    assert np.abs(got[:, heads]).max() < 0.15


def test_program_without_rules_is_refused():
    p = program({"tok": input_var(2), "out": var(2)}, {}, [], "out", 2, max_layers=1)
    entry = LibraryProgram(
        "norules",
        "",
        lambda: p,
        lambda s: [int(c) for c in s.split()],
        lambda i, o: [str(v) for v in o],
        lambda s: ["0"],
        lambda rng, n: "0 " * n,
    )
    with pytest.raises(RasplabError, match="no MLP to learn"):
        trace_supervise(entry, TraceConfig(steps=1))


def test_config_rejects_bad_values_and_keys(tmp_path):
    with pytest.raises(RasplabError, match="steps must be > 0"):
        TraceConfig(steps=0)
    with pytest.raises(RasplabError, match="unknown trace config key 'width'"):
        load_trace_config(None, {"width": 3})
    path = tmp_path / "c.yaml"
    path.write_text("steps: 7\nhidden_layers: 4\n")
    assert (load_trace_config(path).steps, load_trace_config(path).hidden_layers) == (7, 4)
