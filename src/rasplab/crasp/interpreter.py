"""The batched C-RASP interpreter: every operation at every position, numpy over batch x positions.

:func:`run` encodes a batch of input strings (symbols, without ``<bos>``; the interpreter puts
``<bos>`` at position 0), pads them to one ``[B, T]`` array of symbol ids (``-1`` past the end;
``T = longest n + 1``), and evaluates the operations in program order, each as one array
operation on ``[B, T]``: Booleans as ``bool``, counts as exact ``int64``. A counting operation
counts the input positions ``j = 1..i`` only (the start position 0 never contributes, as in
Definition 8, where programs run over the string itself): without relation it is a cumulative
sum along positions with column 0 cleared; with a local relation it is a sum of at most
``tau + 1`` shifted copies of that. Padding sits after every real position, so it never changes
a real position's value (every operation looks only at ``j <= i``).

The result, a :class:`CraspRun`, holds the values (all of them, or only those asked for with
``keep``, freeing the rest after their last use) and reads out acceptance, per-position outputs
and a :class:`~rasplab.crasp.trace.CraspTrace` per string.

>>> from rasplab.crasp.build import Q, count, crasp_program
>>> p = crasp_program("majority", count(Q("b")) <= count(Q("a")), alphabet="ab")
>>> r = run(p, ["a b b", "b a a", ""])
>>> r.accept.tolist(), r.prefix_accept(0)
([False, True, True], [True, True, True, False])
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rasplab.crasp.ir import CraspProgram, Op
from rasplab.crasp.trace import CraspTrace
from rasplab.errors import RasplabError
from rasplab.tasks.base import BOS

COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}


def split_input(text: str | Sequence[str]) -> tuple[str, ...]:
    """An input as a tuple of symbols: a string is split on whitespace (``"a b b"``)."""
    return tuple(text.split()) if isinstance(text, str) else tuple(text)


def encode(
    program: CraspProgram, inputs: Iterable[str | Sequence[str]]
) -> tuple[list[tuple[str, ...]], np.ndarray, np.ndarray]:
    """``(symbols per input with <bos> first, ids [B, T], positions per input)``; a symbol
    outside the program's alphabet is an error naming the input and the symbol."""
    index = {s: k for k, s in enumerate(program.alphabet, start=1)}
    rows = [split_input(x) for x in inputs]
    lengths = np.array([len(r) + 1 for r in rows], dtype=np.int64)
    ids = np.full((len(rows), int(lengths.max(initial=1))), -1, dtype=np.int64)
    for b, row in enumerate(rows):
        try:
            ids[b, 1 : len(row) + 1] = [index[s] for s in row]
        except KeyError:
            bad = next(s for s in row if s not in index)
            where = f"input {b + 1}: " if len(rows) > 1 else ""
            if bad == BOS:
                raise RasplabError(
                    f"{where}{BOS} is added by the interpreter; give only the string's symbols"
                ) from None
            raise RasplabError(
                f"{where}symbol {bad!r} is not in the alphabet of program {program.name!r} "
                f"({' '.join(program.alphabet)})"
            ) from None
        ids[b, 0] = 0
    return [(BOS, *r) for r in rows], ids, lengths


def evaluate(op: Op, values: dict[str, np.ndarray], ids: np.ndarray, symbol_id: int) -> np.ndarray:
    """One operation's ``[B, T]`` value from its arguments' values (``symbol_id``: the id of
    ``op.symbol`` for an initial operation, else unused)."""
    k, a = op.kind, [values[x] for x in op.args]
    shape = ids.shape
    if k == "initial":
        return ids == symbol_id
    if k == "bool_const":
        return np.full(shape, op.value, dtype=bool)
    if k == "count_const":
        return np.full(shape, op.value, dtype=np.int64)
    if k == "not":
        return ~a[0]
    if k == "and":
        return np.logical_and.reduce(a) if len(a) > 2 else a[0] & a[1]
    if k == "or":
        return np.logical_or.reduce(a) if len(a) > 2 else a[0] | a[1]
    if k == "periodic":
        row = np.isin(np.arange(shape[1]) % op.period.modulus, sorted(op.period.residues))
        return np.broadcast_to(row, shape)
    if k == "compare":
        return COMPARE[op.comparison](a[0], a[1])
    if k == "compare_const":
        return COMPARE[op.comparison](a[0], op.value)
    if k == "count":
        arg = a[0].copy()
        arg[:, 0] = False  # the start position is not a symbol of the string: never counted
        if op.relation is None:
            return np.cumsum(arg, axis=1, dtype=np.int64)
        out = np.zeros(shape, dtype=np.int64)
        for d in sorted(op.relation.offsets):
            if d < shape[1]:
                out[:, d:] += arg[:, : shape[1] - d]
        return out
    if k == "cond":
        return np.where(a[0], a[1], a[2])
    if k == "add":
        return a[0] + a[1]
    return a[0] - a[1]  # sub


