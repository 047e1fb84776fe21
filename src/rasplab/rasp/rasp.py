"""RASP expressions under Tracr's public names: SOps, selectors, encodings, annotations.

An SOp maps an input sequence to a sequence of the same length; a selector maps it to a
boolean matrix ``[query][key]``. Programs are built from ``tokens`` and ``indices`` with
``Map``, ``SequenceMap``, ``Select``, ``Aggregate`` and ``SelectorWidth``; calling an SOp (or
:func:`evaluate`) runs the reference evaluator (:mod:`rasplab.rasp.evaluate`).

A predicate is called ``predicate(key, query)``, as in Tracr: ``Comparison.LT`` selects the
keys *smaller than* the query.

>>> smaller = Select(tokens, tokens, Comparison.LT)
>>> SelectorWidth(smaller)([3, 1, 2])
[2, 0, 1]
>>> numerical(Aggregate(Select(indices, indices, Comparison.LEQ), numerical(tokens == 1),
...                     default=0))([1, 0, 1, 1])
[1.0, 0.5, 0.6666666666666666, 0.75]
>>> (tokens + 1).named("succ").label.startswith("succ_")
True
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from rasplab.errors import RasplabError

Value = Any
"""A value an SOp may hold at one position: a hashable (int, float, str, bool, tuple) or None."""
SelectorValue = list[list[bool]]


class RaspError(RasplabError):
    """A malformed RASP program, or an input it cannot run on."""


DEFAULT_ANNOTATORS: dict[str, Callable[[RASPExpr], Any]] = {}
"""Lazily computed default annotations by key (``name``, ``encoding``), as in Tracr."""


class _Annotations(Mapping):
    """An expression's annotations: given ones, plus defaults computed on first read."""

    def __init__(self, expr: RASPExpr, **given: Any) -> None:
        self._expr = expr
        self._given = dict(given)

    def __getitem__(self, key: str) -> Any:
        if key not in self._given:
            if key not in DEFAULT_ANNOTATORS:
                raise KeyError(f"no annotation {key!r}; known: {sorted(self.keys())}")
            self._given[key] = DEFAULT_ANNOTATORS[key](self._expr)
        return self._given[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)


class RASPExpr:
    """Any RASP expression; ``unique_id`` numbers expressions in creation order."""

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self._annotations = _Annotations(self)
        self.unique_id: int = next(RASPExpr._ids)

    __hash__ = object.__hash__  # SOps override == to build Maps; identity stays the hash

    @property
    def annotations(self) -> Mapping[str, Any]:
        """Annotations (``name``, ``encoding``, any user key)."""
        return self._annotations

    @annotations.setter
    def annotations(self, value: Mapping[str, Any]) -> None:
        self._annotations = _Annotations(self, **value)

    @property
    def name(self) -> str:
        """The expression's name (a default by class until :meth:`named`)."""
        return self.annotations["name"]

    @property
    def label(self) -> str:
        """``name_id``: unique within a process."""
        return f"{self.name}_{self.unique_id}"

    @property
    def children(self) -> Sequence[RASPExpr]:
        """The expressions this one reads."""
        return []

    def named(self, name: str) -> RASPExpr:
        """This expression, renamed (returns ``self``)."""
        return annotate(self, name=name)

    def annotated(self, **annotations: Any) -> RASPExpr:
        """This expression with more annotations (returns ``self``)."""
        return annotate(self, **annotations)


def annotate(expr: RASPExpr, **annotations: Any) -> RASPExpr:
    """Add ``annotations`` to ``expr`` in place (new keys override old ones); returns ``expr``."""
    if not isinstance(expr, RASPExpr):
        raise RaspError(f"annotate needs a RASP expression, got {expr!r}")
    expr.annotations = {**expr.annotations, **annotations}
    return expr


def _check_sop(x: Any, who: str, what: str) -> None:
    if not isinstance(x, SOp):
        raise RaspError(f"{who} needs an SOp as {what}, got {x!r}")


def _check_fn(f: Any, who: str) -> None:
    if not callable(f) or isinstance(f, RASPExpr):
        raise RaspError(f"{who} needs a function as its first argument, got {f!r}")


