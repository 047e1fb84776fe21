"""The RASP reference evaluator: every expression of a program on one input, exactly.

Semantics (Tracr's, with the two cases Tracr leaves loose made explicit):

* ``Map`` and ``SequenceMap`` give None where an input is None, else ``f`` of the inputs;
* ``Select`` calls ``predicate(key, query)``; ``SelectorWidth`` counts the selected keys;
* a numerical ``Aggregate`` is the mean of the selected values, its ``default`` (0 when
  None) where nothing is selected;
* a categorical ``Aggregate`` is the one value its selected positions share, its
  ``default`` (None) where nothing is selected; selecting two *different* values is an
  error naming the Aggregate and the position (Tracr's evaluator averages numbers there and
  its compiled model gives something else).

Every expression is evaluated once per input, however many parents read it.

>>> from rasplab.rasp import rasp
>>> prev = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1),
...                       rasp.tokens).named("prev")
>>> evaluate(prev, ["a", "b", "c"])
[None, 'a', 'b']
>>> same = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE),
...                       rasp.indices).named("same")
>>> evaluate(same, ["a", "b"])
Traceback (most recent call last):
rasplab.rasp.rasp.RaspError: categorical Aggregate 'same' selects different values (0 and 1) at position 0; make it numerical to average them, or select positions that agree
"""

from __future__ import annotations

from collections.abc import Sequence

from rasplab.rasp import rasp
from rasplab.rasp.graph import nodes
from rasplab.rasp.rasp import RaspError, RASPExpr, Value


def evaluate(program: RASPExpr, xs: Sequence[Value]) -> list:
    """The value of ``program`` on ``xs`` (a list per position, or a selector matrix)."""
    return evaluate_all(program, xs)[id(program)]


def evaluate_all(
    program: RASPExpr, xs: Sequence[Value], order: Sequence[RASPExpr] | None = None
) -> dict[int, list]:
    """Every expression's value on ``xs``, keyed by ``id(expr)``; ``order`` (from
    :func:`~rasplab.rasp.graph.nodes`) saves walking the program again for each input."""
    xs = list(xs)
    out: dict[int, list] = {}
    for expr in nodes(program) if order is None else order:
        out[id(expr)] = _one(expr, xs, out)
    return out


def _one(expr: RASPExpr, xs: list, seen: dict[int, list]) -> list:
    """``expr`` on ``xs`` given its children's values in ``seen``."""
    n = len(xs)
    if isinstance(expr, rasp.TokensType):
        return list(xs)
    if isinstance(expr, rasp.IndicesType):
        return list(range(n))
    if isinstance(expr, rasp.LengthType):
        return [n] * n
    if isinstance(expr, rasp.Full):
        return [expr.fill] * n
    if isinstance(expr, (rasp.ConstantSOp, rasp.ConstantSelector)):
        if expr.check_length and len(expr.value) != n:
            raise RaspError(f"{expr.label} has {len(expr.value)} positions but the input has {n}")
        return [list(r) for r in expr.value] if isinstance(expr, rasp.Selector) else expr.value
    if isinstance(expr, rasp.Map):
        return [None if x is None else expr.f(x) for x in seen[id(expr.inner)]]
    if isinstance(expr, rasp.SequenceMap):
        pairs = zip(seen[id(expr.fst)], seen[id(expr.snd)])
        return [None if x is None or y is None else expr.f(x, y) for x, y in pairs]
    if isinstance(expr, rasp.Select):
        keys, queries = seen[id(expr.keys)], seen[id(expr.queries)]
        return [[bool(expr.predicate(k, q)) for k in keys] for q in queries]
    if isinstance(expr, rasp.SelectorAnd):
        a, b = seen[id(expr.fst)], seen[id(expr.snd)]
        return [[x and y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]
    if isinstance(expr, rasp.SelectorOr):
        a, b = seen[id(expr.fst)], seen[id(expr.snd)]
        return [[x or y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]
    if isinstance(expr, rasp.SelectorNot):
        return [[not x for x in row] for row in seen[id(expr.inner)]]
    if isinstance(expr, rasp.SelectorWidth):
        return [sum(row) for row in seen[id(expr.selector)]]
    if isinstance(expr, rasp.Aggregate):
        return _aggregate(expr, seen[id(expr.selector)], seen[id(expr.sop)])
    raise RaspError(f"cannot evaluate {expr!r}: not a RASP expression this evaluator knows")


def _aggregate(expr: rasp.Aggregate, selection: list, values: list) -> list:
    numeric = rasp.is_numerical(expr)
    empty = expr.default if expr.default is not None else (0 if numeric else None)
    out = []
    for i, row in enumerate(selection):
        chosen = [v for s, v in zip(row, values) if s]
        if not chosen:
            out.append(empty)
        elif numeric:
            if any(v is None for v in chosen):
                raise RaspError(
                    f"numerical Aggregate {expr.name!r} averages a None at position {i}"
                )
            out.append(sum(chosen) / len(chosen))
        else:
            first = chosen[0]
            other = next((v for v in chosen if v != first), first)
            if other != first:
                raise RaspError(
                    f"categorical Aggregate {expr.name!r} selects different values "
                    f"({first!r} and {other!r}) at position {i}; make it numerical to average "
                    "them, or select positions that agree"
                )
            out.append(first)
    return out
