"""MLP transition rules, and the two ways to write them without listing them by hand.

A :class:`Rule` fires at a position when every atom of its antecedent holds there (before the
MLP); it then changes ``var`` from ``old`` to ``new``. Rules come from:

* a list of :class:`Rule` objects;
* an ALTA-style builder (:class:`MLPBuilder`, ``for a, b in m.get("a", "b"): m.set(...)``);
* a plain Python function over a dict-like view, traced by :func:`rules_from_function`: the
  function is re-run once per branch it can take, enumerating only the variables it reads on
  that branch, so a rule's antecedent names only what its path read.

>>> from rasplab.lang.variables import var
>>> variables = {"bit": var(2), "parity": var(2), "done": var(2)}
>>> def step(x):
...     if x["done"] == 0:
...         x["done"] = 1
...         if x["bit"] == 1:
...             x["parity"] = 1 - x["parity"]
>>> for rule in rules_from_function(step, variables):
...     print(rule)
if bit == 0 and done == 0: done 0 -> 1
if bit == 1 and done == 0 and parity == 0: done 0 -> 1
if bit == 1 and done == 0 and parity == 0: parity 0 -> 1
if bit == 1 and done == 0 and parity == 1: done 0 -> 1
if bit == 1 and done == 0 and parity == 1: parity 1 -> 0
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

from rasplab.errors import RasplabError
from rasplab.lang.numbers import format_number
from rasplab.lang.variables import Var


def _fmt(value: Any) -> str:
    if isinstance(value, frozenset):
        return "{" + ",".join(str(v) for v in sorted(value)) + "}"
    return format_number(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Rule:
    """``if lhs: var old -> new``; ``lhs`` is a tuple of ``(variable, value)`` sorted by name
    and always includes ``(var, old)`` (an update conditions on the old value)."""

    lhs: tuple[tuple[str, Any], ...]
    var: str
    old: Any
    new: Any

    def __post_init__(self) -> None:
        atoms = dict(self.lhs)
        if len(atoms) != len(self.lhs):
            raise RasplabError(f"rule antecedent names a variable twice: {self.lhs}")
        if self.var in atoms and atoms[self.var] != self.old:
            raise RasplabError(
                f"rule for {self.var!r} reads it as {atoms[self.var]!r} but says old value {self.old!r}"
            )
        atoms[self.var] = self.old
        object.__setattr__(self, "lhs", tuple(sorted(atoms.items())))

    def __str__(self) -> str:
        cond = " and ".join(f"{k} == {_fmt(v)}" for k, v in self.lhs)
        return f"if {cond}: {self.var} {_fmt(self.old)} -> {_fmt(self.new)}"


def _update_rules(
    context: tuple[tuple[str, Any], ...], name: str, new: Any, variables: Mapping[str, Var]
) -> list[Rule]:
    """Rules writing ``new`` into ``name`` under ``context``, enumerating its old value if unread."""
    if name not in variables:
        raise RasplabError(f"MLP writes unknown variable {name!r}; known: {', '.join(variables)}")
    spec = variables[name]
    new = spec.check_value(new, f"value written to {name!r}")
    if spec.kind == "set" and new not in spec.possible_values():
        raise RasplabError(
            f"set value {set(new)} written to {name!r} is not among its allowed `values`"
        )
    read = dict(context)
    olds = [read[name]] if name in read else list(spec.possible_values())
    return [Rule(context, name, old, new) for old in olds if old != new]


class UnusedHeadReadWarning(UserWarning):
    """A traced function's rules read a head output whose value does not change what they write."""


def unused_head_reads(
    rules: list[Rule],
    heads: Mapping[str, Var],
    per_path: bool = False,
    selection: Mapping[str, object] | None = None,
) -> list[tuple[str, str]]:
    """``(written variable, head output)`` pairs where rules read the head output but write
    the same update for every one of its values: the update does not use the value, yet it
    only fires where the head output is defined. By default a pair is listed when this holds
    on every path of the variable's update that reads the head output (the update never uses
    it: typically two independent updates in one traced function); ``per_path`` lists it
    when it holds on any one path. ``selection`` (head output -> what decides where it is
    defined) drops a pair when each of those rules also reads another head output, used by
    the update, that is defined at exactly the same positions (ALTA's parity reads
    ``parity_left`` beside ``done_left``, both through one selection).

    >>> from rasplab.lang.variables import var
    >>> def step(x):  # two independent updates in one function
    ...     if x["left"] == 1:
    ...         x["seen"] = 1
    ...     x["done"] = 1
    >>> rules = rules_from_function(step, {"seen": var(2), "done": var(2)},
    ...                             {"seen": var(2), "done": var(2), "left": var(2)})
    >>> unused_head_reads(rules, {"left": var(2)})
    [('done', 'left')]
    """
    found = set()
    for head, spec in heads.items():
        groups: dict[tuple, set] = defaultdict(set)
        for r in rules:
            atoms = dict(r.lhs)
            if head in atoms:
                value = atoms.pop(head)
                groups[(r.var, r.old, r.new, tuple(atoms.items()))].add(value)
        if not groups:
            continue
        width = len(spec.possible_values())
        unused: dict[str, list[bool]] = defaultdict(list)
        for key, values in groups.items():
            unused[key[0]].append(len(values) == width)
        for name, flags in unused.items():
            if any(flags) if per_path else all(flags):
                found.add((name, head))
    if selection:
        found = {
            (name, head)
            for name, head in found
            if not all(
                any(
                    other != head
                    and selection.get(other) == selection.get(head)
                    and (name, other) not in found
                    for other, _ in r.lhs
                    if other in heads
                )
                for r in rules
                if r.var == name and head in dict(r.lhs)
            )
        }
    return sorted(found)