class SOp(RASPExpr):
    """A sequence operation; arithmetic and comparisons with constants build Maps."""

    def __call__(self, xs: Sequence[Value]) -> list[Value]:
        return evaluate(self, xs)

    def __lt__(self, other: Value) -> SOp:
        return Map(lambda x: x < other, self)

    def __le__(self, other: Value) -> SOp:
        return Map(lambda x: x <= other, self)

    def __eq__(self, other: Value) -> SOp:  # type: ignore[override]
        return Map(lambda x: x == other, self)

    def __ne__(self, other: Value) -> SOp:  # type: ignore[override]
        return Map(lambda x: x != other, self)

    def __gt__(self, other: Value) -> SOp:
        return Map(lambda x: x > other, self)

    def __ge__(self, other: Value) -> SOp:
        return Map(lambda x: x >= other, self)

    def __invert__(self) -> SOp:
        return Map(lambda x: not x, self)

    __hash__ = RASPExpr.__hash__


def _binary(op: Callable[[Any, Any], Any], swap: bool) -> Callable[[SOp, Any], SOp]:
    """The dunder method applying ``op`` with a constant (Map) or another SOp (SequenceMap)."""

    def method(self: SOp, other: Any) -> SOp:
        if isinstance(other, SOp):
            return (
                SequenceMap(lambda x, y: op(y, x), self, other)
                if swap
                else SequenceMap(op, self, other)
            )
        return Map(lambda x: op(other, x), self) if swap else Map(lambda x: op(x, other), self)

    return method


for _name, _op in {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
}.items():
    setattr(SOp, f"__{_name}__", _binary(_op, swap=False))
    setattr(SOp, f"__r{_name}__", _binary(_op, swap=True))


class TokensType(SOp):
    """The input tokens."""

    @property
    def label(self) -> str:
        return "tokens"

    def __repr__(self) -> str:
        return "tokens"


class IndicesType(SOp):
    """The position of each token, from 0."""

    @property
    def label(self) -> str:
        return "indices"

    def __repr__(self) -> str:
        return "indices"


class LengthType(SOp):
    """The input's length at every position (evaluator only; compile ``lib.make_length()``)."""

    @property
    def label(self) -> str:
        return "length"

    def __repr__(self) -> str:
        return "length"


tokens = TokensType()
indices = IndicesType()
length = LengthType()


class Map(SOp):
    """``f`` applied at every position; a Map of a Map becomes one Map (``simplify``)."""

    def __init__(self, f: Callable[[Value], Value], inner: SOp, simplify: bool = True) -> None:
        super().__init__()
        _check_fn(f, "Map")
        _check_sop(inner, "Map", "its input")
        if simplify and isinstance(inner, Map):
            first = inner.f
            self.f: Callable[[Value], Value] = lambda x: f(first(x))
            self.inner: SOp = inner.inner
        else:
            self.f, self.inner = f, inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


class SequenceMap(SOp):
    """``f(x, y)`` of two SOps at every position."""

    def __init__(self, f: Callable[[Value, Value], Value], fst: SOp, snd: SOp) -> None:
        super().__init__()
        _check_fn(f, "SequenceMap")
        _check_sop(fst, "SequenceMap", "its first input")
        _check_sop(snd, "SequenceMap", "its second input")
        self.f, self.fst, self.snd = f, fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class LinearSequenceMap(SequenceMap):
    """``fst_fac * x + snd_fac * y`` at every position."""

    def __init__(self, fst: SOp, snd: SOp, fst_fac: float, snd_fac: float) -> None:
        super().__init__(lambda x, y: fst_fac * x + snd_fac * y, fst, snd)
        self.fst_fac, self.snd_fac = fst_fac, snd_fac


class Full(SOp):
    """``fill`` at every position."""

    def __init__(self, fill: Value) -> None:
        super().__init__()
        self.fill = fill


class ConstantSOp(SOp):
    """A fixed sequence (for tests; the compiler refuses it, as Tracr's does)."""

    def __init__(self, value: Sequence[Value], check_length: bool = True) -> None:
        super().__init__()
        self.value, self.check_length = list(value), check_length


def sop_not(sop: SOp) -> SOp:
    """``not x`` at every position."""
    return Map(lambda x: not x, sop)


