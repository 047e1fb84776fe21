"""Writing C-RASP programs as plain Python expressions.

Every operation of Definition 8 is a function or an operator on two expression types,
:class:`Bool` (Boolean-valued operations) and :class:`Count` (count-valued operations):

=====================================  ===============================================
seed notation                          Python
=====================================  ===============================================
``Q_a(i)``                             ``Q("a")`` (``a`` a symbol of the alphabet)
``NOT P``, ``P AND R``, ``P OR R``     ``~P``, ``P & R``, ``P | R``, ``all_of(...)``,
                                       ``any_of(...)``
Boolean constant                       ``constant(True)``
periodic ``psi(i)``                    ``periodic(m, r1, r2, ...)`` (i mod m in {r1, ...})
``C1 <= C2``, ``C <= 3``               ``C1 <= C2``, ``C <= 3`` (also < == != > >=)
``#[j <= i] P(j)``                     ``count(P)``
``#[j <= i, j = i-1] P(j)``            ``count(P, offset(1))``, ``count(P, window(2))``
``P ? C1 : C2``                        ``cond(P, C1, C2)``
``C1 + C2``, ``C1 - C2``, ``c``        ``C1 + C2``, ``C1 - 2``, ``constant(3)``
=====================================  ===============================================

Each expression may be named (``name=`` or ``.named(...)``); unnamed ones get a name from their
kind (``Q_a`` for initial operations, ``_count3`` and the like otherwise), and identical
unnamed subexpressions become one operation. :func:`crasp_program` turns an output expression (and
optionally a readout) into the validated IR of :mod:`rasplab.crasp.ir`. Mixing sorts fails at
once with a message naming both sides, e.g. a count used where a Boolean is expected.

>>> ones, zeros = count(Q("1"), name="ones"), count(Q("0"), name="zeros")
>>> bad = ((Q("0") & (ones != zeros)) | (Q("1") & (ones != zeros + 1))).named("bad")
>>> accept = ((count(bad) == 0) & (ones == zeros)).named("accept")
>>> p = crasp_program("tomita2", accept, alphabet="01")
>>> p.crasp_class, p.output, len(p.ops)
('C-RASP[]', 'accept', 15)
>>> Q("0") & ones
Traceback (most recent call last):
rasplab.errors.RasplabError: AND expects Booleans, but its right operand ones is a count
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from rasplab.crasp.ir import CraspProgram, Op, Periodic, Readout, Relation, require_local
from rasplab.deprecation import old_names
from rasplab.errors import RasplabError
from rasplab.tasks.base import BOS

_SYMBOL_NAME = re.compile(r"[^A-Za-z0-9_]")


class Expr:
    """A node of a C-RASP expression DAG: kind, argument expressions and parameters."""

    __slots__ = ("kind", "args", "params", "name")
    sort = ""

    def __init__(self, kind: str, args: Sequence[Expr] = (), name: str | None = None, **params):
        self.kind, self.args, self.params, self.name = kind, tuple(args), params, name

    def named(self, name: str) -> Expr:
        """Give this operation its name (in place) and return it."""
        if self.name is not None and self.name != name:
            raise RasplabError(f"operation {self.name!r} cannot be renamed to {name!r}")
        self.name = name
        return self

    def __bool__(self) -> bool:
        raise RasplabError(
            "a C-RASP expression has no Python truth value: use & | ~ (not and/or/not), "
            "and write chained comparisons as two comparisons joined by &"
        )

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name or self.kind})"

    def _label(self) -> str:
        return self.name or f"<{self.kind}>"


def _need(x: object, sort: type, what: str, side: str = "operand") -> Expr:
    """``x`` as an expression of the wanted sort, or a one-line error naming the mismatch."""
    if sort is Count and isinstance(x, int) and not isinstance(x, bool):
        return constant(x)
    if sort is Bool and isinstance(x, bool):
        return constant(x)
    if isinstance(x, sort):
        return x
    want = "Booleans" if sort is Bool else "counts"
    if isinstance(x, Expr):
        got = "a count" if isinstance(x, Count) else "a Boolean"
        raise RasplabError(f"{what} expects {want}, but its {side} {x._label()} is {got}")
    raise RasplabError(f"{what} expects {want}, but its {side} is {type(x).__name__} {x!r}")


class Bool(Expr):
    """A Boolean-valued operation (one truth value per position)."""

    __slots__ = ()
    sort = "bool"

    def __and__(self, other: Bool) -> Bool:
        return Bool("and", (self, _need(other, Bool, "AND", "right operand")))

    def __rand__(self, other: Bool) -> Bool:
        return Bool("and", (_need(other, Bool, "AND", "left operand"), self))

    def __or__(self, other: Bool) -> Bool:
        return Bool("or", (self, _need(other, Bool, "OR", "right operand")))

    def __ror__(self, other: Bool) -> Bool:
        return Bool("or", (_need(other, Bool, "OR", "left operand"), self))

    def __invert__(self) -> Bool:
        return Bool("not", (self,))

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        raise RasplabError(
            f"Booleans cannot be compared with == ({self._label()}); C-RASP compares counts"
        )

    __ne__ = __eq__
    __hash__ = Expr.__hash__


def _compare(op: str):
    def method(self: Count, other: Count | int) -> Bool:
        if isinstance(other, int) and not isinstance(other, bool):
            return Bool("compare_const", (self,), comparison=op, value=int(other))
        right = _need(other, Count, f"comparison {op}", "right side")
        return Bool("compare", (self, right), comparison=op)

    method.__name__ = f"compare {op}"
    return method


class Count(Expr):
    """A count-valued operation (one integer per position)."""

    __slots__ = ()
    sort = "count"

    def __add__(self, other: Count | int) -> Count:
        return Count("add", (self, _need(other, Count, "+", "right operand")))

    def __radd__(self, other: Count | int) -> Count:
        return Count("add", (_need(other, Count, "+", "left operand"), self))

    def __sub__(self, other: Count | int) -> Count:
        return Count("sub", (self, _need(other, Count, "-", "right operand")))

    def __rsub__(self, other: Count | int) -> Count:
        return Count("sub", (_need(other, Count, "-", "left operand"), self))

    __lt__ = _compare("<")
    __le__ = _compare("<=")
    __eq__ = _compare("==")  # type: ignore[assignment]
    __ne__ = _compare("!=")  # type: ignore[assignment]
    __gt__ = _compare(">")
    __ge__ = _compare(">=")
    __hash__ = Expr.__hash__


def Q(symbol: str, name: str | None = None) -> Bool:  # noqa: N802 (the seed's name)
    """The initial operation Q_symbol(i): the symbol at position i is ``symbol``."""
    if not isinstance(symbol, str):
        raise RasplabError(f"Q takes a symbol string, got {symbol!r}")
    return Bool("initial", (), name, symbol=symbol)


def constant(value: bool | int, name: str | None = None) -> Expr:
    """A Boolean constant (``True``/``False``) or a count constant (an integer)."""
    if isinstance(value, bool):
        return Bool("bool_const", (), name, value=value)
    if isinstance(value, int):
        return Count("count_const", (), name, value=int(value))
    raise RasplabError(f"a constant is a bool or an int, got {value!r}")


def periodic(modulus: int, *residues: int, name: str | None = None) -> Bool:
    """The periodic positional predicate ``i mod modulus in residues``."""
    return Bool("periodic", (), name, period=Periodic(modulus, frozenset(residues)))


def offset(k: int) -> Relation:
    """The local relation ``j = i - k``."""
    return Relation(frozenset({k}))


def window(k: int) -> Relation:
    """The local relation ``i - k <= j <= i``."""
    return Relation(frozenset(range(k + 1)))


def count(p: Bool, relation: Relation | None = None, name: str | None = None) -> Count:
    """The counting operation ``#[j <= i, relation(i, j)] p(j)`` (no relation: every j <= i)."""
    p = _need(p, Bool, "count", "argument")
    if relation is not None and not isinstance(relation, Relation):
        raise RasplabError(
            f"count's relation must be a Relation (offset(k), window(k), ...), not "
            f"{type(relation).__name__}; arbitrary functions of (i, j) are not C-RASP relations"
        )
    if relation is not None:
        require_local(relation, f"count {name or ''}".strip())
    return Count("count", (p,), name, relation=relation)


