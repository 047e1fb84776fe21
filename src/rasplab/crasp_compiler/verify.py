"""Verifying a compiled C-RASP program: every operation at every position equals the interpreter.

:func:`verify` compiles the program (or takes a compiled model), runs it and the batched
interpreter (:mod:`rasplab.crasp.interpreter`, exact integer counts) on the same inputs, decodes
every operation at every position of the model's final residual in one sparse product, and
compares: a Boolean agrees when it is within 1/4 of the interpreter's 0/1, a count when
``(i+1) * ratio`` is within 1/4 of the interpreter's integer (the precision derivation keeps
both within 1/8). The inputs: every string of length 0..K (K defaults to the longest length
with at most 10^6 strings in all, at most the maximum length), then ``samples`` random strings
with lengths uniform over ``lengths`` (default ``0-N``). Inputs run in batches of similar
length under a memory budget, without gradients.

>>> from rasplab.crasp.library import program
>>> verify(program("tomita1"), max_length=16, exhaustive_up_to=6, samples=20).to_json()
{'total': 147, 'agree': 147, 'first_divergence': None}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rasplab.bins import Bin
from rasplab.crasp.interpreter import run_ids
from rasplab.crasp.ir import CraspProgram
from rasplab.crasp_compiler.compile import DEFAULT_MAX_LENGTH, check_max_length, compile_program
from rasplab.crasp_compiler.model import CraspTransformer
from rasplab.errors import RasplabError
from rasplab.seeding import generator

MAX_EXHAUSTIVE = 1_000_000
"""The most strings the exhaustive part enumerates."""
BATCH_BYTES = 128 * 2**20
"""Memory budget of one batch's residual and decoded values."""
TOLERANCE = 0.25


@dataclass
class VerifyReport:
    """How many inputs were compared, how many agreed everywhere, and the first that did not."""

    total: int = 0
    agree: int = 0
    first_divergence: dict | None = None
    _first_index: tuple[int, int] | None = None

    @property
    def ok(self) -> bool:
        """True when every input agreed."""
        return self.agree == self.total

    def to_json(self) -> dict:
        """``{"total", "agree", "first_divergence"}``."""
        return {"total": self.total, "agree": self.agree, "first_divergence": self.first_divergence}


def default_exhaustive(alphabet_size: int, max_length: int) -> int:
    """The longest K with at most 10^6 strings of length 0..K (at most ``max_length``)."""
    k, total = 0, 1
    while k < max_length and total + alphabet_size ** (k + 1) <= MAX_EXHAUSTIVE:
        k += 1
        total += alphabet_size**k
    return k


def exhaustive_ids(alphabet_size: int, n: int) -> np.ndarray:
    """Every string of length ``n`` as ids ``[S**n, n+1]`` (<bos> = 0 first, symbols 1..S)."""
    count = alphabet_size**n
    digits = np.arange(count, dtype=np.int64)[:, None] // alphabet_size ** np.arange(
        n - 1, -1, -1, dtype=np.int64
    )
    ids = np.zeros((count, n + 1), dtype=np.int64)
    ids[:, 1:] = digits % alphabet_size + 1
    return ids


def _inputs(program, max_length, exhaustive_up_to, lengths, samples, seed, saved=False):
    """Lists of ``[B, n+1]`` id arrays (one per length), in verification order."""
    s = len(program.alphabet)
    k = default_exhaustive(s, max_length) if exhaustive_up_to is None else exhaustive_up_to
    if k < 0 or k > max_length:
        raise RasplabError(f"--exhaustive-up-to must be in 0..{max_length} (the maximum length)")
    if sum(s**n for n in range(k + 1)) > MAX_EXHAUSTIVE:
        raise RasplabError(
            f"--exhaustive-up-to {k} means more than {MAX_EXHAUSTIVE:,} strings over "
            f"{s} symbols; choose at most {default_exhaustive(s, max_length)}"
        )
    if samples < 0 or samples > MAX_EXHAUSTIVE:
        raise RasplabError(f"--samples must be in 0..{MAX_EXHAUSTIVE:,}, got {samples}")
    out = [exhaustive_ids(s, n) for n in range(k + 1)]
    b = Bin.parse(lengths if lengths is not None else f"0-{max_length}")
    if b.hi > max_length:
        raise RasplabError(
            f"--lengths {b} goes beyond the maximum length {max_length} the model is "
            + (
                "saved for (compile it again with a larger --max-length)"
                if saved
                else "compiled for (raise --max-length)"
            )
        )
    rng = generator(seed, "crasp-verify", program.name)
    drawn = rng.integers(b.lo, b.hi + 1, size=samples)
    for n in drawn.tolist():
        ids = np.zeros((1, n + 1), dtype=np.int64)
        ids[0, 1:] = rng.integers(1, s + 1, size=n)
        out.append(ids)
    return out


