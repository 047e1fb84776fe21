"""The fast forward of the discrete transformer against the direct einsum formulation of
the paper's §3 (:mod:`rasplab.learned.reference`): same parameters and Gumbel draws give
the same relaxed logits up to float rounding, the same discretised model exactly, and a
few training steps end at the same weights and validation scores."""

from __future__ import annotations

import pytest
import torch

from rasplab.learned import LearnConfig, build
from rasplab.learned.data import encode
from rasplab.learned.reference import ReferenceTransformer
from rasplab.learned.train import train

SHAPES = [
    ("rasp_sort", dict(layers=2, cat_heads=2, count_heads=2, mlps=2), 2),
    ("rasp_dyck1", dict(layers=2, cat_heads=2, count_heads=1, mlps=1), 1),
    ("rasp_hist", dict(layers=1, cat_heads=0, count_heads=1, mlps=0), 1),
    ("rasp_hist", dict(layers=2, cat_heads=1, count_heads=0, mlps=2), 3),
]


def _pair(task_name: str, shape: dict, seeds: int):
    """A fast model with perturbed weights (so no choice is a tie) and a reference copy."""
    task, fast = build(LearnConfig(task=task_name, **shape), seeds=tuple(range(seeds)))
    noise = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in fast.parameters():
            p.add_(torch.randn(p.shape, generator=noise))
    ref = ReferenceTransformer(fast.shape, fast.seeds)
    ref.load_state_dict(fast.state_dict())
    batch = encode(task.dataset("train", n=40, seed=0), task.vocab, task.classes)
    return task, fast, ref, batch


@pytest.mark.parametrize("task_name,shape,seeds", SHAPES)
def test_relaxed_forward_matches_the_einsum_formulation(task_name, shape, seeds):
    _, fast, ref, batch = _pair(task_name, shape, seeds)
    g_fast, g_ref = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    out = fast(batch.ids, batch.mask, tau=0.5, gen=g_fast)
    want = ref(batch.ids, batch.mask, tau=0.5, gen=g_ref)
    assert out.shape == want.shape == (seeds, *batch.ids.shape, len(fast.shape.classes))
    assert torch.allclose(out, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(g_fast.get_state(), g_ref.get_state())  # the same draws, in order
    grads = torch.autograd.grad(out.square().sum(), list(fast.parameters()), allow_unused=True)
    want_grads = torch.autograd.grad(want.square().sum(), list(ref.parameters()), allow_unused=True)
    scale = torch.cat([g.flatten() for g in want_grads if g is not None]).norm()
    for got, expected in zip(grads, want_grads):  # unused: the value sets of categorical heads
        assert (got is None) == (expected is None)
        if got is not None:  # float32 sums in another order: rounding relative to the sums
            assert (got - expected).norm() <= 1e-5 * scale


@pytest.mark.parametrize("task_name,shape,seeds", SHAPES)
def test_discretised_model_and_stream_are_identical(task_name, shape, seeds):
    _, fast, ref, batch = _pair(task_name, shape, seeds)
    assert torch.equal(
        fast(batch.ids, batch.mask, hard=True), ref(batch.ids, batch.mask, hard=True)
    )
    stream = fast.stream(batch.ids, batch.mask)
    assert stream.shape[3] == fast.num_variables
    assert torch.equal(stream, ref.stream(batch.ids, batch.mask))


def test_a_few_training_epochs_end_at_the_same_weights_and_scores():
    config = LearnConfig(task="rasp_sort", layers=2, cat_heads=2, count_heads=2, mlps=2,
                         epochs=3, batch_size=64, train_n=192)  # fmt: skip
    task, fast = build(config, seeds=(0, 1))
    ref = ReferenceTransformer(fast.shape, fast.seeds)
    ref.load_state_dict(fast.state_dict())
    data = encode(task.dataset("train", n=192, seed=0), task.vocab, task.classes)
    val = encode(task.dataset("val", n=100, seed=0), task.vocab, task.classes)
    got, want = train(fast, data, val, config), train(ref, data, val, config)
    for a, b in zip(got.history, want.history):
        assert a["val"] == b["val"] and a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    assert got.best_epochs == want.best_epochs
    for a, b in zip(fast.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-3)