def cond(p: Bool, if_true: Count | int, if_false: Count | int, name: str | None = None) -> Count:
    """The conditional ``p ? if_true : if_false``."""
    args = (
        _need(p, Bool, "cond", "condition"),
        _need(if_true, Count, "cond", "true branch"),
        _need(if_false, Count, "cond", "false branch"),
    )
    return Count("cond", args, name)


def all_of(*ps: Bool, name: str | None = None) -> Bool:
    """``p1 AND ... AND pk`` as one operation (one argument: itself)."""
    return _nary("and", ps, name)


def any_of(*ps: Bool, name: str | None = None) -> Bool:
    """``p1 OR ... OR pk`` as one operation (one argument: itself)."""
    return _nary("or", ps, name)


def _nary(kind: str, ps: Sequence[Bool], name: str | None) -> Bool:
    ps = tuple(_need(p, Bool, kind.upper(), f"argument {k + 1}") for k, p in enumerate(ps))
    if not ps:
        raise RasplabError(f"{kind.upper()} of no arguments; give at least one")
    if len(ps) == 1:
        return ps[0].named(name) if name else ps[0]
    return Bool(kind, ps, name)


def exists(p: Bool, name: str | None = None) -> Bool:
    """The macro of Appendix C.1.4: some j <= i has p(j), i.e. ``count(p) >= 1``."""
    return (count(p) >= 1).named(name) if name else count(p) >= 1


