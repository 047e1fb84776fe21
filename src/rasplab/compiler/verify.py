"""Verification: the compiled model against the interpreter, every variable at every layer.

For each input both run with traces; they agree when the traces have no first difference
(tokens, every variable at every position after every attention and MLP sub-layer, the
rules fired, the number of layers; numerical values within a tolerance derived from the
dtype, the values' scale and the length) and the outputs are equal. An input on which the
interpreter itself fails (a rule reads an undefined value, conflicting rules, no halt within
the layer limit) is not compared at all: the program is undefined on it, and the report counts
it apart (``undefined``, ``first_undefined``), neither agreeing nor disagreeing. A program
stating its valid inputs (``program(..., inputs=InputSpec(...))``) is sampled only on those.
Inputs are compared shortest first, so the first divergence reported is a shortest one found.

Any :class:`~rasplab.lang.program.Program` can be verified (:func:`verify`); library
programs add their natural inputs (:func:`rasplab.programs.verify.verify_program`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rasplab.bins import Bin
from rasplab.compiler.compile import compile_program, numeric_tolerance, resolve_max_length
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.run import run_compiled
from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.lang.program import Program
from rasplab.seeding import generator

BATCH = 128
MAX_EXHAUSTIVE = 1_000_000
"""The most inputs ``--exhaustive-up-to`` may enumerate (more would exhaust memory)."""


@dataclass
class VerifyReport:
    """How many inputs were compared, how many agreed, and the first (shortest) disagreement;
    inputs the program is undefined on are counted apart, in ``undefined``."""

    total: int = 0
    agree: int = 0
    first_divergence: dict | None = None
    undefined: int = 0
    first_undefined: dict | None = None

    def to_json(self) -> dict:
        """``{"total", "agree", "first_divergence"}``, plus ``"undefined"`` and
        ``"first_undefined"`` when the program was undefined on some input."""
        out = {"total": self.total, "agree": self.agree, "first_divergence": self.first_divergence}
        if self.undefined:
            out |= {"undefined": self.undefined, "first_undefined": self.first_undefined}
        return out

    def undefined_line(self) -> str | None:
        """One line about the inputs the program is undefined on (None when there are none)."""
        if not self.undefined:
            return None
        first = self.first_undefined or {}
        return (
            f"the program is undefined on {self.undefined} input(s), not counted; the first: "
            f"the program is undefined on this input: {first.get('input')!r}: "
            f"{first.get('reason')} (a program states its valid inputs with "
            "program(..., inputs=InputSpec(...)))"
        )

    @property
    def ok(self) -> bool:
        """True when every input agreed."""
        return self.agree == self.total


def jsonable(value):
    """A trace value as JSON data (sets as sorted lists, anything else invalid as a string)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return repr(value)


def _run_both(program, model, batch, dtype, max_layers):
    """(interpreter run or error text, compiled run or error text)."""
    out = []
    for fn in (
        lambda: interpret(program, batch, trace=True, max_layers=max_layers),
        lambda: run_compiled(model, batch, trace=True, dtype=dtype, max_layers=max_layers),
    ):
        try:
            out.append(fn())
        except RasplabError as err:
            out.append(str(err))
    return out


def compare_batch(
    program: Program,
    model: CompiledTransformer,
    batch: Sequence[Sequence[int]],
    dtype: torch.dtype | None = None,
    max_layers: int | None = None,
    labels: Sequence | None = None,
) -> VerifyReport:
    """Compare interpreter and compiled model on token-id sequences, shortest first (see the
    module docstring)."""
    dtype = model.default_dtype() if dtype is None else dtype
    report = VerifyReport()
    labels = list(labels) if labels is not None else [None] * len(batch)
    order = sorted(range(len(batch)), key=lambda i: len(batch[i]))
    if order != list(range(len(batch))):
        batch, labels = [batch[i] for i in order], [labels[i] for i in order]
    for start in range(0, len(batch), BATCH):
        part = [list(s) for s in batch[start : start + BATCH]]
        ref, got = _run_both(program, model, part, dtype, max_layers)
        if isinstance(ref, str) or isinstance(got, str):
            if len(part) > 1:  # find which sequences fail, one at a time
                for i, seq in enumerate(part):
                    sub = compare_batch(
                        program, model, [seq], dtype, max_layers, [labels[start + i]]
                    )
                    _merge(report, sub)
                continue
            if isinstance(ref, str):
                report.undefined += 1
                if report.first_undefined is None:
                    report.first_undefined = {
                        "input": labels[start],
                        "tokens": part[0],
                        "reason": ref,
                    }
                continue
            report.total += 1
            if report.first_divergence is None:
                report.first_divergence = {
                    "input": labels[start],
                    "tokens": part[0],
                    "stage": "run",
                    "expected": "ran",
                    "got": got,
                }
            continue
        tol = numeric_tolerance(model, dtype, max(len(s) for s in part))
        for i, seq in enumerate(part):
            report.total += 1
            diff = ref.traces[i].first_difference(got.traces[i], tol=tol)
            if diff is None and ref.outputs[i] != got.outputs[i]:
                diff = {
                    "layer": ref.layers[i],
                    "stage": "output",
                    "variable": program.output,
                    "position": None,
                    "expected": ref.outputs[i],
                    "got": got.outputs[i],
                }
            if diff is None:
                report.agree += 1
            elif report.first_divergence is None:
                report.first_divergence = {
                    "input": labels[start + i],
                    "tokens": seq,
                    **{k: jsonable(v) for k, v in diff.items()},
                }
    return report


