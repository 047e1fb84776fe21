"""The ``ptg`` task: program trace generation (seed 000) behind the common Task protocol.

An example's tokens are the numbered program, the call and the trace; its targets mark the
trace tokens only (``target_kind`` ``"answer"``), and its length is the number of trace steps.

* Training (:meth:`PTGTask.draw_lengths` then :meth:`PTGTask.sample`) follows Table 3: one of
  the 13 trace-step bins of ``train_short`` and ``train_mid`` uniformly, then a length
  uniformly in it, then the split that bin came from.
* ``dataset(NAME)`` builds any of the nine named splits; ``"train"`` is the training mixture
  and ``"test"`` at bin ``A-B`` is the mid-program distribution with trace steps in ``A-B``,
  so the harness's length bins are the trace-steps factor: its default test bins
  ``90-103``, ``121-142`` and ``172-300`` are exactly ``id_mid``, ``longer_traces_1`` and
  ``longer_traces_2``.
* Option ``scale="cpu"`` swaps in the CPU-sized split table (``splits.CPU``).
* The task's lengths are the trace-step counts its program shapes reach (``plan.Reach``):
  the training splits' own, and every count of the mid programs, which a length outside the
  training bins is drawn from. Any other length (3 at paper scale, below ``min_length``) is
  refused with one line. ``max_length`` is the most steps a shape has; near it the
  4,096-token limit may still leave no program.

>>> task = PTGTask()
>>> ex = task.dataset("id_short", n=1, seed=0)[0]
>>> rec = task.record(ex)
>>> (rec["split"], rec["steps"] == ex.length, 59 <= ex.length <= 79, rec["first_line"])
('id_short', True, True, 1)
>>> sep = ex.tokens.index("<sep>")
>>> ex.targets[sep] == ex.tokens[sep + 1] and set(ex.targets[:sep]) == {None}
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.seeding import generator
from rasplab.tasks.base import Example, Task, register
from rasplab.tasks.ptg import splits as S
from rasplab.tasks.ptg.draws import Draws
from rasplab.tasks.ptg.knobs import Knobs
from rasplab.tasks.ptg.program import Instance
from rasplab.tasks.ptg.tokens import SEQUENCE_TOKENS, VOCAB, encode, pack

DEFAULT_SIZE = 2000
#: the split whose programs the harness's ``test`` bins use (trace steps vary)
TEST_BASE = "id_mid"


@dataclass(frozen=True)
class PTGExample(Example):
    """A PTG example: the tokenized instance, plus the instance and its split name."""

    instance: Instance
    split: str


def make_example(inst: Instance, split: str) -> PTGExample:
    """Tokenize an instance into an example of ``split``."""
    tokens, targets = encode(inst)
    return PTGExample(tokens, targets, len(inst.trace), inst, split)


@register("ptg")
class PTGTask(Task):
    """Program trace generation: write the line-by-line execution trace of a Python function."""

    name = "ptg"
    description = "program trace generation (seed 000): trace a synthetic Python function"
    vocab = VOCAB
    target_kind = "answer"
    splits = ("train", "test", *S.SPLIT_NAMES)

    def __init__(self, scale: str = "paper") -> None:
        if scale not in S.TABLES:
            raise unknown_name("ptg option scale", scale, S.SCALES)
        self.scale = scale
        self.table = S.TABLES[scale]
        self.train_splits = [s for s in self.table.values() if s.train]
        self.bins = [(s, b) for s in self.train_splits for b in s.bins]  # Table 3's 13 bins
        self.train_bin = Bin(min(b.lo for _, b in self.bins), max(b.hi for _, b in self.bins))
        # the trace-step counts each training split can produce (a few isolated ones cannot)
        self.feasible = {
            s.name: _feasible_steps(s.knobs) & set(s.knobs.steps.lengths())
            for s in self.train_splits
        }
        # a length outside the training bins is sampled from the mid programs at any steps,
        # so the task's lengths are those plus every count the mid programs' shapes reach
        self.reachable = frozenset(
            _feasible_steps(self.train_splits[-1].knobs).union(*self.feasible.values())
        )
        self.min_length, self.max_length = min(self.reachable), max(self.reachable)
        self.bin_steps = [
            [n for n in b.lengths() if n in self.feasible[s.name]] for s, b in self.bins
        ]
        base = self.table[TEST_BASE].knobs
        self.test_bins = tuple(
            s.knobs.steps
            for s in self.table.values()
            if not s.train and s.knobs.replace(steps=base.steps) == base
        )
        self.limit = base.max_tokens

    def allows_length(self, length: int) -> bool:
        """Whether some program the task samples has exactly ``length`` trace steps.

        >>> task = PTGTask()
        >>> task.min_length, task.has_length(task.min_length), task.has_length(3)
        (4, True, False)
        """
        return length in self.reachable

    # -- training ------------------------------------------------------------------
    def draw_lengths(self, rng: np.random.Generator, bin: Bin | str, n: int) -> np.ndarray:
        """``n`` trace-step counts: a Table 3 bin uniformly (clipped to ``bin``), then uniform."""
        bin = Bin.parse(bin)
        bins = [[k for k in ks if k in bin] for ks in self.bin_steps]
        bins = [ks for ks in bins if ks]
        if not bins:
            raise RasplabError(
                f"task 'ptg' has no training programs with trace steps in {bin}; "
                f"the training bins cover {self.train_bin}"
            )
        pick = rng.integers(len(bins), size=n)
        at = rng.random(n)
        return np.array([bins[i][int(u * len(bins[i]))] for i, u in zip(pick, at)], dtype=np.int64)

    def sample(self, rng: np.random.Generator, length: int) -> PTGExample:
        """A training example with exactly ``length`` trace steps.

        The split (short or mid programs) is drawn with the probability Table 3's mixture gives
        it at this length; a length outside every training bin uses the mid programs.
        """
        length = int(length)
        if not self.has_length(length):
            self.lengths(Bin(length, length))  # the one-line refusal of a length with no programs
        draws = Draws(rng)
        weights = [0.0] * len(self.train_splits)
        for (s, _), ks in zip(self.bins, self.bin_steps):
            if length in ks:
                weights[self.train_splits.index(s)] += 1 / len(ks)
        steps = Bin(length, length)
        if sum(weights) == 0:  # outside the training bins: mid programs, if any can do it
            split = self.train_splits[-1]
            knobs = split.knobs.replace(steps=steps)
        else:
            u = draws.random() * sum(weights)
            split = self.train_splits[-1]
            for s, w in zip(self.train_splits, weights):
                u -= w
                if u < 0:
                    split = s
                    break
            knobs = split.knobs
        inst = S.sample(draws, knobs, steps, want="train", augment=True)
        return make_example(inst, split.name)

    # -- datasets ------------------------------------------------------------------
    def default_bin(self, split: str) -> Bin:
        """The trace steps of a named split; the training bin; ``test``: ``id_mid``'s steps."""
        if split == "train":
            return self.train_bin
        return self.table[TEST_BASE if split == "test" else split].knobs.steps

    def max_tokens(self, length: int) -> int:
        """Examples never exceed the split's token limit (4,096 at paper scale)."""
        return self.limit

    def stream(
        self, split: str, bin: Bin | str | None = None, n: int | None = None, seed: int = 0
    ) -> Iterator[PTGExample]:
        """``n`` (default 2,000) examples of a split, every program distinct.

        ``bin`` keeps trace steps in it (it must meet the split's steps). ``train`` is the
        Table 3 mixture; ``test`` is ``id_mid``'s programs with trace steps in ``bin``.
        """
        if split not in self.splits:
            raise unknown_name("split", split, self.splits)
        n = DEFAULT_SIZE if n is None else n
        if n < 0:
            raise RasplabError(f"n must be a non-negative number of examples, got {n}")
        bin = None if bin is None else Bin.parse(bin)
        if split == "train":
            return self._train_set(bin or self.train_bin, n, seed)
        if split == "test":
            return self._test_set(bin or self.default_bin("test"), n, seed)
        chosen = self.table[split]
        return (make_example(i, split) for i in S.dataset(chosen, n, seed, _clip(chosen, bin)))

    def _train_set(self, bin: Bin, n: int, seed: int) -> Iterator[PTGExample]:
        """Training examples drawn as the harness draws them, with distinct programs."""
        rng = generator(seed, "ptg", self.scale, "train", str(bin))
        seen: set[str] = set()
        while len(seen) < n:
            for length in self.draw_lengths(rng, bin, n - len(seen)):
                ex = self.sample(rng, int(length))
                source = ex.instance.program.source()
                if source not in seen:
                    seen.add(source)
                    yield ex

    def _test_set(self, bin: Bin, n: int, seed: int) -> Iterator[PTGExample]:
        """``id_mid``'s programs with trace steps in ``bin`` (a named split when it is one)."""
        base = self.table[TEST_BASE]
        for s in self.table.values():
            if not s.train and s.knobs == base.knobs.replace(steps=bin):
                return (make_example(i, s.name) for i in S.dataset(s, n, seed))
        split = S.Split(f"test_{bin}", base.knobs.replace(steps=bin), (bin,), False, self.scale)
        return (make_example(i, "test") for i in S.dataset(split, n, seed))

    # -- records and packing ---------------------------------------------------------
    def record(self, example: Example) -> dict:
        """The ``rasplab data ptg`` record of an example (``docs/ptg.md``)."""
        if not isinstance(example, PTGExample):
            raise RasplabError("a PTG record needs an example made by the ptg task")
        return example.instance.record(example.split)

    def pack(self, examples: Sequence[Example], max_tokens: int = SEQUENCE_TOKENS) -> list[Example]:
        """Pack short examples into sequences of at most ``max_tokens`` tokens (seed 000)."""
        return pack(examples, max_tokens)


def _clip(split: S.Split, bin: Bin | None) -> Bin | None:
    """``bin`` clipped to the split's trace steps (an error if they do not meet)."""
    if bin is None:
        return None
    steps = split.knobs.steps
    if bin.hi < steps.lo or steps.hi < bin.lo:
        raise RasplabError(f"bin {bin} does not meet the trace steps {steps} of split {split.name}")
    return Bin(max(bin.lo, steps.lo), min(bin.hi, steps.hi))


def _feasible_steps(knobs: Knobs) -> set[int]:
    """Every trace-step count some program shape under ``knobs`` has, whatever its ``steps``
    knob (the most variables allow every kind of block, so their tables hold all shapes)."""
    tables = [knobs.reach(knobs.variables.hi, n) for n in knobs.list_length.lengths()]
    return {n for t in tables for lines in knobs.lines.lengths() for n in t.step_counts(lines)}