@dataclass
class CraspRun:
    """The values of one batch: ``values[name]`` is ``[B, T]`` (kept operations only)."""

    program: CraspProgram
    symbols: list[tuple[str, ...]]
    ids: np.ndarray
    lengths: np.ndarray
    values: dict[str, np.ndarray]
    _decoded: np.ndarray | None = field(default=None, repr=False)

    @property
    def accept(self) -> np.ndarray:
        """``[B]`` acceptance: the output operation at each string's last position."""
        out = self.values[self.program.output]
        return out[np.arange(len(self.lengths)), self.lengths - 1].astype(bool)

    def prefix_accept(self, b: int) -> list[bool]:
        """String ``b``: the output operation at every position (membership of each prefix)."""
        return self.values[self.program.output][b, : self.lengths[b]].tolist()

    def readout(self, b: int) -> list:
        """String ``b``: the readout at every position (sorted symbol tuples for ``"set"``;
        a symbol or ``None`` for ``"token"``); without a readout, :meth:`prefix_accept`."""
        if self.program.readout is None:
            return self.prefix_accept(b)
        if self._decoded is None:
            self._decoded = _decode_readout(self.program, self.values)
        return self._decoded[b, : self.lengths[b]].tolist()

    def trace(self, b: int):
        """String ``b``'s :class:`~rasplab.crasp.trace.CraspTrace` (needs every value kept)."""
        missing = [op.name for op in self.program.ops if op.name not in self.values]
        if missing:
            raise RasplabError(f"a trace needs every operation's values; not kept: {missing[0]}")
        n = int(self.lengths[b])
        rows = {op.name: self.values[op.name][b, :n].tolist() for op in self.program.ops}
        outputs = self.readout(b) if self.program.readout is not None else None
        return CraspTrace(self.program, list(self.symbols[b]), rows, outputs)


def _decode_readout(program: CraspProgram, values: dict[str, np.ndarray]) -> np.ndarray:
    """``[B, T]`` object array of readout values (set: sorted symbol tuples; token: the one
    symbol whose operation holds, else ``None``), decoded once for the whole batch."""
    ro = program.readout
    order = sorted(range(len(ro.symbols)), key=lambda k: ro.symbols[k])
    table = np.stack([values[ro.ops[k]] for k in order])  # [S, B, T], symbols sorted
    symbols = [ro.symbols[k] for k in order]
    if ro.kind == "token":
        pick = np.where(table.sum(axis=0) == 1, table.argmax(axis=0), len(symbols))
        return np.array([*symbols, None], dtype=object)[pick]
    packed = np.packbits(table, axis=0, bitorder="little")  # [ceil(S/8), B, T]
    flat = packed.reshape(packed.shape[0], -1).T  # one byte string per position
    if flat.shape[1] <= 8:  # one int64 key per position: a fast 1-D unique
        keys = np.zeros(flat.shape[0], dtype=np.uint64)
        for k in range(flat.shape[1]):
            keys |= flat[:, k].astype(np.uint64) << np.uint64(8 * k)
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        uniq = flat[first]
    else:
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    bits = np.unpackbits(uniq, axis=1, count=len(symbols), bitorder="little").astype(bool)
    sets = np.empty(len(uniq), dtype=object)
    sets[:] = [tuple(s for s, on in zip(symbols, row) if on) for row in bits]
    return sets[inverse.reshape(-1)].reshape(table.shape[1:])


def run(
    program: CraspProgram,
    inputs: Iterable[str | Sequence[str]],
    keep: str | Iterable[str] = "all",
) -> CraspRun:
    """Run ``program`` on a batch of input strings (see the module docstring).

    ``keep="all"`` keeps every operation's values (for traces); otherwise only the named
    operations plus the output and the readout operations are kept, the rest freed after
    their last use (large programs on large batches).
    """
    symbols, ids, lengths = encode(program, inputs)
    return CraspRun(program, symbols, ids, lengths, run_ids(program, ids, keep))


def run_ids(
    program: CraspProgram, ids: np.ndarray, keep: str | Iterable[str] = "all"
) -> dict[str, np.ndarray]:
    """The values of every (kept) operation on an already encoded ``[B, T]`` id array
    (``0`` = ``<bos>``, ``k`` = the k-th alphabet symbol, ``-1`` = padding)."""
    symbol_ids = {s: k for k, s in enumerate((BOS, *program.alphabet))}
    if keep == "all":
        kept = None
    else:
        kept = set(keep) | {program.output} | set(program.readout.ops if program.readout else ())
        last_use = {a: k for k, op in enumerate(program.ops) for a in op.args}
    values: dict[str, np.ndarray] = {}
    for k, op in enumerate(program.ops):
        values[op.name] = evaluate(op, values, ids, symbol_ids.get(op.symbol, -2))
        if kept is not None:
            for a in set(op.args):
                if last_use[a] == k and a not in kept:
                    del values[a]
    if kept is not None:
        values = {name: v for name, v in values.items() if name in kept}
    return values