class _Readout:
    """A readout before naming: kind and symbol -> Boolean expression."""

    def __init__(self, kind: str, table: Mapping[str, Bool]):
        self.kind = kind
        self.table = {
            s: _need(p, Bool, f"readout symbol {s!r}", "operation") for s, p in table.items()
        }


def next_set(table: Mapping[str, Bool]) -> _Readout:
    """Per-position set readout: the output at i is the sorted tuple of the symbols whose
    Boolean holds (legal next symbols; ``<eos>`` marks that the prefix may end)."""
    return _Readout("set", table)


def next_token(table: Mapping[str, Bool]) -> _Readout:
    """Per-position token readout: the output at i is the one symbol whose Boolean holds
    (``None`` when none or several hold)."""
    return _Readout("token", table)


def crasp_program(
    name: str,
    output: Bool,
    alphabet: Iterable[str],
    readout: _Readout | None = None,
    description: str = "",
) -> CraspProgram:
    """The validated :class:`~rasplab.crasp.ir.CraspProgram` computing ``output`` (its acceptance)
    and, optionally, a per-position readout.

    ``output`` is placed as late as its users allow: it is the last Boolean operation (as in
    Definition 8) unless readout operations use it, in which case the program names it as its
    output. ``alphabet`` is the input alphabet (a string of one-character symbols or a
    sequence of symbols), without ``<bos>``.
    """
    output = _need(output, Bool, "crasp_program", "output")
    alphabet = tuple(alphabet)
    roots = [p for p in (readout.table.values() if readout else ()) if p is not output]
    ops, names = _lower([*roots, output])
    out_name = names[id(output)]
    last_bool = next(op.name for op in reversed(ops) if op.sort == "bool")
    ro = None
    if readout is not None:
        symbols = tuple(readout.table)
        ro = Readout(readout.kind, symbols, tuple(names[id(readout.table[s])] for s in symbols))
    return CraspProgram(
        name, alphabet, ops, ro, description, None if out_name == last_bool else out_name
    )


__getattr__ = old_names(__name__, {"program": "rasplab.crasp.build:crasp_program"})
"""``program``, the old name of :func:`crasp_program`, still importable (deprecated)."""


def _lower(roots: Sequence[Expr]) -> tuple[tuple[Op, ...], dict[int, str]]:
    """Depth-first post-order over the DAG: one :class:`Op` per distinct expression; unnamed
    structurally identical expressions are merged; returns the ops and id -> name."""
    names: dict[int, str] = {}
    canon: dict[tuple, str] = {}
    taken: dict[str, tuple] = {}
    ops: list[Op] = []
    counter = [0]
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in names:
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args) if id(a) not in names)
                continue
            args = tuple(names[id(a)] for a in node.args)
            key = (node.kind, args, tuple(sorted(node.params.items(), key=lambda kv: kv[0])))
            if node.name is None and key in canon:
                names[id(node)] = canon[key]
                continue
            label = node.name or _auto_name(node, counter)
            while node.name is None and label in taken:
                label = _auto_name(node, counter, force_number=True)
            if label in taken:
                if taken[label] != key:
                    raise RasplabError(f"two different operations are named {label!r}")
                names[id(node)] = label
                continue
            taken[label] = key
            canon.setdefault(key, label)
            names[id(node)] = label
            ops.append(Op(label, node.kind, args, **node.params))
    return tuple(ops), names


def _auto_name(node: Expr, counter: list[int], force_number: bool = False) -> str:
    """``Q_<symbol>`` for initial operations, ``_<kind><n>`` otherwise."""
    if node.kind == "initial" and not force_number:
        return "Q_" + (_SYMBOL_NAME.sub("", node.params["symbol"]) or "sym")
    counter[0] += 1
    short = {
        "compare_const": "cmp",
        "compare": "cmp",
        "count_const": "const",
        "bool_const": "const",
    }
    return f"_{short.get(node.kind, node.kind)}{counter[0]}"


BOS_SYMBOL = BOS
"""The start symbol the interpreter shows at position 0 (not a symbol programs can read)."""
