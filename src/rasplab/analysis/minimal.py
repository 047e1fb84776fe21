"""Minimal programs (ALTA Section 3.2, Appendix C.2): what the training inputs pin down.

Run a library program on its training inputs and keep only what they use:

* the MLP rules that fired at some position of some layer;
* the token ids and positions seen: every variable initialised from the token (position)
  keeps its initialisation for the seen ones and gives its ``default`` for the others.

The minimal program is then run on test inputs (:func:`evaluate_minimal`); a test input on
which it errs (does not halt, rules conflict, output not decodable) counts as wrong.
:func:`unseen_rules` says why: the rules test inputs fire that no training input fired.

Rule counts follow ALTA's convention, where a head output's reset to "undefined" after the
MLP is a rule too (one per value of the head output; the compiled MLP needs a hidden unit for
each): ``rules_full`` = update rules + every reset rule; ``rules_minimal`` = fired update rules
+ the resets that fired, i.e. the (head, value) pairs a head produced before some MLP.
rasplab's :class:`~rasplab.lang.program.Program` lists update rules only (its interpreter
resets head outputs implicitly), so ``len(program.rules)`` is the update count.

>>> from rasplab.programs import get_program
>>> result = minimize(get_program("parity_sequential_relative"), "0-4", samples=None, seed=0)
>>> result.rules_full, result.rules_minimal, result.inputs, result.exhaustive
(7, 7, 31, True)
>>> evaluate_minimal(get_program("parity_sequential_relative"), result.program, "30-40",
...                  samples=50, seed=0).accuracy
1.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program, rule_count
from rasplab.lang.rules import Rule
from rasplab.programs.base import LibraryProgram

DEFAULT_SAMPLES = 2000
"""Inputs per bin when none is given: all of them if the bin holds at most this many."""
_CHUNK = 1000


@dataclass(frozen=True)
class Usage:
    """What a set of runs used: fired rule indices, head values reset, tokens and positions."""

    fired: frozenset[int]
    resets: frozenset[tuple[str, Any]]
    tokens: frozenset[int]
    positions: int


def usage(program: Program, batch: Sequence[Sequence[int]]) -> Usage:
    """Run ``program`` on ``batch`` (token ids) and collect what it used (the interpreter's
    ``fired=True`` record: rules fired, head values produced, per sequence)."""
    batch = list(dict.fromkeys(tuple(seq) for seq in batch))  # each distinct input once
    fired = np.zeros(len(program.rules), dtype=bool)
    seen: dict[str, np.ndarray] = {}
    for start in range(0, len(batch), _CHUNK):
        run = interpret(program, batch[start : start + _CHUNK], fired=True)
        fired |= run.fired.any(axis=0)
        for name, values in run.head_values.items():
            seen[name] = values.any(axis=0) | seen.get(name, False)
    resets = {  # match code -> the value a reset rule matches (categorical value, bucket centre)
        (name, program.head_outputs[name].possible_values()[code])
        for name, codes in seen.items()
        for code in np.flatnonzero(codes).tolist()
    }
    tokens = frozenset(t for seq in batch for t in seq)
    positions = max((len(seq) for seq in batch), default=0)
    return Usage(frozenset(np.flatnonzero(fired).tolist()), frozenset(resets), tokens, positions)


@dataclass(frozen=True)
class _Restricted:
    """An initialisation kept for the seen arguments; ``default`` for the others."""

    fn: Any
    seen: frozenset[int]
    default: Any

    def __call__(self, x: int) -> Any:
        return self.fn(x) if x in self.seen else self.default


def restrict(program: Program, used: Usage, name: str | None = None) -> Program:
    """``program`` keeping only the fired rules and the seen token/position initialisations."""
    positions = frozenset(range(used.positions))
    variables = {}
    for vname, spec in program.variables.items():
        if spec.init in ("token", "position"):
            seen = used.tokens if spec.init == "token" else positions
            spec = dataclasses.replace(spec, init_fn=_Restricted(spec.init_fn, seen, spec.default))
        variables[vname] = spec
    table = {
        n: tuple(v.initial(t, 0) for t in range(program.input_range))
        for n, v in variables.items()
        if v.init == "token"
    }
    rules = tuple(r for i, r in enumerate(program.rules) if i in used.fired)
    return dataclasses.replace(
        program,
        variables=variables,
        rules=rules,
        token_table=table,
        name=name or f"{program.name}_minimal",
    )


@dataclass(frozen=True)
class MinimalResult:
    """A minimal program with the counts that describe it."""

    program: Program
    full: Program
    used: Usage
    lengths: Bin | None
    inputs: int
    exhaustive: bool

    @property
    def rules_full(self) -> int:
        """ALTA's rule count of the full program (update + reset rules)."""
        return rule_count(self.full)

    @property
    def rules_minimal(self) -> int:
        """Fired update rules plus fired reset rules."""
        return len(self.used.fired) + len(self.used.resets)


def _samples(samples: int | None) -> int:
    """``samples``, or :data:`DEFAULT_SAMPLES` when not given (0 is refused, not defaulted)."""
    return DEFAULT_SAMPLES if samples is None else samples


