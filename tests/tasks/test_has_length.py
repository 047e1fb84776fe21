"""``has_length`` across the whole registry: lengths below a task's minimum (zero and negative
ones included) and above its maximum are False, every family's own rule goes through the one
bound check of :class:`~rasplab.tasks.base.Task`, and a length it accepts can be sampled."""

from __future__ import annotations

import pytest

from rasplab.seeding import generator
from rasplab.tasks import get_task, task_names
from rasplab.tasks.base import Task


@pytest.mark.parametrize("name", task_names())
def test_lengths_outside_the_bounds_are_refused(name):
    task = get_task(name)
    for n in (-(10**6), -2, -1, task.min_length - 1):
        assert not task.has_length(n), (name, n)
    if task.max_length is not None:
        assert not task.has_length(task.max_length + 1)
    assert not task.has_length(float(task.min_length)) and not task.has_length(True)
    assert type(task).has_length is Task.has_length, "override allows_length instead"


@pytest.mark.parametrize("name", task_names())
def test_an_accepted_length_can_be_sampled_and_the_bins_agree(name):
    task = get_task(name)
    train = task.lengths(task.train_bin)
    for n in train[:2]:
        assert task.sample(generator(0, "has_length", name), n).length == n
    assert all(task.has_length(n) for n in train)
    hi = task.train_bin.hi if task.max_length is None else min(task.train_bin.hi, task.max_length)
    skipped = [n for n in range(task.train_bin.lo, hi + 1) if n not in train]
    assert not any(task.has_length(n) for n in skipped)
