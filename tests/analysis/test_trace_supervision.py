"""Trace supervision: traced pairs equal the compiled residuals, the runner equals the
interpreter, a trained MLP plugged into the compiled model computes parity."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.analysis.trace_attention import tolerant_attention
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


@pytest.mark.parametrize("attention", ["exact", "tolerant"])
@pytest.mark.parametrize("name", PARITY)
def test_runner_with_the_compiled_mlp_matches_the_reference(name, attention):
    entry = get_program(name)
    model = compile_program(entry.program())
    if attention == "tolerant":
        model = tolerant_attention(model)
    texts = [*TEXTS, " ".join("1" if i % 3 else "0" for i in range(31))]
    ids = [entry.encode(t) for t in texts]
    outs = run_learned(model, CompiledMLP(model), ids, 34)
    assert [entry.decode(i, o) for i, o in zip(ids, outs)] == [entry.reference(t) for t in texts]


@pytest.mark.parametrize("name", PARITY)
def test_tolerant_attention_writes_the_exact_head_vectors(name):
    # every layer of the compiled run: same residual after attention, to float precision
    entry = get_program(name)
    exact = compile_program(entry.program())
    tolerant = tolerant_attention(exact)
    for text in [*TEXTS[1:], "1 0 0 1 1 0 1 0 1 1 1 0"]:
        seq = entry.encode(text)
        x = exact.embed(torch.tensor([seq], dtype=torch.long), torch.tensor([len(seq)]))
        for _ in range(len(seq) + 1):
            a = exact.attend_(x.clone())
            assert torch.allclose(tolerant.attend_(x.clone()), a, atol=1e-6)
            exact.mlp_(a)
            x = a


def test_tolerant_attention_ignores_small_query_key_errors_that_move_the_exact_one():
    exact = compile_program(get_program("parity_sequential_absolute").program())
    tolerant = tolerant_attention(exact)
    x = exact.embed(torch.tensor([[1, 0, 1, 1]]), torch.tensor([4]))
    noisy = x + 0.01 * torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    heads = [i for s in exact.layout.slots if s.head for i in range(s.start, s.stop)]
    clean = exact.attend_(x.clone())[..., heads]
    assert (tolerant.attend_(noisy.clone())[..., heads] - clean).abs().max() < 0.05
    assert (exact.attend_(noisy.clone())[..., heads] - clean).abs().max() > 0.2


def test_whole_mlp_scales_numerical_dims_only():
    layout = compile_program(get_program("parity_sum_mod_2_categorical").program()).layout
    mlp = WholeMLP(layout, TraceConfig(hidden_layers=1, hidden_size=8, numeric_scale=1000))
    numeric = {s.start for s in layout.slots if s.kind == "numerical"}
    assert numeric and {int(i) for i in torch.nonzero(mlp.scale != 1)} == numeric
    assert float(mlp.scale.max()) == 1000.0
    x = torch.rand(5, layout.width)
    with torch.no_grad():
        want = x + mlp.net(x * mlp.scale) / mlp.scale
        assert torch.allclose(mlp(x), want)


def test_whole_mlp_fits_the_relative_program_in_distribution():
    # ALTA's setup: the whole MLP learned, run with attention that small errors do not move
    cfg = TraceConfig(train_samples=200, test_samples=120, steps=1500, learning_rate=3e-3)
    assert (cfg.mlp, cfg.attention) == ("whole", "tolerant")
    record = trace_supervise(get_program("parity_sequential_relative"), cfg).record()
    assert record["length_le_20"] == 1.0 and record["length_gt_20"] > 0.95


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
    with pytest.raises(RasplabError, match="numeric_scale must be > 0"):
        TraceConfig(numeric_scale=0)
    with pytest.raises(RasplabError, match="attention must be one of tolerant, exact"):
        TraceConfig(attention="soft")
    with pytest.raises(RasplabError, match="unknown trace config key 'width'"):
        load_trace_config(None, {"width": 3})
    path = tmp_path / "c.yaml"
    path.write_text("steps: 7\nhidden_layers: 4\n")
    assert (load_trace_config(path).steps, load_trace_config(path).hidden_layers) == (7, 4)


def test_tolerant_attention_is_refused_where_a_head_selects_several_positions():
    """sort_unique's categorical heads select more than one position on its own inputs: the
    tolerant attention would read a mean where the traces say "undefined", so it is refused
    (before any training) and the exact attention named."""
    config = TraceConfig(train_lengths="1-6", test_lengths="1-8", train_samples=8, steps=1)
    with pytest.raises(RasplabError, match="'sort_unique' reads at layer 0.*attention: exact"):
        trace_supervise(get_program("sort_unique"), config)
