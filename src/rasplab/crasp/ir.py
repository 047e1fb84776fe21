"""The C-RASP intermediate representation: a validated list of named operations.

A C-RASP program (Definition 8 of Huang et al., "A formal framework for understanding length
generalization in transformers", after Yang & Chiang 2024, "Counting like transformers") is a
sequence of operations, each computing one value at every position ``i`` of the input. This
module is the program format every other part of :mod:`rasplab.crasp` reads (the interpreter,
the reference interpreter, the trace, the compiler to a transformer); the expression front-end
in :mod:`rasplab.crasp.build` only produces it.

**Positions.** A program runs on ``<bos> w_1 ... w_n``: position 0 holds the start symbol
``<bos>`` (added by the interpreter, never given by the user), position ``k`` holds ``w_k``.
So ``i`` is also the number of symbols read so far, every string (the empty one included) has
a last position, and a counting operation ``#[j <= i] P(j)`` ranges over ``j = 0..i``, the
start position included. ``Q_<bos>`` is an initial operation like any other (it holds exactly at
position 0).

**Operations** (:class:`Op`, in topological order: arguments name earlier operations). Two
sorts; ``Op.kind`` fixes the sort, the arguments' sorts and the parameters used:

=================  =====  ==================================  ===============================
kind               sort   args                                parameters / meaning at i
=================  =====  ==================================  ===============================
``initial``        bool   ()                                  ``symbol``: w_i == symbol
``bool_const``     bool   ()                                  ``value`` (True/False)
``not``            bool   (P,)                                not P(i)
``and``            bool   (P1, ..., Pk), k >= 2               P1(i) and ... and Pk(i)
``or``             bool   (P1, ..., Pk), k >= 2               P1(i) or ... or Pk(i)
``periodic``       bool   ()                                  ``period``: i mod m in residues
``compare``        bool   (C1, C2)                            ``comparison``: C1(i) op C2(i)
``compare_const``  bool   (C,)                                ``comparison``, ``value``:
                                                              C(i) op value
``count``          count  (P,)                                ``relation``: #{j <= i :
                                                              R(i, j) and P(j)}; no relation
                                                              = every j <= i
``cond``           count  (P, C1, C2)                         C1(i) if P(i) else C2(i)
``add``            count  (C1, C2)                            C1(i) + C2(i)
``sub``            count  (C1, C2)                            C1(i) - C2(i)
``count_const``    count  ()                                  ``value`` (an integer)
=================  =====  ==================================  ===============================

``comparison`` is one of ``<  <=  ==  !=  >  >=`` (Definition 8 has ``<=``; the others are
Boolean combinations of it and are kept as one operation for readability). ``and``/``or`` with
k arguments stand for a chain of k-1 binary operations. A :class:`Relation` is translation-
invariant by construction (it holds iff ``i - j`` is in a set of offsets); it is *local*
(Definition 3) iff that set is finite, and only local relations are valid in a program.

**Acceptance and outputs.** Acceptance is the value of the program's output operation at the
last position (:attr:`Program.output`): the last Boolean operation, as in Definition 8, unless
``Program.output_name`` names another Boolean operation (used by programs with a readout whose
operations come after the output; a copy ``P AND P`` at the end would be equivalent). A
program may also have a :class:`Readout` for
per-position outputs: ``"set"`` (the output at i is the sorted tuple of the symbols whose
Boolean operation holds: next-symbol sets) or ``"token"`` (the one symbol whose operation
holds, ``None`` if not exactly one: next-token prediction).

**Class.** :attr:`Program.crasp_class` is computed from the operations: ``C-RASP[]`` (no
periodic operation, no counting relation), ``C-RASP[periodic]``, ``C-RASP[local]`` or
``C-RASP[periodic,local]``.

>>> ops = [Op("Q_a", "initial", symbol="a"), Op("C_a", "count", ("Q_a",)),
...        Op("Q_b", "initial", symbol="b"), Op("C_b", "count", ("Q_b",)),
...        Op("M", "compare", ("C_b", "C_a"), comparison="<=")]
>>> p = Program("majority", ("a", "b"), tuple(ops))
>>> p.output, p.crasp_class, p.depth
('M', 'C-RASP[]', 1)
>>> print(p.listing())
C-RASP[] program majority over {a, b}
  Q_a(i) := Q_a(i)
  C_a(i) := #[j <= i] Q_a(j)
  Q_b(i) := Q_b(i)
  C_b(i) := #[j <= i] Q_b(j)
> M(i)   := C_b(i) <= C_a(i)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from rasplab.errors import RasplabError
from rasplab.tasks.base import BOS

BOOL_KINDS = (
    "initial",
    "bool_const",
    "not",
    "and",
    "or",
    "periodic",
    "compare",
    "compare_const",
)
COUNT_KINDS = ("count", "cond", "add", "sub", "count_const")
KINDS = BOOL_KINDS + COUNT_KINDS
COMPARISONS = ("<", "<=", "==", "!=", ">", ">=")
CLASSES = ("C-RASP[]", "C-RASP[periodic]", "C-RASP[local]", "C-RASP[periodic,local]")
"""The four classes, smallest first; each is contained in the last."""
READOUT_KINDS = ("set", "token")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ARG_SORTS = {
    "not": "b",
    "and": "b",
    "or": "b",
    "compare": "cc",
    "compare_const": "c",
    "count": "b",
    "cond": "bcc",
    "add": "cc",
    "sub": "cc",
}


@dataclass(frozen=True)
class Relation:
    """A translation-invariant relation R(i, j): holds iff ``i - j`` is in ``offsets``
    (or, with ``cofinite``, iff ``i - j >= 0`` is *not* in ``offsets``).

    Local (Definition 3) iff not cofinite: then R(i, j) implies ``i - tau <= j <= i`` with
    ``tau = max(offsets)``.

    >>> r = Relation(frozenset({1}))
    >>> r.holds(5, 4), r.holds(5, 3), r.local, str(r)
    (True, False, True, 'j = i-1')
    >>> str(Relation(frozenset({0}), cofinite=True)), Relation(frozenset(), True).local
    ('j <= i-1', False)
    """

    offsets: frozenset[int]
    cofinite: bool = False

    def __post_init__(self) -> None:
        bad = [d for d in self.offsets if not isinstance(d, int) or d < 0]
        if bad:
            raise RasplabError(
                f"relation offsets must be integers k >= 0 (j = i-k, j <= i), got {sorted(bad)}"
            )
        object.__setattr__(self, "offsets", frozenset(self.offsets))

    @property
    def local(self) -> bool:
        """Whether the relation only relates positions at a bounded distance."""
        return not self.cofinite

    @property
    def window(self) -> int:
        """tau: the largest offset ``i - j`` for which the (local) relation holds."""
        if self.cofinite:
            raise RasplabError(f"relation {self} is not local: it has no window")
        return max(self.offsets, default=0)

    def holds(self, i: int, j: int) -> bool:
        """R(i, j), straight from the definition."""
        d = i - j
        return d >= 0 and ((d in self.offsets) != self.cofinite)

    def __or__(self, other: Relation) -> Relation:
        """The union: R(i, j) or S(i, j)."""
        a, b = self, other
        if not a.cofinite and not b.cofinite:
            return Relation(a.offsets | b.offsets)
        if a.cofinite and b.cofinite:
            return Relation(a.offsets & b.offsets, True)
        fin, cof = (a, b) if b.cofinite else (b, a)
        return Relation(cof.offsets - fin.offsets, True)

    def __and__(self, other: Relation) -> Relation:
        """The intersection: R(i, j) and S(i, j)."""
        return ~(~self | ~other)

    def __invert__(self) -> Relation:
        """The complement among j <= i (a finite relation's complement is not local)."""
        return Relation(self.offsets, not self.cofinite)

    def __str__(self) -> str:
        ds = sorted(self.offsets)
        if self.cofinite:
            if ds == list(range(len(ds))):
                return f"j <= i-{len(ds)}" if ds else "j <= i"
            return "i-j not in {" + ", ".join(map(str, ds)) + "}"
        if len(ds) == 1:
            return "j = i" if ds[0] == 0 else f"j = i-{ds[0]}"
        if ds and ds == list(range(ds[0], ds[-1] + 1)):
            return f"i-{ds[-1]} <= j <= i-{ds[0]}".replace("i-0", "i")
        return "i-j in {" + ", ".join(map(str, ds)) + "}"


def require_local(relation: Relation, where: str) -> None:
    """Raise the one-line error for a relation that is not local (Definition 3)."""
    if not relation.local:
        raise RasplabError(
            f"{where}: relation '{relation}' is not local (it relates positions arbitrarily "
            "far apart); C-RASP counts allow only local relations (finitely many offsets "
            "j = i-k): count over all j <= i and subtract the local part instead"
        )


@dataclass(frozen=True)
class Periodic:
    """A periodic positional predicate psi(i): holds iff ``i mod modulus`` is in ``residues``.

    >>> p = Periodic(3, frozenset({0}))
    >>> [p.holds(i) for i in range(5)], str(p)
    ([True, False, False, True, False], 'i mod 3 = 0')
    """

    modulus: int
    residues: frozenset[int]

    def __post_init__(self) -> None:
        if not isinstance(self.modulus, int) or self.modulus < 1:
            raise RasplabError(f"a periodic predicate needs a modulus >= 1, got {self.modulus!r}")
        bad = [r for r in self.residues if not isinstance(r, int) or not 0 <= r < self.modulus]
        if bad:
            raise RasplabError(
                f"residues of a periodic predicate mod {self.modulus} must lie in "
                f"0..{self.modulus - 1}, got {sorted(bad)}"
            )
        object.__setattr__(self, "residues", frozenset(self.residues))

    def holds(self, i: int) -> bool:
        """psi(i), straight from the definition."""
        return i % self.modulus in self.residues

    def __str__(self) -> str:
        rs = sorted(self.residues)
        if len(rs) == 1:
            return f"i mod {self.modulus} = {rs[0]}"
        return f"i mod {self.modulus} in {{{', '.join(map(str, rs))}}}"


@dataclass(frozen=True)
class Op:
    """One named operation (see the module docstring for the kinds and their fields)."""

    name: str
    kind: str
    args: tuple[str, ...] = ()
    symbol: str | None = None
    value: int | bool | None = None
    comparison: str | None = None
    relation: Relation | None = None
    period: Periodic | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise RasplabError(
                f"operation name {self.name!r} is not an identifier (letters, digits, _)"
            )
        where = f"operation {self.name!r}"
        if self.kind not in KINDS:
            raise RasplabError(f"{where}: unknown kind {self.kind!r}; one of: {', '.join(KINDS)}")
        want = _ARG_SORTS.get(self.kind, "")
        n_ok = len(self.args) >= 2 if self.kind in ("and", "or") else len(self.args) == len(want)
        if not n_ok:
            need = "at least 2" if self.kind in ("and", "or") else str(len(want))
            raise RasplabError(
                f"{where} ({self.kind}) takes {need} arguments, got {len(self.args)}"
            )
        if self.kind == "initial" and not isinstance(self.symbol, str):
            raise RasplabError(f"{where}: an initial operation needs a symbol")
        if self.kind == "bool_const" and not isinstance(self.value, bool):
            raise RasplabError(f"{where}: a Boolean constant needs value True or False")
        if self.kind in ("count_const", "compare_const") and (
            isinstance(self.value, bool) or not isinstance(self.value, int)
        ):
            raise RasplabError(f"{where}: needs an integer value, got {self.value!r}")
        if self.kind in ("compare", "compare_const") and self.comparison not in COMPARISONS:
            raise RasplabError(
                f"{where}: comparison must be one of {' '.join(COMPARISONS)}, "
                f"got {self.comparison!r}"
            )
        if self.kind == "periodic" and not isinstance(self.period, Periodic):
            raise RasplabError(f"{where}: a periodic operation needs a Periodic predicate")
        if self.kind == "count" and self.relation is not None:
            if not isinstance(self.relation, Relation):
                raise RasplabError(
                    f"{where}: the relation must be a Relation (offsets j = i-k), not "
                    f"{type(self.relation).__name__}; arbitrary functions of (i, j) are not "
                    "C-RASP relations"
                )
            require_local(self.relation, where)

    @property
    def sort(self) -> str:
        """``"bool"`` or ``"count"``."""
        return "bool" if self.kind in BOOL_KINDS else "count"

    def arg_sorts(self) -> str:
        """The sort of each argument as a string of ``b``/``c`` (one letter per argument)."""
        want = _ARG_SORTS.get(self.kind, "")
        return want * len(self.args) if self.kind in ("and", "or") else want

    def definition(self) -> str:
        """The right-hand side in the seed's notation, e.g. ``#[j <= i, j = i-1] Q_0(j)``."""
        a = [f"{x}(i)" for x in self.args]
        k = self.kind
        if k == "initial":
            return f"Q_{self.symbol}(i)"
        if k in ("bool_const", "count_const"):
            return str(self.value)
        if k == "not":
            return f"NOT {a[0]}"
        if k in ("and", "or"):
            return f" {k.upper()} ".join(a)
        if k == "periodic":
            return str(self.period)
        if k == "compare":
            return f"{a[0]} {self.comparison} {a[1]}"
        if k == "compare_const":
            return f"{a[0]} {self.comparison} {self.value}"
        if k == "count":
            rel = "" if self.relation is None else f", {self.relation}"
            return f"#[j <= i{rel}] {self.args[0]}(j)"
        if k == "cond":
            return f"{a[0]} ? {a[1]} : {a[2]}"
        return f"{a[0]} {'+' if k == 'add' else '-'} {a[1]}"


@dataclass(frozen=True)
class Readout:
    """Per-position outputs: for each output symbol, the Boolean operation that selects it."""

    kind: str
    symbols: tuple[str, ...]
    ops: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "symbols", tuple(self.symbols))
        object.__setattr__(self, "ops", tuple(self.ops))
        if self.kind not in READOUT_KINDS:
            raise RasplabError(f"readout kind must be 'set' or 'token', got {self.kind!r}")
        if len(self.symbols) != len(self.ops) or not self.symbols:
            raise RasplabError("a readout needs one Boolean operation per output symbol")
        if len(set(self.symbols)) != len(self.symbols):
            raise RasplabError(f"readout symbols repeat: {list(self.symbols)}")