class Comparison(enum.Enum):
    """The comparison predicates of ``Select``, called ``(key, query)``: LT is ``key < query``."""

    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "True"
    FALSE = "False"

    def __call__(self, key: Value, query: Value) -> bool:
        if key is None or query is None:
            raise RaspError(
                f"Comparison.{self.name} got a None {'key' if key is None else 'query'}"
            )
        return _COMPARE[self](key, query)


_COMPARE: dict[Comparison, Callable[[Any, Any], bool]] = {
    Comparison.EQ: lambda k, q: k == q,
    Comparison.LT: lambda k, q: k < q,
    Comparison.LEQ: lambda k, q: k <= q,
    Comparison.GT: lambda k, q: k > q,
    Comparison.GEQ: lambda k, q: k >= q,
    Comparison.NEQ: lambda k, q: k != q,
    Comparison.TRUE: lambda k, q: True,
    Comparison.FALSE: lambda k, q: False,
}


class Selector(RASPExpr):
    """A selection matrix ``[query][key]``; ``&``, ``|`` and ``~`` combine selectors."""

    def __call__(self, xs: Sequence[Value]) -> SelectorValue:
        return evaluate(self, xs)

    def __and__(self, other: Selector) -> Selector:
        return selector_and(self, other)

    def __or__(self, other: Selector) -> Selector:
        return selector_or(self, other)

    def __invert__(self) -> Selector:
        return selector_not(self)


class Select(Selector):
    """Query position i selects key position j where ``predicate(keys[j], queries[i])``."""

    def __init__(self, keys: SOp, queries: SOp, predicate: Callable[[Value, Value], bool]) -> None:
        super().__init__()
        _check_sop(keys, "Select", "its keys")
        _check_sop(queries, "Select", "its queries")
        if not callable(predicate):
            raise RaspError(f"Select needs a predicate (key, query) -> bool, got {predicate!r}")
        self.keys, self.queries, self.predicate = keys, queries, predicate

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.keys, self.queries]


class ConstantSelector(Selector):
    """A fixed selection matrix (for tests; the compiler refuses it)."""

    def __init__(self, value: SelectorValue, check_length: bool = True) -> None:
        super().__init__()
        self.value, self.check_length = [list(r) for r in value], check_length


class _SelectorPair(Selector):
    """A selector combining two selectors position by position."""

    def __init__(self, fst: Selector, snd: Selector) -> None:
        super().__init__()
        _check_selector(fst, type(self).__name__)
        _check_selector(snd, type(self).__name__)
        self.fst, self.snd = fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class SelectorAnd(_SelectorPair):
    """Selected by both."""


class SelectorOr(_SelectorPair):
    """Selected by either."""


class SelectorNot(Selector):
    """Not selected by ``inner``."""

    def __init__(self, inner: Selector) -> None:
        super().__init__()
        _check_selector(inner, "SelectorNot")
        self.inner = inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


def _check_selector(x: Any, who: str) -> None:
    if not isinstance(x, Selector):
        raise RaspError(f"{who} needs selectors, got {x!r}")


def selector_not(inner: Selector, simplify: bool = True) -> Selector:
    """``~inner``; a Select becomes a Select with the negated predicate."""
    if simplify and isinstance(inner, Select):
        pred = inner.predicate
        return Select(inner.keys, inner.queries, lambda k, q: not pred(k, q))
    return SelectorNot(inner)


def _merged(fst: Select, snd: Select, both: Callable[[bool, bool], bool]) -> Select | None:
    """One Select equal to ``both(fst, snd)`` when they read the same keys and queries (a
    ``Full`` side is folded into its predicate and matches any SOp), else None."""
    p1, p2 = fst.predicate, snd.predicate
    keys = queries = None
    if isinstance(fst.keys, Full):
        keys, p1 = snd.keys, (lambda k, q, p=p1, c=fst.keys.fill: p(c, q))
    if isinstance(snd.keys, Full):
        keys, p2 = fst.keys, (lambda k, q, p=p2, c=snd.keys.fill: p(c, q))
    if isinstance(fst.queries, Full):
        queries, p1 = snd.queries, (lambda k, q, p=p1, c=fst.queries.fill: p(k, c))
    if isinstance(snd.queries, Full):
        queries, p2 = fst.queries, (lambda k, q, p=p2, c=snd.queries.fill: p(k, c))
    if fst.keys is snd.keys:
        keys = fst.keys
    if fst.queries is snd.queries:
        queries = fst.queries
    if keys is None or queries is None:
        return None
    return Select(keys, queries, lambda k, q: both(p1(k, q), p2(k, q)))


