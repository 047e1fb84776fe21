"""The fast interpreter: many sequences at once, vectorised over sequences and positions.

Same semantics as :func:`rasplab.lang.reference.run_reference` (the oracle it is tested
against), but every variable is a ``[B, T]`` numpy array (see :mod:`rasplab.lang.arrays`),
heads run as whole-batch kernels (:mod:`rasplab.lang.attention`) and the MLP is a keyed
lookup over grouped rules (:mod:`rasplab.lang.ruletable`), so the cost per layer does not grow
with the number of rules. Sequences may have different lengths (padding is masked); each
sequence halts on its own and is then dropped from further work. With ``trace=True`` every
variable at every position after every sub-layer is kept, as one
:class:`rasplab.lang.trace.Trace` per sequence. ``fired=True`` keeps much less, cheaply: per
sequence, which rules fired and which head output values occurred (numpy flags set by the
rule lookup, no Python values). ``errors="mark"`` fails a sequence that hits a rule conflict
or does not halt (output ``None``, message in ``errors``) and completes the others.

Outputs are the output variable's values per real position; the output variable is an
ordinary categorical variable, so it is never undefined.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def mlp(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             mlp, output="out", input_range=2, max_layers=1, undefined="no_match")
>>> run = interpret(p, [[1, 0, 1, 1], [0, 1]])
>>> run.outputs, run.layers
([[0, 1, 0, 1], [0, 0]], [1, 1])
>>> interpret(p, [[1, 0, 1, 1], [0, 1]], fired=True).fired.tolist()  # [B, R]: rule 0 fired?
[[True], [False]]
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rasplab.errors import RasplabError
from rasplab.lang.arrays import (
    UNDEFINED,
    SetTable,
    initial_array,
    match_codes,
    radix,
    undefined_array,
)
from rasplab.lang.attention import HeadPlan, plan_heads, run_heads
from rasplab.lang.inputs import check_batch
from rasplab.lang.program import Program, undefined_read
from rasplab.lang.rules import Rule
from rasplab.lang.ruletable import RuleTable
from rasplab.lang.trace import Trace, TraceRecorder

ERROR_MODES = ("raise", "mark")
"""``interpret``'s ``errors`` options: raise on the first failing sequence, or mark it failed."""


@dataclass
class BatchRun:
    """Result of a batched run: per sequence, the output values, layers run and the options' extras.

    * ``outputs[b]``: the output variable per position, or ``None`` for a failed sequence;
    * ``layers[b]``: layers completed (a failed sequence: those before the failing layer);
    * ``traces`` (``trace=True``): one :class:`Trace` per sequence;
    * ``fired`` (``fired=True``): ``[B, R]`` bool, rule r fired at some position of sequence b
      in some completed layer (``R = len(program.rules)``; it costs B·R bytes);
    * ``head_values`` (``fired=True``): head output name -> ``[B, V]`` bool, the head produced
      the value with match code v (the categorical value, or the index of the numerical bucket
      in the output's ``values``) at some real position after some completed layer's attention;
      head outputs without values (numerical, no buckets) are left out;
    * ``errors[b]``: ``None``, or (``errors="mark"``) why sequence b failed, worded as the
      reference interpreter's error.
    """

    outputs: list[list[int] | None]
    layers: list[int]
    traces: list[Trace] | None = None
    fired: np.ndarray | None = None
    head_values: dict[str, np.ndarray] | None = None
    errors: list[str | None] | None = None