@dataclass(frozen=True)
class Program:
    """A validated C-RASP program: ``ops`` in topological order over ``alphabet``.

    ``alphabet`` holds the input symbols (``<bos>`` is implicit); ``readout`` is optional.
    Validation raises one :class:`RasplabError` naming the first problem: an undefined or
    later-defined argument (a cycle), a repeated name, an argument of the wrong sort (a Boolean
    used as a count or the reverse), an unknown symbol, a non-local relation.
    """

    name: str
    alphabet: tuple[str, ...]
    ops: tuple[Op, ...]
    readout: Readout | None = None
    description: str = ""
    output_name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "alphabet", tuple(self.alphabet))
        object.__setattr__(self, "ops", tuple(self.ops))
        where = f"program {self.name!r}"
        if not self.alphabet or len(set(self.alphabet)) != len(self.alphabet):
            raise RasplabError(f"{where}: the alphabet must be non-empty without repeats")
        bad = [s for s in self.alphabet if not isinstance(s, str) or not s or s.split() != [s]]
        if bad or BOS in self.alphabet:
            raise RasplabError(
                f"{where}: alphabet symbols must be non-empty strings without spaces, "
                f"other than {BOS} (added implicitly); got {bad or [BOS]}"
            )
        sorts: dict[str, str] = {}
        for op in self.ops:
            if not isinstance(op, Op):
                raise RasplabError(f"{where}: operations must be Op objects, got {op!r}")
            if op.name in sorts:
                raise RasplabError(f"{where}: two operations are named {op.name!r}")
            for arg, want in zip(op.args, op.arg_sorts()):
                if arg not in sorts:
                    later = any(o.name == arg for o in self.ops)
                    raise RasplabError(
                        f"{where}: operation {op.name!r} uses {arg!r}, which is "
                        + (
                            "defined later (a cycle, or operations not in topological order)"
                            if later
                            else "not defined"
                        )
                    )
                got = sorts[arg]
                if got != {"b": "bool", "c": "count"}[want]:
                    raise RasplabError(
                        f"{where}: operation {op.name!r} ({op.kind}) uses {arg!r} as a "
                        + (
                            "Boolean, but it is a count"
                            if want == "b"
                            else "count, but it is a Boolean"
                        )
                    )
            if op.kind == "initial" and op.symbol not in (*self.alphabet, BOS):
                raise RasplabError(
                    f"{where}: operation {op.name!r} reads symbol {op.symbol!r}, which is not "
                    f"in the alphabet ({', '.join(self.alphabet)}) or {BOS}"
                )
            sorts[op.name] = op.sort
        if "bool" not in sorts.values():
            raise RasplabError(f"{where}: needs at least one Boolean operation (its output)")
        if self.output_name is not None and sorts.get(self.output_name) != "bool":
            raise RasplabError(
                f"{where}: the output {self.output_name!r} is "
                + ("not an operation" if self.output_name not in sorts else "a count")
            )
        if self.readout is not None:
            for sym, name in zip(self.readout.symbols, self.readout.ops):
                if sorts.get(name) != "bool":
                    raise RasplabError(
                        f"{where}: readout symbol {sym!r} names {name!r}, which is "
                        + ("not an operation" if name not in sorts else "a count, not a Boolean")
                    )

    @cached_property
    def index(self) -> dict[str, int]:
        """Operation name -> its position in ``ops``."""
        return {op.name: k for k, op in enumerate(self.ops)}

    def op(self, name: str) -> Op:
        """The operation called ``name``."""
        if name not in self.index:
            raise RasplabError(f"program {self.name!r} has no operation {name!r}")
        return self.ops[self.index[name]]

    @property
    def output(self) -> str:
        """The output operation (its value at the last position is acceptance): ``output_name``
        if given, else the last Boolean operation."""
        if self.output_name is not None:
            return self.output_name
        return next(op.name for op in reversed(self.ops) if op.sort == "bool")

    @property
    def uses_periodic(self) -> bool:
        """Whether some operation is a periodic positional predicate."""
        return any(op.kind == "periodic" for op in self.ops)

    @property
    def uses_local(self) -> bool:
        """Whether some counting operation has a (local) relation."""
        return any(op.kind == "count" and op.relation is not None for op in self.ops)

    @property
    def crasp_class(self) -> str:
        """The smallest of the four classes containing this program, from its operations."""
        return CLASSES[int(self.uses_periodic) + 2 * int(self.uses_local)]

    def within(self, crasp_class: str) -> bool:
        """Whether this program belongs to ``crasp_class`` (one of :data:`CLASSES`).

        >>> Program("t", ("a",), (Op("T", "bool_const", value=True),)).within("C-RASP[local]")
        True
        """
        if crasp_class not in CLASSES:
            raise RasplabError(f"unknown class {crasp_class!r}; one of: {', '.join(CLASSES)}")
        want = CLASSES.index(crasp_class)
        periodic_ok = not self.uses_periodic or bool(want & 1)
        local_ok = not self.uses_local or bool(want & 2)
        return periodic_ok and local_ok

    @cached_property
    def depths(self) -> dict[str, int]:
        """Per operation, the nesting depth of counting operations (Appendix C.3.3)."""
        out: dict[str, int] = {}
        for op in self.ops:
            d = max((out[a] for a in op.args), default=0)
            out[op.name] = d + 1 if op.kind == "count" else d
        return out

    @property
    def depth(self) -> int:
        """The largest nesting depth of counting operations in the program."""
        return max(self.depths.values())

    def listing(self) -> str:
        """The program in the seed's notation, one operation per line (``>`` marks the output)."""
        head = f"{self.crasp_class} program {self.name} over {{{', '.join(self.alphabet)}}}"
        out = self.output
        lines = [head]
        width = max(len(op.name) for op in self.ops) + 3
        for op in self.ops:
            left = f"{op.name}(i)".ljust(width)
            lines.append(f"{'>' if op.name == out else ' '} {left} := {op.definition()}")
        if self.readout is not None:
            pairs = ", ".join(f"{s}: {o}" for s, o in zip(self.readout.symbols, self.readout.ops))
            lines.append(f"  readout ({self.readout.kind}): {pairs}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """Plain JSON data (see :func:`program_from_json` for the inverse)."""
        ops = []
        for op in self.ops:
            d: dict = {"name": op.name, "kind": op.kind}
            if op.args:
                d["args"] = list(op.args)
            if op.symbol is not None:
                d["symbol"] = op.symbol
            if op.value is not None:
                d["value"] = op.value
            if op.comparison is not None:
                d["comparison"] = op.comparison
            if op.relation is not None:
                d["offsets"] = sorted(op.relation.offsets)
            if op.period is not None:
                d["modulus"] = op.period.modulus
                d["residues"] = sorted(op.period.residues)
            ops.append(d)
        out = {"name": self.name, "alphabet": list(self.alphabet), "ops": ops}
        if self.readout is not None:
            out["readout"] = {
                "kind": self.readout.kind,
                "symbols": list(self.readout.symbols),
                "ops": list(self.readout.ops),
            }
        if self.description:
            out["description"] = self.description
        if self.output_name is not None:
            out["output"] = self.output_name
        return out


def program_from_json(data: dict) -> Program:
    """A :class:`Program` from :meth:`Program.to_json` data; operations may come in any order
    (they are put in topological order; a cycle is an error naming it).

    >>> p = program_from_json({"name": "t", "alphabet": ["a"], "ops": [
    ...     {"name": "A", "kind": "compare_const", "args": ["C"], "comparison": ">",
    ...      "value": 0},
    ...     {"name": "C", "kind": "count", "args": ["Q"]},
    ...     {"name": "Q", "kind": "initial", "symbol": "a"}]})
    >>> [op.name for op in p.ops], program_from_json(p.to_json()) == p
    (['Q', 'C', 'A'], True)
    """
    if not isinstance(data, dict) or not isinstance(data.get("ops"), list):
        raise RasplabError("a C-RASP program in JSON is an object with 'name', 'alphabet', 'ops'")
    known = {"name", "kind", "args", "symbol", "value", "comparison", "offsets", "modulus"}
    ops = []
    for d in data["ops"]:
        if not isinstance(d, dict) or not {"name", "kind"} <= set(d):
            raise RasplabError(f"each operation needs 'name' and 'kind', got {d!r}")
        extra = set(d) - known - {"residues"}
        if extra:
            raise RasplabError(f"operation {d['name']!r}: unknown fields {sorted(extra)}")
        rel = Relation(frozenset(d["offsets"])) if "offsets" in d else None
        per = Periodic(d["modulus"], frozenset(d.get("residues", ()))) if "modulus" in d else None
        ops.append(
            Op(
                d["name"],
                d["kind"],
                tuple(d.get("args", ())),
                symbol=d.get("symbol"),
                value=d.get("value"),
                comparison=d.get("comparison"),
                relation=rel,
                period=per,
            )
        )
    readout = data.get("readout")
    if readout is not None:
        readout = Readout(readout["kind"], tuple(readout["symbols"]), tuple(readout["ops"]))
    return Program(
        str(data.get("name", "program")),
        tuple(data.get("alphabet", ())),
        topological(ops),
        readout,
        str(data.get("description", "")),
        data.get("output"),
    )


def topological(ops: list[Op] | tuple[Op, ...]) -> tuple[Op, ...]:
    """``ops`` reordered so that every operation follows its arguments (stable: the given
    order wherever it already works); a cycle raises an error naming it.

    >>> a = Op("a", "not", ("b",)); b = Op("b", "not", ("a",))
    >>> topological([a, b])
    Traceback (most recent call last):
    rasplab.errors.RasplabError: operations form a cycle: a -> b -> a
    """
    by_name = {op.name: op for op in ops}
    state: dict[str, int] = {}  # 1 while on the stack, 2 once placed
    out: list[Op] = []
    for root in ops:
        if state.get(root.name):
            continue
        stack = [(root.name, iter(root.args))]
        state[root.name] = 1
        while stack:
            name, args = stack[-1]
            arg = next(args, None)
            if arg is None:
                stack.pop()
                state[name] = 2
                out.append(by_name[name])
            elif arg in by_name and state.get(arg) == 1:
                path = [n for n, _ in stack]
                cycle = path[path.index(arg) :] + [arg]
                raise RasplabError(f"operations form a cycle: {' -> '.join(cycle)}")
            elif arg in by_name and not state.get(arg):
                state[arg] = 1
                stack.append((arg, iter(by_name[arg].args)))
    return tuple(out)
