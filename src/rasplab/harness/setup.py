"""Set up a run from its config: task, bins, splits, encoder, position table and the model.

:func:`prepare_run` is what :func:`~rasplab.harness.train.train` starts with;
:func:`load_run` rebuilds the same objects from a finished run folder (its ``config.yaml``
and ``model.safetensors``), for evaluating a trained model elsewhere.

The position table: ``P`` positions fit the longest sequence of every bin and named split
(seed 003: "as many positional encodings as needed to encode the longest inputs"; a split
counts with the bin ``task.dataset`` draws it from, ``task.default_bin``). APE training
draws the offset ``o`` of each example uniformly in ``[0, P - len]``; a batch is
right-padded, so a short example at a large offset has padding positions past ``P``. The
table has exactly ``P`` rows (``build_model(..., max_positions=P)``); those padding positions
read its last row (``LearnedAbsolute.embed`` clamps them), are masked and never scored, and a
real token past ``P`` is an error.
With packed training batches (``train.pack_tokens``, :func:`check_packing`) ``P`` covers
``pack_tokens`` as well, and a packed row gets one offset like a single example.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import torch

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.harness.checkpoint import load_checkpoint
from rasplab.harness.config import ExperimentConfig, TrainConfig, load_config
from rasplab.harness.encoding import Encoder
from rasplab.models import build_model
from rasplab.tasks import get_task, task_factory, task_names

CHECKPOINT = "checkpoint.safetensors"
FINAL = "model.safetensors"


@dataclass
class RunSetup:
    """Everything a run needs before its first step."""

    task: object
    encoder: Encoder
    train_bin: Bin
    test_bins: list
    id_bins: list
    positions: int  # P: positions of the longest sequence of any bin or split
    offsets: bool  # APE-style random training offsets
    model: torch.nn.Module
    test_splits: list = field(default_factory=list)  # named test splits (eval.splits)
    slices: tuple = ()  # per-example attributes each test set is broken down by (eval.slices)


def build_task(config: ExperimentConfig):
    """The task of ``config`` with its options; a rejected option is a RasplabError."""
    try:
        return get_task(config.task, **config.task_options)
    except TypeError as err:
        raise RasplabError(f"task_options for task {config.task!r} rejected: {err}") from err


def run_bins(config: ExperimentConfig, task) -> tuple[Bin, list[Bin]]:
    """The training bin and the test bins of a run (config overrides, else the task's)."""
    train_bin = Bin.parse(config.train.bin) if config.train.bin else task.train_bin
    test_bins = (
        [Bin.parse(b) for b in config.eval.bins] if config.eval.bins else list(task.test_bins)
    )
    for b in [train_bin, *test_bins]:
        task.lengths(b)  # raises a RasplabError naming the task when the bin is empty
    return train_bin, test_bins


#: split names every task accepts that are not test sets of their own: the training
#: distribution and the harness's binned test sets (``eval.bins``)
HARNESS_SPLITS = ("train", "test")


def run_splits(config: ExperimentConfig, task, test_bins: list[Bin]) -> list[str]:
    """The named test splits of a run (``eval.splits``), checked against the task's splits.

    >>> from rasplab.harness.config import EvalConfig
    >>> from rasplab.tasks import get_task
    >>> ptg = get_task("ptg", scale="cpu")
    >>> run_splits(ExperimentConfig(task="ptg", eval=EvalConfig(splits=["id_short"])), ptg, [])
    ['id_short']
    >>> bad = ExperimentConfig(task="ptg", eval=EvalConfig(splits=["test"]))
    >>> run_splits(bad, ptg, [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: eval.splits cannot name 'test' (... set eval.bins); task ...
    """
    names = list(config.eval.splits or ())
    allowed = [s for s in task.splits if s not in HARNESS_SPLITS]
    has = (
        f"task {config.task!r} has: {', '.join(sorted(allowed))}"
        if allowed
        else f"task {config.task!r} has no named test splits; leave eval.splits out"
    )
    bins = {str(b) for b in test_bins}
    for name in names:
        if name in HARNESS_SPLITS:
            what = {
                "train": "training distribution: set train.bin",
                "test": "harness's own test bins: set eval.bins",
            }[name]
            raise RasplabError(f"eval.splits cannot name {name!r} (the {what}); {has}")
        if not allowed:
            raise RasplabError(f"eval.splits names {name!r}, but {has}")
        if name not in allowed:
            raise unknown_name(f"eval.splits name for task {config.task!r}", name, allowed)
        if name in bins:
            raise RasplabError(
                f"eval.splits name {name!r} is also the name of a test bin; "
                "give the bins and the splits different names"
            )
    return names


def run_slices(config: ExperimentConfig, task) -> tuple[str, ...]:
    """The slices of a run (``eval.slices``), checked against the task's ``slices``.

    >>> from rasplab.harness.config import EvalConfig
    >>> from rasplab.tasks import get_task
    >>> run_slices(ExperimentConfig(task="parity", eval=EvalConfig(slices=["ones"])),
    ...            get_task("parity"))
    ('ones',)
    >>> bad = ExperimentConfig(task="tomita2", eval=EvalConfig(slices=["ones"]))
    >>> run_slices(bad, get_task("tomita2"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: unknown eval.slices name for task 'tomita2' 'ones'; ...
    """
    names = tuple(config.eval.slices or ())
    for name in names:
        if name not in task.slices:
            raise unknown_name(f"eval.slices name for task {config.task!r}", name, task.slices)
    return names


def in_distribution(train_bin: Bin, test_bins: list[Bin]) -> list[str]:
    """Names of the test bins inside the training bin (else overlapping it, else the first).

    >>> in_distribution(Bin(1, 50), [Bin(1, 50), Bin(51, 100)])
    ['1-50']
    """
    inside = [b for b in test_bins if train_bin.lo <= b.lo and b.hi <= train_bin.hi]
    overlap = [b for b in test_bins if b.lo <= train_bin.hi and train_bin.lo <= b.hi]
    return [str(b) for b in (inside or overlap or test_bins[:1])]


def max_positions(task, bins: list[Bin], splits=()) -> int:
    """Position-table size P: enough for the longest sequence of any bin or named split."""
    bins = [*bins, *(task.default_bin(s) for s in splits)]
    return max(task.max_tokens(max(task.lengths(b))) for b in bins)


def resolve_device(name: str) -> torch.device:
    """The torch device of ``train.device`` (``auto``: CUDA when available, else CPU)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RasplabError(
            f"train.device={name!r} but no CUDA device is available; use cpu or auto"
        )
    return torch.device(name)


def available_cpus() -> int:
    """CPU cores this process may use: its affinity set, capped by ``OMP_NUM_THREADS`` when
    that is set to a positive integer (a user's or a CI's explicit limit)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cap = os.environ.get("OMP_NUM_THREADS", "")
    cpus = cpus or 1
    return min(cpus, int(cap)) if cap.isdigit() and int(cap) > 0 else cpus


def run_threads(cfg: TrainConfig) -> int:
    """Threads of a run: ``train.threads`` when set, else every :func:`available_cpus` (a
    sweep sets ``train.threads`` to the cores divided among its workers).

    >>> run_threads(TrainConfig(threads=3))
    3
    """
    return cfg.threads if cfg.threads is not None else available_cpus()


def check_encodable(config: ExperimentConfig, encoder: Encoder) -> None:
    """Reject model/task combinations the encoding cannot train honestly."""
    if not getattr(config.model, "causal", True) and encoder.kind in ("answer", "next_set"):
        raise RasplabError(
            f"model.causal=false cannot train task {config.task!r} ({encoder.kind} targets are "
            "next-token predictions; a non-causal model would see them); set model.causal=true"
        )


def packing_tasks() -> list[str]:
    """The registered tasks whose class has a ``pack`` method (for ``train.pack_tokens``).

    >>> "ptg" in packing_tasks()
    True
    """
    return [n for n in task_names() if callable(getattr(task_factory(n), "pack", None))]


def check_packing(config: ExperimentConfig, task, train_bin: Bin) -> None:
    """Reject ``train.pack_tokens`` a run cannot use: a task without ``pack``, a non-causal
    model, or rows shorter than the longest training example (``task.max_tokens``).

    >>> from rasplab.harness.config import TrainConfig
    >>> from rasplab.tasks import get_task
    >>> ptg = get_task("ptg", scale="cpu")
    >>> check_packing(ExperimentConfig(task="ptg", train=TrainConfig(pack_tokens=2048)),
    ...               ptg, ptg.train_bin)
    >>> short = ExperimentConfig(task="ptg", train=TrainConfig(pack_tokens=512))
    >>> check_packing(short, ptg, ptg.train_bin)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: train.pack_tokens=512 is below the longest training example ...
    """
    n = config.train.pack_tokens
    if not n:
        return
    if not callable(getattr(task, "pack", None)):
        raise RasplabError(
            f"train.pack_tokens={n} needs a task that packs examples, but task {config.task!r} "
            f"has no pack method (tasks that do: {', '.join(packing_tasks())}); "
            "leave train.pack_tokens at 0"
        )
    if not getattr(config.model, "causal", True):
        raise RasplabError(
            f"train.pack_tokens={n} needs a causal model (in encoder mode packed examples would "
            "attend to each other's later tokens); set model.causal=true or train.pack_tokens=0"
        )
    longest = task.max_tokens(max(task.lengths(train_bin)))
    if n < longest:
        raise RasplabError(
            f"train.pack_tokens={n} is below the longest training example of task "
            f"{config.task!r} ({longest} tokens in bin {train_bin}); "
            f"set train.pack_tokens >= {longest}"
        )


def prepare_run(config: ExperimentConfig) -> RunSetup:
    """Validate a run's config and build its task, encoder and freshly initialised model."""
    task = build_task(config)
    train_bin, test_bins = run_bins(config, task)
    splits = run_splits(config, task, test_bins)
    slices = run_slices(config, task)
    encoder = Encoder(task)
    check_packing(config, task, train_bin)
    check_encodable(config, encoder)
    P = max(max_positions(task, [train_bin, *test_bins], splits), config.train.pack_tokens)
    offsets = config.train.random_offset
    if offsets is None:
        offsets = config.model.pe == "ape"
    device = resolve_device(config.train.device)
    model = build_model(config.model, encoder.vocab_size, encoder.num_outputs, P, seed=config.seed)
    return RunSetup(
        task=task, encoder=encoder, train_bin=train_bin, test_bins=test_bins,
        id_bins=in_distribution(train_bin, test_bins), positions=P, offsets=bool(offsets),
        model=model.to(device), test_splits=splits, slices=slices,
    )  # fmt: skip


def load_run(run_dir: str | Path) -> tuple[ExperimentConfig, RunSetup]:
    """The config and set-up of a finished run folder, with its trained weights (eval mode)."""
    path = Path(run_dir)
    if not (path / FINAL).is_file():
        raise RasplabError(f"{str(path)!r} holds no finished run ({FINAL} is missing)")
    config = load_config(path / "config.yaml")
    setup = prepare_run(config)
    load_checkpoint(path / FINAL, setup.model)
    setup.model.eval()
    return config, setup
