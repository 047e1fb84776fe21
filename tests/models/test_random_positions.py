"""Randomized positional encodings against a reference written from Ruoss et al. (2023):
positions are an ordered uniform random subset of a range L much longer than the sequence,
and the encoding of a position is the base table's vector at that position."""

from __future__ import annotations

import math
import random

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.models import build_model
from rasplab.models.config import ModelConfig
from rasplab.models.random_positions import RandomLearned, RandomSinusoidal


def floyd_sample(length: int, total: int, rng: random.Random) -> list[int]:
    """Floyd's algorithm: for j = L-T .. L-1 add a uniform t in 0..j, or j if t is taken; the
    set is a uniform T-subset of 0..L-1, returned in increasing order."""
    chosen: set[int] = set()
    for j in range(total - length, total):
        t = rng.randint(0, j)
        chosen.add(j if t in chosen else t)
    return sorted(chosen)


def sin_cos(position: int, width: int) -> list[float]:
    """The Vaswani et al. vector of one position, written out: sin in even, cos in odd columns."""
    out = []
    for j in range(width):
        angle = position / 10000 ** ((j - j % 2) / width)
        out.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
    return out


def _pe(cls, width=8):
    return cls(ModelConfig(pe="random_sin", width=width, heads=2), max_positions=64)


def test_positions_are_a_uniform_ordered_subset_like_the_reference():
    pe = _pe(RandomSinusoidal)
    total, length, draws = pe.range, 6, 3000
    ours = torch.zeros(total)
    ref = torch.zeros(total)
    g1, g2 = torch.Generator().manual_seed(1), random.Random(2)
    first_ours, first_ref = 0.0, 0.0
    for _ in range(draws):
        pos = pe.positions(length, g1).tolist()
        assert pos == sorted(set(pos)) and len(pos) == length and pos[-1] < total
        ours[pos] += 1
        first_ours += pos[0]
        r = floyd_sample(length, total, g2)
        ref[r] += 1
        first_ref += r[0]
    # both draw every position with probability length / total: compare coarse histograms
    bins = 8
    h_ours = ours.view(bins, -1).sum(1) / (draws * length)
    h_ref = ref.view(bins, -1).sum(1) / (draws * length)
    assert torch.allclose(h_ours, torch.full((bins,), 1 / bins), atol=0.02)
    assert torch.allclose(h_ours, h_ref, atol=0.03)
    # the smallest of 6 uniform positions has mean about (L + 1) / 7 - 1
    expected = (total + 1) / (length + 1) - 1
    assert abs(first_ours / draws - expected) < 0.06 * expected
    assert abs(first_ref / draws - expected) < 0.06 * expected


def test_embeddings_are_the_base_tables_at_the_drawn_positions():
    sin = _pe(RandomSinusoidal).eval()
    like = torch.zeros(2, 5, 8)
    vecs = sin.embed(like, None)[0]  # [T, D]
    pos = sin.draw(5).tolist()  # eval: the same seeded draw again
    scale = 0.02 * math.sqrt(2.0)
    want = torch.tensor([sin_cos(p, 8) for p in pos]) * scale
    assert torch.allclose(vecs, want, atol=1e-6)
    ape = _pe(RandomLearned).eval()
    vecs = ape.embed(like, None)[0]
    assert torch.equal(vecs, ape.table.weight[ape.draw(5)])


def test_training_draws_change_and_follow_the_global_seed():
    pe = _pe(RandomSinusoidal).train()
    torch.manual_seed(7)
    a = pe.draw(10)
    b = pe.draw(10)
    torch.manual_seed(7)
    assert torch.equal(pe.draw(10), a) and not torch.equal(a, b)
    pe.eval()
    assert torch.equal(pe.draw(10), pe.draw(10))


@pytest.mark.parametrize("name", ["random_sin", "random_ape"])
def test_models_build_and_run_with_either_variant(name):
    model = build_model(ModelConfig(pe=name, width=16, heads=2, layers=1), 7, 4, max_positions=50)
    out = model(torch.tensor([[1, 2, 3, 4, 5]]))
    assert out.shape == (1, 5, 4) and torch.isfinite(out).all()
    with pytest.raises(RasplabError, match="randomized positions"):
        model.pe.positions(model.pe.range + 1)
