"""C-RASP programs as JSON, and topological ordering of operations.

The JSON form of a program is an object with ``name``, ``alphabet`` (list of symbols),
``ops`` (one object per operation: ``name``, ``kind``, and as the kind needs ``args``,
``symbol``, ``value``, ``comparison``, ``offsets`` (a relation's offsets i - j), ``modulus`` and
``residues`` (a periodic predicate)), and optionally ``readout`` (``kind``, ``symbols``,
``ops``), ``description`` and ``output``. Operations may come in any order.

>>> p = program_from_json({"name": "t", "alphabet": ["a"], "ops": [
...     {"name": "A", "kind": "compare_const", "args": ["C"], "comparison": ">",
...      "value": 0},
...     {"name": "C", "kind": "count", "args": ["Q"]},
...     {"name": "Q", "kind": "initial", "symbol": "a"}]})
>>> [op.name for op in p.ops], program_from_json(p.to_json()) == p
(['Q', 'C', 'A'], True)
"""

from __future__ import annotations

from rasplab.crasp.ir import CraspProgram, Op, Readout
from rasplab.crasp.positional import Periodic, Relation
from rasplab.errors import RasplabError


def program_to_json(program: CraspProgram) -> dict:
    """Plain JSON data for ``program``."""
    ops = []
    for op in program.ops:
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
    out = {"name": program.name, "alphabet": list(program.alphabet), "ops": ops}
    if program.readout is not None:
        out["readout"] = {
            "kind": program.readout.kind,
            "symbols": list(program.readout.symbols),
            "ops": list(program.readout.ops),
        }
    if program.description:
        out["description"] = program.description
    if program.output_name is not None:
        out["output"] = program.output_name
    return out


def program_from_json(data: dict) -> CraspProgram:
    """A :class:`Program` from :func:`program_to_json` data; operations may come in any order
    (they are put in topological order; a cycle is an error naming it)."""
    try:
        return _from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, RasplabError):
            raise
        raise RasplabError(f"malformed C-RASP program JSON ({type(err).__name__}: {err})") from err


def _from_json(data: dict) -> CraspProgram:
    """:func:`program_from_json` without the error translation."""
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
    names = [op.name for op in ops]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RasplabError(
            f"operation name {twice[0]!r} is used by {names.count(twice[0])} operations; "
            "each operation needs its own name"
        )
    output = data.get("output")
    if output is not None and output not in names:
        raise RasplabError(f"output {output!r} names no operation; give one of: {', '.join(names)}")
    readout = data.get("readout")
    if readout is not None:
        readout = Readout(readout["kind"], tuple(readout["symbols"]), tuple(readout["ops"]))
    return CraspProgram(
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
