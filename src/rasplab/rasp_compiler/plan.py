"""Compile plan: which SOps compile, how selectors become scores, and where each SOp goes.

Checks every SOp against what the compiled model can compute exactly and refuses the first
that it cannot, naming it and the reason (:func:`refuse`). Then it places each SOp in a
sub-layer, counted from 1: odd sub-layers are attention (Aggregate, and the first half of
SelectorWidth), even ones MLPs (Map, SequenceMap, the second half of SelectorWidth). An SOp
goes in the first sub-layer of its kind after all its inputs exist; ``tokens``, ``indices``
and ``Full`` are embedded (sub-layer 0).

A selector compiles when it is an *and* of Selects, each on categorical keys and queries; an
``or`` / ``not`` (or anything else) compiles when all Selects under it read the same keys and
queries (it is then one Select whose predicate is the combination). Each Select becomes a
table ``[query value, key value]`` of booleans.

>>> from rasplab.rasp import rasp, lib
>>> plan = make_plan(lib.make_reverse(rasp.tokens), {"a", "b"}, 4)
>>> [(s.name, plan.sublayer[id(s)]) for s in plan.order]
[('indices', 0), ('tokens', 0), ('length', 2), ('opp_idx', 4), ('opp_idx-1', 6), ('reverse', 7)]
>>> plan.layers
4
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasplab.rasp import rasp
from rasplab.rasp.graph import nodes
from rasplab.rasp.rasp import RaspError
from rasplab.rasp.values import ValueSet, infer_values

MAX_SEQ_LEN = 10_000
"""The longest sequences compiled (the attention score scale is sized for this)."""


def refuse(sop: rasp.RASPExpr, reason: str) -> RaspError:
    """The compile error for ``sop``: one line naming it and the reason."""
    return RaspError(f"cannot compile {sop.name!r} ({type(sop).__name__}): {reason}")


@dataclass(frozen=True)
class Leaf:
    """One Select of a conjunction: ``table[qi, ki]`` says whether query value ``qi`` (index
    into the queries' value set) selects key value ``ki``."""

    keys: rasp.SOp
    queries: rasp.SOp
    table: np.ndarray


@dataclass
class Plan:
    """The checked program: SOps in order, value sets, sub-layers, selector conjunctions."""

    program: rasp.SOp
    order: list[rasp.SOp]
    values: dict[int, ValueSet]
    sublayer: dict[int, int]
    leaves: dict[int, list[Leaf]] = field(default_factory=dict)  # by id of Aggregate / width
    vocab: tuple = ()
    max_seq_len: int = 1
    causal: bool = False

    @property
    def layers(self) -> int:
        """Transformer layers (attention + MLP pairs), as Tracr counts them."""
        return max(1, (max(self.sublayer.values(), default=0) + 1) // 2)

    def numerical(self, sop: rasp.SOp) -> bool:
        """Whether ``sop`` is numerically encoded."""
        return rasp.is_numerical(sop)


def _check_categorical(user: rasp.RASPExpr, sop: rasp.SOp, role: str) -> None:
    if rasp.is_numerical(sop):
        raise refuse(
            user,
            f"its {role} {sop.name!r} is numerical but must be categorical; "
            f"wrap it in rasp.categorical(...)",
        )


def _numbers(sop: rasp.SOp, values: ValueSet) -> None:
    bad = [v for v in values.values if not isinstance(v, (bool, int, float))]
    if bad:
        raise refuse(sop, f"it is numerical but can hold the non-number {bad[0]!r}")


def _select_leaf(sel: rasp.Select, values: dict[int, ValueSet]) -> Leaf:
    for sop, role in ((sel.keys, "keys"), (sel.queries, "queries")):
        _check_categorical(sel, sop, role)
        if values[id(sop)].may_none:
            raise refuse(
                sel,
                f"its {role} {sop.name!r} can be None (an Aggregate over a possibly empty "
                "selection), and a compiled selector cannot test None",
            )
    kv, qv = values[id(sel.keys)].values, values[id(sel.queries)].values
    table = np.zeros((len(qv), len(kv)), dtype=bool)
    for qi, q in enumerate(qv):
        for ki, k in enumerate(kv):
            try:
                table[qi, ki] = bool(sel.predicate(k, q))
            except Exception as err:  # the user's predicate failed on a possible pair
                raise refuse(sel, f"its predicate fails on key {k!r}, query {q!r}: {err}") from err
    return Leaf(sel.keys, sel.queries, table)


def _selects(sel: rasp.Selector) -> list[rasp.Select]:
    if isinstance(sel, rasp.Select):
        return [sel]
    if isinstance(sel, rasp.ConstantSelector):
        raise refuse(sel, "a ConstantSelector is for tests only (Tracr refuses it too)")
    return [s for child in sel.children for s in _selects(child)]


def _combined(sel: rasp.Selector, table_of: dict[int, np.ndarray]) -> np.ndarray:
    if isinstance(sel, rasp.Select):
        return table_of[id(sel)]
    if isinstance(sel, rasp.SelectorAnd):
        return _combined(sel.fst, table_of) & _combined(sel.snd, table_of)
    if isinstance(sel, rasp.SelectorOr):
        return _combined(sel.fst, table_of) | _combined(sel.snd, table_of)
    if isinstance(sel, rasp.SelectorNot):
        return ~_combined(sel.inner, table_of)
    raise refuse(sel, "not a selector the compiler knows")


def conjunction(sel: rasp.Selector, values: dict[int, ValueSet]) -> list[Leaf]:
    """``sel`` as an *and* of :class:`Leaf` tables, or a refusal naming it."""
    selects = _selects(sel)
    same = all(s.keys is selects[0].keys and s.queries is selects[0].queries for s in selects)
    if same:
        tables = {id(s): _select_leaf(s, values).table for s in selects}
        return [Leaf(selects[0].keys, selects[0].queries, _combined(sel, tables))]
    if isinstance(sel, rasp.SelectorAnd):
        return conjunction(sel.fst, values) + conjunction(sel.snd, values)
    raise refuse(
        sel,
        "it combines Selects on different keys or queries with 'or' or 'not'; only 'and' "
        "of such Selects compiles (or give them the same keys and queries)",
    )


def _positional(sel: rasp.Selector, n: int) -> np.ndarray | None:
    """Which key positions ``j`` query position ``i`` can select (``[i, j]``), where that is
    known from positions alone; None where it depends on values."""
    if isinstance(sel, rasp.Select):
        if sel.keys is rasp.indices and sel.queries is rasp.indices:
            return np.array([[bool(sel.predicate(j, i)) for j in range(n)] for i in range(n)])
        return None
    if isinstance(sel, rasp.SelectorAnd):
        a, b = _positional(sel.fst, n), _positional(sel.snd, n)
        return a if b is None else b if a is None else a & b
    if isinstance(sel, rasp.SelectorOr):
        a, b = _positional(sel.fst, n), _positional(sel.snd, n)
        return None if a is None or b is None else a | b
    return None  # SelectorNot of anything not purely positional: unknown


def _check_causal(sop: rasp.SOp, sel: rasp.Selector, n: int) -> None:
    mask = _positional(sel, n)
    if mask is None or np.triu(mask, 1).any():
        raise refuse(
            sop,
            "causal=True, but its selector can select a later position (only selectors "
            "whose indices-vs-indices part rules out every key after the query compile "
            "causally)",
        )


def _check(sop: rasp.SOp, plan: Plan) -> None:
    """Refuse ``sop`` if the compiled model cannot compute it exactly."""
    vals = plan.values
    if rasp.is_numerical(sop):
        _numbers(sop, vals[id(sop)])
        if vals[id(sop)].may_none:
            raise refuse(
                sop,
                "it is numerical but can be None (it reads an Aggregate over a possibly "
                "empty selection); make it categorical",
            )
    if isinstance(sop, rasp.ConstantSOp):
        raise refuse(sop, "a ConstantSOp is for tests only (Tracr refuses it too)")
    if isinstance(sop, rasp.LengthType):
        raise refuse(sop, "use lib.make_length() (a SelectorWidth), as Tracr programs do")
    if isinstance(sop, rasp.Full) and sop.fill is None:
        raise refuse(sop, "Full(None) holds no value")
    if isinstance(sop, rasp.SequenceMap):
        linear = isinstance(sop, rasp.LinearSequenceMap) and rasp.is_numerical(sop)
        if not linear:
            for child, role in ((sop.fst, "first input"), (sop.snd, "second input")):
                if rasp.is_numerical(child):
                    raise refuse(
                        sop,
                        f"its {role} {child.name!r} is numerical; a SequenceMap needs "
                        "categorical inputs (a numerical LinearSequenceMap takes numerical ones)",
                    )
        else:
            for child in (sop.fst, sop.snd):
                _numbers(child, vals[id(child)])
    if isinstance(sop, (rasp.Aggregate, rasp.SelectorWidth)):
        plan.leaves[id(sop)] = conjunction(sop.selector, vals)
        if plan.causal:
            _check_causal(sop, sop.selector, plan.max_seq_len)
    if isinstance(sop, rasp.Aggregate):
        if rasp.is_numerical(sop):
            _numbers(sop.sop, vals[id(sop.sop)])
            if sop.default not in (None, 0):
                raise refuse(
                    sop,
                    f"a numerical Aggregate gives 0 where nothing is selected, not "
                    f"default={sop.default!r}; use default=0",
                )
        else:
            _check_categorical(sop, sop.sop, "input")
            if sop.default is not None:
                raise refuse(
                    sop,
                    f"a categorical Aggregate gives None where nothing is selected, not "
                    f"default={sop.default!r}; use default=None",
                )


def _place(sop: rasp.SOp, at: dict[int, int], leaves: dict[int, list[Leaf]]) -> int:
    """The sub-layer whose output holds ``sop``."""
    if not sop.children:
        return 0
    if isinstance(sop, (rasp.Aggregate, rasp.SelectorWidth)):
        reads = [s for leaf in leaves[id(sop)] for s in (leaf.keys, leaf.queries)]
        if isinstance(sop, rasp.Aggregate):
            reads.append(sop.sop)
        ready = max(at[id(s)] for s in reads)
        attention = ready + 1 if ready % 2 == 0 else ready + 2
        return attention + (1 if isinstance(sop, rasp.SelectorWidth) else 0)
    ready = max(at[id(s)] for s in sop.children)
    return ready + 2 if ready % 2 == 0 else ready + 1


def make_plan(
    program: rasp.SOp, vocab: Iterable[Any], max_seq_len: int, causal: bool = False
) -> Plan:
    """Check ``program`` for compilation and place its SOps; refuses with a :class:`RaspError`."""
    if not isinstance(program, rasp.SOp):
        raise RaspError(f"compile an SOp (the program's output), got {program!r}")
    if not isinstance(max_seq_len, int) or not 1 <= max_seq_len <= MAX_SEQ_LEN:
        raise RaspError(f"max_seq_len must be an int in 1..{MAX_SEQ_LEN}, got {max_seq_len!r}")
    vocab = tuple(vocab)
    if not vocab:
        raise RaspError("the vocabulary is empty; give at least one token")
    values = infer_values(program, vocab, max_seq_len)
    order = [e for e in nodes(program) if isinstance(e, rasp.SOp)]
    plan = Plan(program, order, values, {}, vocab=vocab, max_seq_len=max_seq_len, causal=causal)
    for sop in order:
        _check(sop, plan)
        plan.sublayer[id(sop)] = _place(sop, plan.sublayer, plan.leaves)
    return plan