class MLPBuilder:
    """ALTA-style rule builder: ``get`` enumerates values into a context, ``set`` emits rules.

    >>> from rasplab.lang.variables import var
    >>> m = MLPBuilder({"a": var(2), "b": var(2)})
    >>> for a in m.get("a"):
    ...     m.set("b", a)
    >>> [str(r) for r in m.rules]
    ['if a == 0 and b == 1: b 1 -> 0', 'if a == 1 and b == 0: b 0 -> 1']
    """

    def __init__(self, variables: Mapping[str, Var]):
        self.variables = dict(variables)
        self.context: list[tuple[str, Any]] = []
        self.rules: list[Rule] = []

    def get(self, *names: str) -> Iterator[Any]:
        """Iterate over every combination of the named variables' values (one value if one name)."""
        for name in names:
            if name not in self.variables:
                raise RasplabError(
                    f"MLP reads unknown variable {name!r}; known: {', '.join(self.variables)}"
                )
            if any(name == k for k, _ in self.context):
                raise RasplabError(f"MLP builder reads {name!r} twice in one context")
        spaces = [self.variables[n].possible_values() for n in names]
        for combo in product(*spaces):
            self.context.extend(zip(names, combo))
            try:
                yield combo[0] if len(names) == 1 else combo
            finally:
                del self.context[len(self.context) - len(names) :]

    def set(self, name: str, value: Any) -> None:
        """Emit the rules that write ``value`` into ``name`` under the current context."""
        self.rules.extend(_update_rules(tuple(self.context), name, value, self.variables))


class _TracingView:
    """The dict-like view a traced MLP function sees: reads branch, writes are recorded."""

    def __init__(
        self,
        variables: Mapping[str, Var],
        readable: Mapping[str, Var],
        path: list[int],
        widths: list[int],
    ):
        self._variables = variables
        self._readable = readable
        self._path = path
        self._widths = widths
        self.reads: dict[str, Any] = {}
        self.writes: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name in self.reads:
            return self.reads[name]
        if name not in self._readable:
            raise RasplabError(
                f"MLP function reads unknown variable {name!r}; known: {', '.join(self._readable)}"
            )
        options = self._readable[name].possible_values()
        depth = len(self.reads)
        if depth == len(self._path):
            self._path.append(0)
            self._widths.append(len(options))
        value = options[self._path[depth]]
        self.reads[name] = value
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        if name not in self._variables:
            raise RasplabError(
                f"MLP function writes {name!r}, which is not a writable variable; writable: {', '.join(self._variables)}"
            )
        self.writes[name] = value

    def get(self, name: str, default: Any = None) -> Any:
        """Dict-style read (the default is never used: every readable variable has a value)."""
        return self[name]


def rules_from_function(
    fn: Callable[[Any], None],
    variables: Mapping[str, Var],
    readable: Mapping[str, Var] | None = None,
    max_paths: int = 1_000_000,
) -> list[Rule]:
    """Trace ``fn`` over every branch it can take and return the rules it implies.

    ``variables`` are the writable variables; ``readable`` (default: the same) may add head
    outputs. Reads see the values before the MLP; a variable read on a path becomes an atom
    of that path's rules; a written variable not read is enumerated over its old values.
    """
    readable = dict(variables if readable is None else readable)
    rules: list[Rule] = []
    path: list[int] = []
    widths: list[int] = []
    paths = 0
    while True:
        view = _TracingView(variables, readable, path, widths)
        try:
            fn(view)
        except RasplabError:
            raise
        except Exception as err:
            raise RasplabError(
                f"MLP function failed on inputs {view.reads}: {type(err).__name__}: {err}"
            ) from err
        del path[len(view.reads) :], widths[len(view.reads) :]
        context = tuple(view.reads.items())
        for name, new in view.writes.items():
            try:
                rules.extend(_update_rules(context, name, new, variables))
            except RasplabError as err:  # name the function and the path that wrote it
                where = " and ".join(f"{k} == {_fmt(v)}" for k, v in context) or "every input"
                raise RasplabError(
                    f"MLP function {getattr(fn, '__name__', 'mlp')!r}, on the path where "
                    f"{where}: {err}"
                ) from err
        paths += 1
        if paths > max_paths:
            raise RasplabError(
                f"MLP function has more than {max_paths} branches; read fewer variables per path"
            )
        while path and path[-1] + 1 >= widths[-1]:
            path.pop()
            widths.pop()
        if not path:
            return rules
        path[-1] += 1