def _batches(arrays: list[np.ndarray], width: int, ops: int):
    """``(indices, ids [B, T])``: strings grouped by length (no padding), cut into batches
    whose residual, attention and decoded values fit :data:`BATCH_BYTES`."""
    starts = np.cumsum([0] + [len(a) for a in arrays])
    by_length: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for a, s in zip(arrays, starts):
        by_length.setdefault(a.shape[1], []).append((np.arange(s, s + len(a)), a))
    for t in sorted(by_length):
        index = np.concatenate([i for i, _ in by_length[t]])
        ids = np.concatenate([a for _, a in by_length[t]])
        size = max(1, BATCH_BYTES // (t * (3 * width + 2 * ops + t) * 8))
        for k in range(0, len(ids), size):
            yield index[k : k + size], ids[k : k + size]


def verify(
    program: CraspProgram,
    max_length: int = DEFAULT_MAX_LENGTH,
    exhaustive_up_to: int | None = None,
    lengths: str | None = None,
    samples: int = 200,
    seed: int = 0,
    model: CraspTransformer | None = None,
) -> VerifyReport:
    """Compare the compiled model with the interpreter (see the module docstring); the first
    divergence reported is one of the shortest disagreeing strings."""
    saved = model is not None
    if saved:
        max_length = model.spec["max_length"]
    check_max_length(max_length)
    if model is None:  # first: a length beyond the precision is compile's own message
        model = compile_program(program, max_length)
    arrays = _inputs(program, max_length, exhaustive_up_to, lengths, samples, seed, saved)
    names = model.decode_names
    if names != [op.name for op in program.ops]:
        raise RasplabError(
            f"the model was compiled from {model.spec.get('program')!r}, whose operations "
            f"differ from those of {program.name!r}"
        )
    report = VerifyReport()
    with torch.no_grad():
        for order, ids in _batches(arrays, model.width, len(names)):
            values = run_ids(program, ids)
            want = np.stack([values[n] for n in names]).astype(np.float64)  # [ops, B, T]
            got = model.decode_all(model(torch.from_numpy(ids))).to(torch.float64).numpy()
            bad = ~(np.abs(got - want) < TOLERANCE)
            bad_rows = bad.any(axis=(0, 2))
            report.total += len(order)
            report.agree += int((~bad_rows).sum())
            for r in np.flatnonzero(bad_rows):  # the shortest string, then the first drawn
                key = (ids.shape[1], int(order[r]))
                if report._first_index is None or key < report._first_index:
                    report._first_index = key
                    report.first_divergence = _divergence(
                        program, names, ids[r], bad[:, r], want[:, r], got[:, r]
                    )
    return report


def _divergence(program, names, ids, bad, want, got) -> dict:
    """The first disagreement of one string: earliest position, then program order."""
    ops, positions = np.nonzero(bad)
    k = np.lexsort((ops, positions))[0]
    op, pos = int(ops[k]), int(positions[k])
    symbols = [program.alphabet[x - 1] for x in ids[1:] if x > 0]
    count = program.op(names[op]).sort == "count"
    expected, value = want[op, pos], float(got[op, pos])
    return {
        "input": " ".join(symbols),
        "position": pos,
        "operation": names[op],
        "expected": int(expected) if count else bool(expected),
        "got": value if np.isfinite(value) else str(value),
    }