def _merge(into: VerifyReport, part: VerifyReport) -> None:
    into.total += part.total
    into.agree += part.agree
    into.undefined += part.undefined
    if into.first_divergence is None:
        into.first_divergence = part.first_divergence
    if into.first_undefined is None:
        into.first_undefined = part.first_undefined


def compile_for(program: Program, lengths: Sequence[int]) -> CompiledTransformer:
    """Compile with a maximum length covering ``lengths`` when the program needs one."""
    longest = max(lengths, default=1)
    if resolve_max_length(program, None) is None:
        return compile_program(program)
    limit = max(longest, 1)
    if program.position_range is not None:
        limit = min(limit, program.position_range)
    return compile_program(program, max_length=limit)


def sample_inputs(
    program: Program,
    lengths: Bin | str,
    samples: int,
    sampler: Callable[[np.random.Generator, int], Sequence[int]] | None = None,
    seed: int = 0,
) -> tuple[list[list[int]], bool]:
    """Token-id inputs with lengths in the bin: every sequence when the bin holds at most
    ``samples`` of them and no ``sampler`` is given, else ``samples`` draws (lengths taken in
    turn; ``sampler(rng, n)`` gives one input of n tokens, default: the program's
    :class:`~rasplab.lang.inputs.InputSpec` when it states one, else uniform token ids).
    Returns ``(inputs, exhaustive)``."""
    lengths = Bin.parse(lengths)
    if not isinstance(samples, int) or samples < 1:
        raise RasplabError(f"samples must be a positive int, got {samples!r}")
    if program.position_range is not None and lengths.hi > program.position_range:
        raise RasplabError(
            f"program {program.name!r} accepts at most {program.position_range} tokens "
            f"(position_range), got bin {lengths}"
        )
    v = program.input_range
    spec = program.inputs
    if sampler is None and spec is not None:
        spread = [n for n in lengths.lengths() if n >= spec.min_length]
        if not spread:
            raise RasplabError(
                f"program {program.name!r} has no valid inputs of lengths {lengths} (its inputs "
                f"have at least {spec.min_length} tokens)"
            )
        counts = [spec.count(n, v) for n in spread]
        if None not in counts and sum(counts) <= samples:
            return [s for n in spread for s in spec.enumerate(n, v)], True
        rng = generator(seed, "verify-inputs", program.name, str(lengths))
        return [spec.sample(rng, spread[i % len(spread)], v) for i in range(samples)], False
    if sampler is None and sum(v**n for n in lengths.lengths()) <= samples:
        return [
            list(s) for n in lengths.lengths() for s in itertools.product(range(v), repeat=n)
        ], True
    rng = generator(seed, "verify-inputs", program.name, str(lengths))
    spread = lengths.lengths()
    draw = sampler or (lambda r, n: r.integers(0, v, n).tolist())
    return [[int(t) for t in draw(rng, spread[i % len(spread)])] for i in range(samples)], False


def verify(
    program: Program,
    lengths: Bin | str = "0-8",
    samples: int = 1000,
    sampler: Callable[[np.random.Generator, int], Sequence[int]] | None = None,
    seed: int = 0,
    dtype: torch.dtype | None = None,
    inputs: Sequence[Sequence[int]] = (),
    labels: Sequence | None = None,
) -> VerifyReport:
    """Compile any ``program`` and compare it with the interpreter on token-id inputs: those of
    :func:`sample_inputs` for the bin (none with ``samples=0``), then ``inputs`` (shown as
    ``labels`` in the report).

    >>> from rasplab.lang import var, input_var, v_relative, program
    >>> def step(x):
    ...     if x["tok"] == 1:
    ...         x["out"] = x["left"]
    >>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
    ...             step, "out", 2, max_layers=1, undefined="no_match")
    >>> verify(p, "0-4", samples=100).to_json()   # 31 inputs: every sequence of 0-4 tokens
    {'total': 31, 'agree': 31, 'first_divergence': None}
    """
    batch, _ = sample_inputs(program, lengths, samples, sampler, seed) if samples else ([], True)
    names = [" ".join(map(str, b)) for b in batch]
    batch += [list(s) for s in inputs]
    names += list(labels) if labels is not None else [" ".join(map(str, s)) for s in inputs]
    model = compile_for(program, [len(b) for b in batch])
    return compare_batch(program, model, batch, dtype=dtype, labels=names)
