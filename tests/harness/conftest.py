"""Tiny tasks of every target kind for the harness tests (registered once per process)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.bins import Bin
from rasplab.tasks import Example, Task, register, task_names


class ToyMajority(Task):
    """Answer task: the majority bit of an odd-length bit string (``<bos> x <sep> m <eos>``)."""

    name = "toy_majority"
    description = "toy answer task: the majority bit"
    vocab = ("<pad>", "<bos>", "<sep>", "<eos>", "0", "1")
    target_kind = "answer"
    train_bin = Bin(1, 9)
    test_bins = (Bin(1, 9), Bin(10, 16))

    def allows_length(self, length: int) -> bool:
        return length % 2 == 1

    def max_tokens(self, length):
        return length + 4

    def sample(self, rng, length):
        bits = [str(b) for b in rng.integers(0, 2, length)]
        answer = "1" if bits.count("1") * 2 > length else "0"
        tokens = ("<bos>", *bits, "<sep>", answer, "<eos>")
        targets = (None,) * (length + 1) + (answer, "<eos>", None)
        return Example(tokens, targets, length)


class ToyCopy(Task):
    """Answer task with a multi-token answer: copy the bits (``<bos> x <sep> x <eos>``)."""

    name = "toy_copy"
    description = "toy answer task: copy the input"
    vocab = ("<pad>", "<bos>", "<sep>", "<eos>", "0", "1")
    target_kind = "answer"
    train_bin = Bin(1, 5)
    test_bins = (Bin(1, 5), Bin(6, 8))

    def max_tokens(self, length):
        return 2 * length + 3

    def sample(self, rng, length):
        bits = tuple(str(b) for b in rng.integers(0, 2, length))
        tokens = ("<bos>", *bits, "<sep>", *bits, "<eos>")
        targets = (None,) * (length + 1) + (*bits, "<eos>", None)
        return Example(tokens, targets, length)


class ToyPrefixParity(Task):
    """Labels task: at each bit, the parity of the bits so far (``<bos>`` is filler)."""

    name = "toy_prefix_parity"
    description = "toy labels task: parity of each prefix"
    vocab = ("<pad>", "<bos>", "0", "1")
    target_kind = "labels"
    train_bin = Bin(1, 6)
    test_bins = (Bin(1, 6), Bin(7, 10))

    @property
    def classes(self):
        return ("even", "odd")

    def max_tokens(self, length):
        return length + 1

    def sample(self, rng, length):
        bits = [int(b) for b in rng.integers(0, 2, length)]
        labels = tuple("odd" if sum(bits[: i + 1]) % 2 else "even" for i in range(length))
        return Example(("<bos>", *map(str, bits)), (None, *labels), length)


class ToyNextSet(Task):
    """Next-set task: strings a^n; after each prefix the legal next symbols are {a, <eos>}."""

    name = "toy_next_set"
    description = "toy next-symbol-set task"
    vocab = ("<pad>", "<bos>", "<eos>", "a")
    target_kind = "next_set"
    train_bin = Bin(1, 5)
    test_bins = (Bin(1, 5), Bin(6, 8))

    @property
    def classes(self):
        return (("<eos>", "a"), ("a",))

    def sample(self, rng, length):
        tokens = ("<bos>", *["a"] * length, "<eos>")
        targets = (("<eos>", "a"),) * (length + 1) + (None,)
        return Example(tokens, targets, length)


class ToyMean(Task):
    """Regression task: after each bit, the mean of the bits so far."""

    name = "toy_mean"
    description = "toy regression task: running mean"
    vocab = ("<pad>", "<bos>", "0", "1")
    target_kind = "regression"
    train_bin = Bin(1, 6)
    test_bins = (Bin(1, 6), Bin(7, 9))

    def max_tokens(self, length):
        return length + 1

    def sample(self, rng, length):
        bits = [int(b) for b in rng.integers(0, 2, length)]
        means = tuple(float(np.mean(bits[: i + 1])) for i in range(length))
        return Example(("<bos>", *map(str, bits)), (None, *means), length)


for _cls in (ToyMajority, ToyCopy, ToyPrefixParity, ToyNextSet, ToyMean):
    if _cls.name not in task_names():
        register(_cls.name)(_cls)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tests run single-threaded (a shared 2-core machine)."""
    torch.set_num_threads(1)


TINY = {
    "task": "toy_majority",
    "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 8},
    "train": {"steps": 6, "batch_size": 8, "eval_every": 3, "lr": 0.01},
    "eval": {"size": 24, "batch_size": 16},
}


@pytest.fixture
def tiny():
    """Plain data of a tiny experiment config (copy it before changing)."""
    import copy

    return copy.deepcopy(TINY)