class _Plan:
    """What the batched kernels need from a program, built once per program."""

    def __init__(self, program: Program):
        specs = program.all_variables
        self.tables = {n: SetTable(v) for n, v in specs.items() if v.kind == "set"}
        self.heads: list[HeadPlan] = plan_heads(program, self.tables)
        self.rules = RuleTable(program, self.tables)
        self.guarded = [n for n in self.rules.read if n in program.head_outputs]
        self._blocked: dict[int, tuple] = {}
        self.plain = {  # categorical variables that always hold in-range values are their own codes
            n
            for n, v in program.variables.items()
            if v.kind == "categorical" and (v.init != "default" or 0 <= v.default < v.range)
        }

    def blocked(self, program: Program, pattern: int) -> tuple:
        """For positions where exactly the guarded head outputs in bit ``pattern`` are
        undefined: ``(table, ids, always)``, ``table`` firing the rules that read one of them
        with those atoms dropped (``ids`` maps its rules back), ``always`` the rules reading
        nothing else (they would fire anywhere)."""
        got = self._blocked.get(pattern)
        if got is None:
            gone = {n for i, n in enumerate(self.guarded) if pattern >> i & 1}
            ids, projected, always = [], [], []
            for i, r in enumerate(program.rules):
                lhs = tuple((v, val) for v, val in r.lhs if v not in gone)
                if len(lhs) == len(r.lhs):
                    continue
                if lhs:
                    ids.append(i)
                    projected.append(Rule(lhs, r.var, r.old, r.new))
                else:
                    always.append(i)
            table = RuleTable(program.with_rules(projected), self.tables) if projected else None
            got = self._blocked[pattern] = (table, np.asarray(ids, dtype=np.int64), always)
        return got


_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plan(program: Program) -> _Plan:
    plan = _PLANS.get(program)
    if plan is None:
        plan = _PLANS[program] = _Plan(program)
    return plan


def _suffix(b: int, size: int) -> str:
    return f" (sequence {b} of the batch)" if size > 1 else ""


