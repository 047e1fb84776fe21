"""The C-RASP intermediate representation: a validated list of named operations.

A C-RASP program (Definition 8 of Huang et al., "A formal framework for understanding length
generalization in transformers", after Yang & Chiang 2024, "Counting like transformers") is a
sequence of operations, each computing one value at every position ``i`` of the input. This
module is the program format every other part of :mod:`rasplab.crasp` reads (the interpreter,
the reference interpreter, the trace, the compiler to a transformer); the expression front-end
in :mod:`rasplab.crasp.build` only produces it.

**Positions.** A program runs over the string ``w_1 ... w_n`` itself, as in Definition 8:
position ``k`` holds ``w_k`` (``k = 1..n``), so ``i`` is also the number of symbols read so far
and a periodic predicate ``i mod m`` sees the length of the prefix (the seed's (aa)* program,
Appendix C.2.3, accepts iff the last position is even, i.e. the length is). A counting
operation ``#[j <= i] P(j)`` ranges over the symbols ``j = 1..i`` only. Position 0 is the
*start position*: the values of every operation on the empty prefix (no initial operation
holds there, every count is 0), so the empty string has a last position too. It is never
counted, by any counting operation, with or without a relation: the start symbol is not part
of the language (there is no ``Q_<bos>``); a transformer needs a start token, and that is the
compiler's business (:mod:`rasplab.crasp_compiler`, which makes the start position's value
vector zero, Appendix B.6). Constructions that the paper's transformers build from the start
token are written from the string: "the first symbol" is ``#[j <= i] TRUE == 1``.

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

**Stability.** Other stages (the compiler to a transformer) are written against this format;
changes are listed here. Since the first version: counts range over ``j = 1..i`` (the start
position is never counted) and ``Q_<bos>`` is no longer an initial operation (a program that
used it is rejected with a message); ``Program.output_name`` (optional, default
``None`` = the last Boolean operation); :class:`Relation`/:class:`Periodic` live in
:mod:`rasplab.crasp.positional` and the JSON form in :mod:`rasplab.crasp.serialize` (both still
importable from here).

>>> ops = [Op("Q_a", "initial", symbol="a"), Op("C_a", "count", ("Q_a",)),
...        Op("Q_b", "initial", symbol="b"), Op("C_b", "count", ("Q_b",)),
...        Op("M", "compare", ("C_b", "C_a"), comparison="<=")]
>>> p = CraspProgram("majority", ("a", "b"), tuple(ops))
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

from rasplab.crasp.positional import Periodic, Relation, require_local
from rasplab.deprecation import old_names
from rasplab.errors import RasplabError
from rasplab.tasks.base import BOS

__all__ = [
    "CLASSES",
    "COMPARISONS",
    "KINDS",
    "CraspProgram",
    "Op",
    "Periodic",
    "Readout",
    "Relation",
]

__getattr__ = old_names(__name__, {"Program": "rasplab.crasp.ir:CraspProgram"})
"""``Program``, the old name of :class:`CraspProgram`, still importable (deprecated)."""

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
class CraspProgram:
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
            if op.kind == "initial" and op.symbol == BOS:
                raise RasplabError(
                    f"{where}: operation {op.name!r} reads {BOS}, which is not a symbol of the "
                    "string (Definition 8); the first symbol is #[j <= i] TRUE == 1"
                )
            if op.kind == "initial" and op.symbol not in self.alphabet:
                raise RasplabError(
                    f"{where}: operation {op.name!r} reads symbol {op.symbol!r}, which is not "
                    f"in the alphabet ({', '.join(self.alphabet)})"
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

        >>> CraspProgram("t", ("a",), (Op("T", "bool_const", value=True),)).within("C-RASP[local]")
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
        """Plain JSON data (:func:`program_from_json` is the inverse)."""
        from rasplab.crasp.serialize import program_to_json  # import cycle: it imports ir

        return program_to_json(self)


def program_from_json(data: dict) -> CraspProgram:
    """A :class:`Program` from :meth:`Program.to_json` data (see
    :func:`rasplab.crasp.serialize.program_from_json`)."""
    from rasplab.crasp import serialize  # import cycle: serialize imports ir

    return serialize.program_from_json(data)


def topological(ops: list[Op] | tuple[Op, ...]) -> tuple[Op, ...]:
    """``ops`` in topological order (see :func:`rasplab.crasp.serialize.topological`)."""
    from rasplab.crasp import serialize  # import cycle: serialize imports ir

    return serialize.topological(ops)