def selector_and(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    """``fst & snd``; two Selects on the same keys and queries become one Select."""
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merged(fst, snd, lambda a, b: a and b)
        if merged is not None:
            return merged
    return SelectorAnd(fst, snd)


def selector_or(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    """``fst | snd``; two Selects on the same keys and queries become one Select."""
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merged(fst, snd, lambda a, b: a or b)
        if merged is not None:
            return merged
    return SelectorOr(fst, snd)


class SelectorWidth(SOp):
    """How many keys the selector selects, at every query position."""

    def __init__(self, selector: Selector) -> None:
        super().__init__()
        _check_selector(selector, "SelectorWidth")
        self.selector = selector

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector]


class Aggregate(SOp):
    """The selected values of ``sop``: their mean (numerical), or their one common value
    (categorical); ``default`` where nothing is selected (None; a numerical one gives 0)."""

    def __init__(self, selector: Selector, sop: SOp, default: Value = None) -> None:
        super().__init__()
        _check_selector(selector, "Aggregate")
        _check_sop(sop, "Aggregate", "the values it aggregates")
        if default is not None and not isinstance(default, (str, float, bool, int)):
            raise RaspError(f"Aggregate default must be None, str, int, float or bool: {default!r}")
        self.selector, self.sop, self.default = selector, sop, default

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector, self.sop]


class Encoding(enum.Enum):
    """How an SOp sits in the residual stream: one-hot (categorical) or one number."""

    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


def numerical(sop: SOp) -> SOp:
    """Mark ``sop`` numerically encoded (returns it)."""
    _check_sop(sop, "numerical", "its argument")
    return annotate(sop, encoding=Encoding.NUMERICAL)


def categorical(sop: SOp) -> SOp:
    """Mark ``sop`` categorically encoded, the default (returns it)."""
    _check_sop(sop, "categorical", "its argument")
    return annotate(sop, encoding=Encoding.CATEGORICAL)


def get_encoding(sop: SOp) -> Encoding:
    """The SOp's encoding."""
    return sop.annotations["encoding"]


def is_numerical(sop: SOp) -> bool:
    """Whether the SOp is numerically encoded."""
    return get_encoding(sop) == Encoding.NUMERICAL


def is_categorical(sop: SOp) -> bool:
    """Whether the SOp is categorically encoded."""
    return get_encoding(sop) == Encoding.CATEGORICAL


def _default_encoding(expr: RASPExpr) -> Encoding:
    if not isinstance(expr, SOp):
        raise RaspError(f"{expr.label} is a selector; only SOps have an encoding")
    return Encoding.CATEGORICAL


_DEFAULT_NAMES: tuple[tuple[type, str], ...] = (
    (TokensType, "tokens"),
    (IndicesType, "indices"),
    (LengthType, "length"),
    (LinearSequenceMap, "linear_sequence_map"),
    (SequenceMap, "sequence_map"),
    (Map, "map"),
    (Full, "full"),
    (ConstantSOp, "constant_sop"),
    (SelectorWidth, "selector_width"),
    (Aggregate, "aggregate"),
    (Select, "select"),
    (SelectorOr, "selector_or"),
    (SelectorAnd, "selector_and"),
    (SelectorNot, "selector_not"),
    (ConstantSelector, "constant_selector"),
)


def _default_name(expr: RASPExpr) -> str:
    for cls, name in _DEFAULT_NAMES:
        if isinstance(expr, cls):
            return name
    return "sop" if isinstance(expr, SOp) else "selector"


DEFAULT_ANNOTATORS["name"] = _default_name
DEFAULT_ANNOTATORS["encoding"] = _default_encoding


def evaluate(expr: RASPExpr, xs: Sequence[Value]) -> list:
    """Run ``expr`` on the input ``xs`` with the reference evaluator (Tracr's convention)."""
    # import cycle: rasplab.rasp.evaluate imports this module
    from rasplab.rasp.evaluate import evaluate as run

    return run(expr, xs)