def _pad(program: Program, batch: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Validated (:func:`~rasplab.lang.inputs.check_batch`), zero-padded token ids ``[B, T]``
    and lengths ``[B]``."""
    batch = check_batch(batch, program.input_range, program.position_range)
    lengths = np.array([len(s) for s in batch], dtype=np.int64)
    tokens = np.zeros((len(batch), int(lengths.max(initial=0))), dtype=np.int64)
    for b, seq in enumerate(batch):
        tokens[b, : len(seq)] = seq
    return tokens, lengths


def initial_state(program: Program, tokens: np.ndarray) -> dict[str, np.ndarray]:
    """Every variable's initial ``[B, T]`` array; head outputs start undefined."""
    plan = _plan(program)
    state = {
        n: initial_array(v, tokens, program.token_table.get(n), plan.tables.get(n))
        for n, v in program.variables.items()
    }
    state.update({n: undefined_array(v, tokens.shape) for n, v in program.head_outputs.items()})
    return state


def _codes(program: Program, plan: _Plan, state: dict, names) -> dict[str, np.ndarray]:
    """Flat ``[N]`` rule-match codes of ``names`` (ordinary categorical values are their own)."""
    specs = program.all_variables
    return {
        n: (
            state[n] if n in plan.plain else match_codes(specs[n], state[n], plan.tables.get(n))
        ).ravel()
        for n in names
    }


def _writes(table: RuleTable, pos: np.ndarray, rules: np.ndarray, n: int):
    """Group the fired pairs by written variable: ``([(name, flat positions, rules)], bad)``,
    ``bad`` being the flat positions one variable is written at twice (a rule conflict)."""
    writes = table.rule_var[rules]
    mark = np.empty(n, dtype=np.int64)
    groups, bad = [], []
    for vi in np.flatnonzero(np.bincount(writes, minlength=len(table.writable))).tolist():
        m = writes == vi
        where = pos[m]
        stamp = np.arange(len(where))
        mark[where] = stamp
        clash = mark[where] != stamp  # a position written twice kept only one stamp
        if clash.any():
            bad.append(where[clash])
        groups.append((table.writable[vi], where, rules[m]))
    return groups, (np.unique(np.concatenate(bad)) if bad else None)


def _conflicts(program: Program, table: RuleTable, pos, rules, bad, width: int, layer: int):
    """``[(row, message)]``: per row with a double write, the reference's first conflict there
    (``layer`` numbered as in traces, from 1).

    ``bad`` (sorted flat positions with a double write) gives each row's first conflicting
    position; only the pairs fired there are searched.
    """
    order = np.argsort(pos, kind="stable")
    pos, rules = pos[order], rules[order]
    rows = bad // width
    firsts = bad[np.r_[True, rows[1:] != rows[:-1]]]
    out = []
    for p, lo, hi in zip(
        firsts.tolist(),
        np.searchsorted(pos, firsts, "left").tolist(),
        np.searchsorted(pos, firsts, "right").tolist(),
    ):
        _, first, second = table.first_conflict(pos[lo:hi], rules[lo:hi])
        row, t = divmod(p, width)
        r1, r2 = program.rules[first], program.rules[second]
        out.append(
            (row, f"rules conflict on {r2.var!r} at layer {layer}, position {t}: [{r1}] and [{r2}]")
        )
    return out


def _undefined_reads(program, plan, attended, codes, valid, width, layer) -> dict[int, str]:
    """``{row: message}`` (``program.undefined == "raise"``): per row, the reference's first
    rule that would fire at some position but for an atom on an undefined head output."""
    flat_valid = valid.ravel()
    pattern = np.zeros(valid.size, dtype=np.int64)
    for i, name in enumerate(plan.guarded):
        a = attended[name].ravel()
        pattern |= (np.isnan(a) if a.dtype.kind == "f" else a == UNDEFINED).astype(np.int64) << i
    pattern[~flat_valid] = 0
    hits_pos, hits_rule = [], []
    for p in np.unique(pattern[pattern > 0]).tolist():
        table, ids, always = plan.blocked(program, p)
        where = pattern == p
        if always:
            at = np.flatnonzero(where)
            hits_pos.append(at)
            hits_rule.append(np.full(len(at), min(always), dtype=np.int64))
        if table is not None:
            pos, rules = table.fire(codes, where)
            hits_pos.append(pos)
            hits_rule.append(ids[rules])
    if not hits_pos:
        return {}
    pos, rules = np.concatenate(hits_pos), np.concatenate(hits_rule)
    if not len(pos):
        return {}
    order = np.lexsort((rules, pos))
    pos, rules = pos[order], rules[order]
    rows = pos // width
    first = np.r_[True, rows[1:] != rows[:-1]]
    out = {}
    for p, r in zip(pos[first].tolist(), rules[first].tolist()):
        row, t = divmod(p, width)
        rule = program.rules[r]
        name = next(
            v for v, _ in rule.lhs if v in plan.guarded and _undefined_at(attended[v], row, t)
        )
        out[row] = undefined_read(rule, name, layer, t)
    return out


def _undefined_at(a: np.ndarray, row: int, t: int) -> bool:
    x = a[row, t]
    return bool(np.isnan(x)) if a.dtype.kind == "f" else int(x) == UNDEFINED


def _apply(program: Program, table: RuleTable, state: dict, groups, shape, keep: bool) -> dict:
    """The state after the MLP's writes ``groups`` (see :func:`_writes`).

    ``keep`` (tracing) leaves ``state``'s arrays untouched and resets the head outputs to
    undefined; otherwise written variables are updated in place and the head outputs, which
    nothing reads before the next attention overwrites them, are left as they are.
    """
    new = dict(state)
    for name, where, rules in groups:
        arr = new[name].copy() if keep else new[name]
        np.put(arr, where, table.new_values[name][rules])
        new[name] = arr
    if keep:  # head outputs are undefined after the MLP; nothing else reads them before attention
        for n, v in program.head_outputs.items():
            new[n] = undefined_array(v, shape)
    return new


class _Usage:
    """Per sequence: which rules fired and which head output values occurred (``fired=True``)."""

    def __init__(self, program: Program, size: int):
        self.fired = np.zeros((size, len(program.rules)), dtype=bool)
        self.digits = {
            n: radix(v) + 1
            for n, v in program.head_outputs.items()
            if v.kind == "categorical" or v.values is not None
        }
        self.head_values = {n: np.zeros((size, d - 1), dtype=bool) for n, d in self.digits.items()}

    def record(self, ids, valid, codes, pos, rules, ok) -> None:
        """One layer of the active rows ``ids`` (``ok`` [rows]: the rows that completed it, or
        None for all); ``pos, rules`` are the completing rows' fired pairs."""
        rows, width = valid.shape
        if len(pos):
            self.fired[ids[pos // width], rules] = True
        real = valid if ok is None else valid & ok[:, None]
        for name, d in self.digits.items():
            keys = np.arange(rows, dtype=np.int64)[:, None] * d + codes[name].reshape(rows, width)
            seen = np.bincount(keys[real], minlength=rows * d).reshape(rows, d)[:, : d - 1] > 0
            self.head_values[name][ids] |= seen


def _renumber(rows: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """Flat positions ``pos`` (all in the kept ``rows``, bool) renumbered as if only those rows
    were there."""
    row, t = np.divmod(pos, width)
    return (np.cumsum(rows) - 1)[row] * width + t


def _layer_failures(
    program: Program,
    plan: _Plan,
    attended: dict[str, np.ndarray],
    codes: dict[str, np.ndarray],
    valid: np.ndarray,
    pos: np.ndarray,
    rules: np.ndarray,
    bad: np.ndarray | None,
    layer: int,
) -> dict[int, str]:
    """Active row -> the message of its failure in ``layer`` (1-based): an undefined read, or
    two firing rules writing one variable (``bad``); an undefined read is reported first, as
    the reference does."""
    width = valid.shape[1]
    found = {}
    if program.undefined == "raise" and plan.guarded:
        found = _undefined_reads(program, plan, attended, codes, valid, width, layer)
    if bad is not None:
        conflicts = _conflicts(program, plan.rules, pos, rules, bad, width, layer)
        found = {**dict(conflicts), **found}
    return found


def _fail_rows(
    found: dict[int, str], ids: np.ndarray, size: int, errors: str, failures: dict[int, str]
) -> np.ndarray:
    """Record the failures ``found`` (active row -> message) in ``failures`` (by original
    index) and return the rows that completed the layer (bool); with ``errors="raise"``
    raise the lowest sequence's failure instead (all active rows are at this layer)."""
    if errors == "raise":
        row = min(found)
        raise RasplabError(found[row] + _suffix(int(ids[row]), size))
    ok = np.ones(len(ids), dtype=bool)
    for row, message in found.items():
        failures[int(ids[row])] = message
        ok[row] = False
    return ok


def _retire(
    program: Program,
    ids: np.ndarray,
    valid: np.ndarray,
    state: dict[str, np.ndarray],
    ok: np.ndarray | None,
    lengths: np.ndarray,
    final_out: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Drop the rows that halted (their outputs copied into ``final_out``) or failed
    (``ok`` False) this layer; returns the rest's ``ids``, ``valid`` and ``state``, trimmed to
    their longest sequence."""
    width = valid.shape[1]
    halt = program.halt
    drop = None if ok is None else ~ok
    if halt is not None:
        done = ((state[halt.var] == halt.value) | ~valid).all(axis=1)
        if ok is not None:
            done &= ok
        if done.any():
            final_out[ids[done], :width] = state[program.output][done]
            drop = done if drop is None else drop | done
    if drop is None or not drop.any():
        return ids, valid, state
    keep = ~drop
    ids, valid = ids[keep], valid[keep]
    width = int(lengths[ids].max(initial=0))
    valid = np.ascontiguousarray(valid[:, :width])
    state = {n: np.ascontiguousarray(a[keep, :width]) for n, a in state.items()}
    return ids, valid, state


def _after_last_layer(
    program: Program,
    ids: np.ndarray,
    valid: np.ndarray,
    state: dict[str, np.ndarray],
    limit: int,
    errors: str,
    failures: dict[int, str],
    final_out: np.ndarray,
    size: int,
) -> None:
    """The rows still active after ``limit`` layers: without a halt, their outputs go into
    ``final_out``; with one, they did not halt (raised, or recorded in ``failures``)."""
    if program.halt is None:
        final_out[ids, : valid.shape[1]] = state[program.output]
        return
    message = f"program {program.name!r} did not halt within {limit} layers"
    if errors == "raise":
        raise RasplabError(message + _suffix(int(ids[0]), size))
    failures.update((int(b), message) for b in ids)


def interpret(
    program: Program,
    batch: Sequence[Sequence[int]],
    *,
    trace: bool = False,
    max_layers: int | None = None,
    fired: bool = False,
    errors: str = "raise",
) -> BatchRun:
    """Run ``program`` on every token-id sequence of ``batch`` (halting per sequence).

    Without a halt spec every sequence runs exactly ``max_layers`` layers (default: the
    program's); with one, a sequence stops after the first layer in which every position has
    ``halt.var == halt.value``, and a sequence that has not halted after ``max_layers``
    layers fails. Two firing rules writing one variable at one position fails the sequence.
    With ``errors="raise"`` (default) the first failure raises :class:`RasplabError`; with
    ``errors="mark"`` a failing sequence gets ``outputs[b] = None`` and ``errors[b]`` its
    message, and the rest of the batch completes. Malformed inputs raise either way.
    ``trace`` keeps :class:`Trace` objects and ``fired`` the rules fired and head values seen
    (see :class:`BatchRun`).
    """
    limit = program.max_layers if max_layers is None else max_layers
    if not isinstance(limit, int) or limit < 1:
        raise RasplabError(f"max_layers must be a positive int, got {limit!r}")
    if errors not in ERROR_MODES:
        raise RasplabError(f"errors must be one of: {', '.join(ERROR_MODES)}; got {errors!r}")
    plan = _plan(program)
    table = plan.rules
    tokens, lengths = _pad(program, batch)
    size = len(batch)
    state = initial_state(program, tokens)
    ids = np.arange(size)  # original index of each active row
    valid = np.arange(tokens.shape[1])[None, :] < lengths[:, None]
    layers = np.zeros(size, dtype=np.int64)
    final_out = np.zeros(tokens.shape, dtype=np.int64)
    failures: dict[int, str] = {}
    recorder = TraceRecorder(program, tokens, lengths, plan.tables, state) if trace else None
    usage = _Usage(program, size) if fired else None
    names = sorted(set(table.read) | set(usage.digits if usage else ()))
    for layer in range(limit):
        if not len(ids):
            break
        width = valid.shape[1]
        attended = {**state, **run_heads(plan.heads, state, valid, program.causal)}
        codes = _codes(program, plan, attended, names)
        pos, rules = table.fire(codes, valid.ravel())
        groups, bad = _writes(table, pos, rules, valid.size)
        found = _layer_failures(program, plan, attended, codes, valid, pos, rules, bad, layer + 1)
        ok = None  # None: every active row completes this layer; else [rows] bool
        if found:
            ok = _fail_rows(found, ids, size, errors, failures)
            groups = [(n, w[k], r[k]) for n, w, r in groups for k in [ok[w // width]]]
            kept = ok[pos // width]
            pos, rules = pos[kept], rules[kept]
        state = _apply(program, table, attended, groups, valid.shape, trace)
        layers[ids if ok is None else ids[ok]] += 1
        if usage is not None:
            usage.record(ids, valid, codes, pos, rules, ok)
        if recorder is not None:
            if ok is None:
                recorder.record(ids, attended, state, pos, rules)
            else:  # a failed sequence's trace ends with its last completed layer
                att, after = ({n: a[ok] for n, a in x.items()} for x in (attended, state))
                recorder.record(ids[ok], att, after, _renumber(ok, pos, width), rules)
        ids, valid, state = _retire(program, ids, valid, state, ok, lengths, final_out)
    if len(ids):
        _after_last_layer(program, ids, valid, state, limit, errors, failures, final_out, size)
    outputs = [None if b in failures else final_out[b, : lengths[b]].tolist() for b in range(size)]
    return BatchRun(
        outputs,
        layers.tolist(),
        recorder.traces() if recorder is not None else None,
        usage.fired if usage is not None else None,
        usage.head_values if usage is not None else None,
        [failures.get(b) for b in range(size)],
    )
