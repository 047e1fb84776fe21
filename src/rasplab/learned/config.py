"""The typed configuration of one learned-program run: task, model shape, training, checks.

Every field has a default that trains ``rasp_hist`` in well under a minute; a wrong value
gets one message naming the field and what it accepts.

>>> LearnConfig(task="rasp_hist").layers
1
>>> LearnConfig(task="rasp_hist", layers=0)
Traceback (most recent call last):
...
rasplab.errors.RasplabError: learn.layers must be an integer >= 1; got 0
>>> LearnConfig(task="rasp_hist", bogus=1)
Traceback (most recent call last):
...
TypeError: LearnConfig.__init__() got an unexpected keyword argument 'bogus'
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from rasplab.errors import RasplabError
from rasplab.seeding import check_seed

POSITIVE = (
    "layers",
    "epochs",
    "batch_size",
    "reads",
    "verify_length",
    "train_n",
    "val_n",
    "test_n",
)
NON_NEGATIVE = (
    "cat_heads",
    "count_heads",
    "mlps",
    "width",
    "random_checks",
    "test_beyond",
    "test_per_length",
)
MAX_VERIFY_INPUTS = 1_000_000
"""The most inputs ``verify_length`` may enumerate (every input up to that length is kept in
memory and run through program and model)."""


@dataclass(frozen=True)
class LearnConfig:
    """One run: ``task`` (a registered RASP task) with ``task_options`` (``k``, ``max_len``);
    per layer ``cat_heads`` categorical heads, ``count_heads`` counting heads and ``mlps``
    lookup-table MLPs; ``width`` values per variable (0: the task's vocabulary or position
    count, whichever is larger); Adam at ``lr`` for ``epochs`` over ``train_n`` examples with
    the Gumbel temperature annealed geometrically from ``tau_start`` to ``tau_end``;
    ``seed`` draws the initial weights and the training noise, ``data_seed`` the datasets;
    verification exhaustive up to ``verify_length`` symbols plus ``random_checks`` random
    inputs up to twice the training length; with ``test_beyond`` > 0, accuracy at each of
    that many lengths past the training length (``test_per_length`` examples each)."""

    task: str
    task_options: dict = field(default_factory=dict)
    layers: int = 1
    cat_heads: int = 2
    count_heads: int = 2
    mlps: int = 2
    reads: int = 2
    width: int = 0
    epochs: int = 40
    batch_size: int = 256
    lr: float = 0.05
    tau_start: float = 3.0
    tau_end: float = 0.02
    seed: int = 0
    data_seed: int = 0
    train_n: int = 16000
    val_n: int = 2000
    test_n: int = 2000
    verify_length: int = 4
    random_checks: int = 500
    test_beyond: int = 0
    test_per_length: int = 200

    def __post_init__(self) -> None:
        for name in POSITIVE + NON_NEGATIVE:
            value, low = getattr(self, name), 1 if name in POSITIVE else 0
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                why = " (an accuracy on no examples is not measured)" if "_n" in name else ""
                raise RasplabError(f"learn.{name} must be an integer >= {low}{why}; got {value!r}")
        for name in ("seed", "data_seed"):
            check_seed(getattr(self, name), f"learn.{name}")
        if self.cat_heads + self.count_heads < 1:
            raise RasplabError("learn.cat_heads + learn.count_heads must be >= 1 per layer")
        if self.reads != 2:
            raise RasplabError(
                f"learn.reads must be 2 (each MLP reads two variables); got {self.reads}"
            )
        for name in ("lr", "tau_start", "tau_end"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise RasplabError(f"learn.{name} must be a finite number > 0; got {value!r}")
        if self.tau_end > self.tau_start:
            raise RasplabError(
                f"learn.tau_end ({self.tau_end}) must not exceed learn.tau_start ({self.tau_start})"
            )
        if not isinstance(self.task_options, dict):
            raise RasplabError("learn.task_options must be a mapping, e.g. {k: 6, max_len: 8}")

    def check_verify_length(self, symbols: int) -> None:
        """Refuse a ``verify_length`` whose inputs (``symbols`` per position) are too many to
        enumerate, before any training."""
        count = sum(symbols**n for n in range(1, self.verify_length + 1))
        if count > MAX_VERIFY_INPUTS:
            raise RasplabError(
                f"learn.verify_length {self.verify_length} means {count:,} inputs of "
                f"{symbols} symbols to check; at most {MAX_VERIFY_INPUTS:,} can be, so lower it"
            )

    def to_dict(self) -> dict:
        """Plain data (for ``config.json``)."""
        return dataclasses.asdict(self)


def config_from_dict(data: dict) -> LearnConfig:
    """A config from plain data; unknown keys are one clear error.

    >>> config_from_dict({"task": "rasp_sort", "layers": 2}).layers
    2
    >>> config_from_dict({"task": "rasp_sort", "layer": 2})
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: unknown learn key 'layer'; choose one of: batch_size, cat_heads, count_heads, data_seed, epochs, layers, lr, mlps, random_checks, reads, seed, task, task_options, tau_end, tau_start, test_beyond, test_n, test_per_length, train_n, val_n, verify_length, width
    """
    known = {f.name for f in dataclasses.fields(LearnConfig)}
    for key in data:
        if key not in known:
            raise RasplabError(
                f"unknown learn key {key!r}; choose one of: {', '.join(sorted(known))}"
            )
    if "task" not in data:
        raise RasplabError("learn config needs a task, e.g. task=rasp_hist")
    kwargs = dict(data)
    for f in dataclasses.fields(LearnConfig):
        if f.name in kwargs and f.type == "float" and isinstance(kwargs[f.name], (int, str)):
            try:
                kwargs[f.name] = float(kwargs[f.name])
            except ValueError as err:
                raise RasplabError(
                    f"learn.{f.name} must be a number; got {kwargs[f.name]!r}"
                ) from err
    return LearnConfig(**kwargs)