def _encoded(entry: LibraryProgram, texts: Sequence[str]) -> list[list[int]]:
    return [entry.encode(t) for t in texts]


def minimize(
    entry: LibraryProgram, lengths: Bin | str, samples: int | None = None, seed: int = 0, **options
) -> MinimalResult:
    """The minimal version of ``entry``'s program w.r.t. its training inputs of ``lengths``
    (all of them when at most ``samples`` (default :data:`DEFAULT_SAMPLES`), else that many
    random ones drawn from ``seed``); ``options`` go to the program's builder."""
    lengths = entry.check_lengths(lengths)
    texts, exhaustive = entry.inputs(lengths, _samples(samples), seed, "train")
    return minimize_on(entry, texts, lengths, exhaustive, **options)


def minimize_on(
    entry: LibraryProgram,
    texts: Sequence[str],
    lengths: Bin | None = None,
    exhaustive: bool = True,
    **options,
) -> MinimalResult:
    """The minimal version of ``entry``'s program w.r.t. the training inputs ``texts`` (e.g. a
    task split's training commands); ``lengths`` and ``exhaustive`` only describe them."""
    if not texts:
        raise RasplabError("a minimal program needs at least one training input; got none")
    full = entry.program(**options)
    used = usage(full, _encoded(entry, texts))
    return MinimalResult(restrict(full, used), full, used, lengths, len(texts), exhaustive)


def minimal_program(
    entry: LibraryProgram, lengths: Bin | str, samples: int | None, seed: int
) -> Program:
    """The minimal program of ``entry`` w.r.t. its training inputs (see :func:`minimize`)."""
    return minimize(entry, lengths, samples, seed).program


@dataclass(frozen=True)
class MinimalEvaluation:
    """How a (minimal) program did on test inputs; ``failed`` inputs are counted wrong."""

    correct: int
    total: int
    failed: int
    exhaustive: bool

    @property
    def accuracy(self) -> float:
        """Fraction of test inputs answered correctly (1.0 for an empty test set)."""
        return self.correct / self.total if self.total else 1.0


def score(entry: LibraryProgram, program: Program, texts: Sequence[str]) -> tuple[int, int]:
    """``(correct, failed)`` of ``program`` on natural inputs, against ``entry.reference``."""
    batch = _encoded(entry, texts)
    correct = failed = 0
    for start in range(0, len(batch), _CHUNK):
        chunk = batch[start : start + _CHUNK]
        run = interpret(program, chunk, errors="mark")  # a failing input: output None
        for text, ids, out in zip(texts[start : start + _CHUNK], chunk, run.outputs):
            if out is None:
                failed += 1
                continue
            try:
                correct += entry.decode(ids, out) == entry.reference(text)
            except RasplabError:
                failed += 1
    return correct, failed


def evaluate_minimal(
    entry: LibraryProgram,
    minimal: Program,
    lengths: Bin | str,
    samples: int | None = None,
    seed: int = 0,
) -> MinimalEvaluation:
    """Run ``minimal`` on ``entry``'s test inputs of ``lengths`` and score the answers."""
    lengths = entry.check_lengths(lengths)
    texts, exhaustive = entry.inputs(lengths, _samples(samples), seed, "test")
    correct, failed = score(entry, minimal, texts)
    return MinimalEvaluation(correct, len(texts), failed, exhaustive)


def evaluate_on(entry: LibraryProgram, minimal: Program, texts: Sequence[str]) -> MinimalEvaluation:
    """Run ``minimal`` on the given test inputs (e.g. a task split's test commands)."""
    correct, failed = score(entry, minimal, texts)
    return MinimalEvaluation(correct, len(texts), failed, True)


@dataclass(frozen=True)
class UnseenRule:
    """An update rule of the full program that test inputs fire and training never did."""

    rule: Rule
    inputs: int
    example: str


def unseen_rules(
    result: MinimalResult, entry: LibraryProgram, texts: Sequence[str]
) -> list[UnseenRule]:
    """The rules of ``result.full`` that ``texts`` (test inputs) fire but the training inputs
    never did, most used first, each with how many inputs fire it and the first of them: why a
    minimal program fails where it fails (a rule that fires need not matter for the output).
    Update rules only: tokens or positions never seen in training (which the minimal program
    gives their defaults) are in ``result.used``, not here."""
    batch = _encoded(entry, texts)
    counts = np.zeros(len(result.full.rules), dtype=np.int64)
    first = np.full(len(result.full.rules), -1, dtype=np.int64)
    for start in range(0, len(batch), _CHUNK):
        fired = interpret(result.full, batch[start : start + _CHUNK], fired=True).fired
        fired[:, sorted(result.used.fired)] = False
        hit = fired.any(axis=0) & (first < 0)
        first[hit] = start + fired[:, hit].argmax(axis=0)
        counts += fired.sum(axis=0)
    order = sorted(np.flatnonzero(counts).tolist(), key=lambda i: (-counts[i], i))
    return [UnseenRule(result.full.rules[i], int(counts[i]), texts[first[i]]) for i in order]
