"""Verify a compiled RASP model against the RASP evaluator: every SOp, every position.

Inputs: every sequence over the vocabulary of each length 1, 2, ... while the running total
stays within ``exhaustive`` (10^6 by default), then ``samples`` random sequences of the longer
lengths up to ``max_seq_len`` (uniform length, uniform tokens, from ``seed``). Each input is
run through the evaluator (:func:`~rasplab.rasp.evaluate.evaluate_all`) and the compiled model
(equal lengths batched), and every SOp the program reads is decoded at every position and
compared: categorical values exactly (None included); numerical values up to 1e-9 relative,
the rounding by which two orders of summing the same floats may differ. An input on which
the evaluator itself fails (a categorical Aggregate selecting different values, as
``make_sort_unique`` does on repeated keys) is outside the program's domain: counted apart.

>>> from rasplab.rasp import rasp, lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> model = compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 6)
>>> report = verify(model, exhaustive=40, samples=20)
>>> report.exhaustive_length, report.inputs, report.values_compared, report.disagreements
(4, 50, 426, [])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasplab.rasp import rasp
from rasplab.rasp.evaluate import evaluate_all
from rasplab.rasp.graph import nodes
from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import CompiledRasp


@dataclass
class Disagreement:
    """One SOp at one position where the model and the evaluator differ."""

    sop: str
    tokens: list
    position: int
    expected: Any
    got: Any


@dataclass
class VerifyReport:
    """What was compared and every disagreement found (at most ``limit`` kept)."""

    inputs: int = 0
    exhaustive_length: int = 0
    random_inputs: int = 0
    outside_domain: int = 0
    sops: int = 0
    values_compared: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    disagreeing_inputs: int = 0

    @property
    def ok(self) -> bool:
        return self.disagreeing_inputs == 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary (the first disagreements only)."""
        return {
            "inputs": self.inputs,
            "exhaustive_up_to_length": self.exhaustive_length,
            "random_inputs": self.random_inputs,
            "outside_domain": self.outside_domain,
            "sops": self.sops,
            "values_compared": self.values_compared,
            "disagreeing_inputs": self.disagreeing_inputs,
            "first_disagreements": [vars(d) for d in self.disagreements[:5]],
        }


def plan_inputs(
    vocab: Sequence[Any], max_seq_len: int, exhaustive: int, samples: int, seed: int
) -> tuple[list[list], int]:
    """The inputs to check (without BOS) and the longest exhaustively covered length."""
    vocab = list(vocab)
    out: list[list] = []
    length = 0
    while length < max_seq_len and len(out) + len(vocab) ** (length + 1) <= exhaustive:
        length += 1
        out.extend(list(x) for x in itertools.product(vocab, repeat=length))
    if length < max_seq_len:
        rng = np.random.default_rng(seed)
        for _ in range(samples):
            n = int(rng.integers(length + 1, max_seq_len + 1))
            out.append([vocab[i] for i in rng.integers(0, len(vocab), n)])
    return out, length


def _same(expected: Any, got: Any, numerical: bool) -> bool:
    if expected is None or got is None:
        return expected is None and got is None
    if numerical:
        return abs(float(expected) - float(got)) <= 1e-9 * max(1.0, abs(float(expected)))
    return bool(expected == got)


def verify(
    model: CompiledRasp,
    exhaustive: int = 10**6,
    samples: int = 1000,
    seed: int = 0,
    limit: int = 20,
) -> VerifyReport:
    """Compare ``model`` with the evaluator on every SOp at every position (see module doc)."""
    program = model.program
    order = nodes(program)
    sops = [e for e in order if isinstance(e, rasp.SOp)]
    inputs, length = plan_inputs(model.vocab, model.plan.max_seq_len, exhaustive, samples, seed)
    report = VerifyReport(exhaustive_length=length, sops=len(sops))
    report.random_inputs = len(inputs) - sum(len(model.vocab) ** n for n in range(1, length + 1))
    by_length: dict[int, list[list]] = {}
    for xs in inputs:
        by_length.setdefault(len(xs), []).append(xs)
    for _, group in sorted(by_length.items()):
        for start in range(0, len(group), 4096):
            _check_batch(model, program, order, sops, group[start : start + 4096], report, limit)
    return report


def _check_batch(model, program, order, sops, batch, report: VerifyReport, limit: int) -> None:
    expected = []
    for xs in batch:
        try:
            expected.append(evaluate_all(program, xs, order))
        except RaspError:
            expected.append(None)
    report.inputs += len(batch)
    x = model.run([model.encode([model.bos, *xs]) for xs in batch])
    codes = {id(s): model.decode(x, s) for s in sops}
    for b, (xs, values) in enumerate(zip(batch, expected)):
        if values is None:
            report.outside_domain += 1
            continue
        bad = False
        for s in sops:
            numerical = rasp.is_numerical(s)
            for i, want in enumerate(values[id(s)]):
                got = model.value(s, int(codes[id(s)][b, i + 1]))
                report.values_compared += 1
                if not _same(want, got, numerical):
                    bad = True
                    if len(report.disagreements) < limit:
                        report.disagreements.append(Disagreement(s.label, list(xs), i, want, got))
        report.disagreeing_inputs += bad
