"""PTG programs: the tiny Python grammar as data, its source text, control flow and call.

A :class:`Program` is a standalone function ``f`` whose body is a tuple of lines; each line is
``(op, depth, target, a, b)`` with ``depth`` 1 (function body) or 2 (inside an ``if`` or
``while`` block; blocks never nest). The ops are the grammar of seed 000 Appendix A:

=========  ==========================  =========  ===========================
op         source                      op         source
=========  ==========================  =========  ===========================
SET        ``t = 3``                   APPEND     ``t.append(a)``
COPY       ``t = a``                   APPENDK    ``t.append(3)``
INC / DEC  ``t = a + 1`` / ``a - 1``   POP        ``t.pop()``
EQ / NE    ``t = a == b`` / ``!=``     NEW        ``t = []``
EQK / NEK  ``t = a == 3`` / ``!= 3``   POPTO      ``t = a.pop()``
WHILEL     ``while a != []:``          IFV        ``if a:``
IFEQ/IFNE  ``if a == b:`` / ``!=``     IFEQK/NEK  ``if a == 3:`` / ``!= 3``
WHILE      ``while a:``                RETURN     ``return``
=========  ==========================  =========  ===========================

>>> p = Program(("x", "lst_a"), ((INC, 1, "x", "x", None), (APPEND, 1, "lst_a", "x", None),
...             (RETURN, 1, None, None, None)))
>>> print(p.source())
def f(x, lst_a):
    x = x + 1
    lst_a.append(x)
    return
>>> call_text((("x", 3), ("lst_a", [1, 2])))
'f(x=3, lst_a=[1,2])'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

(SET, COPY, INC, DEC, POPTO, EQ, NE, EQK, NEK, APPEND, APPENDK, POP, NEW) = range(13)
(IFV, IFEQ, IFNE, IFEQK, IFNEK, WHILE, WHILEL, RETURN) = range(13, 21)
HEADERS = frozenset((IFV, IFEQ, IFNE, IFEQK, IFNEK, WHILE, WHILEL))
LOOPS = frozenset((WHILE, WHILEL))
#: ops whose line updates a variable (the trace shows ``line,target:value``; for ``t = a.pop()``
#: that is ``t``, the popped value, as Python's assignment names it)
UPDATES = frozenset(range(13))
FUNCTION = "f"
INDENT = "    "
#: variable name pools (one vocabulary token each): integers, lists, booleans, loop counters
INT_NAMES = tuple(c for c in "abcdeghijklmnopqrstuvwxyz")  # no "f": that is the function
LIST_NAMES = tuple(f"lst_{c}" for c in "abcdefghijklmnopqrstuvwxyz")
BOOL_NAMES = tuple(f"cond_{c}" for c in "abcdefghijklmnopqrstuvwxyz")
COUNTER_NAMES = tuple(f"cnter_{i}" for i in range(10))
MAX_VARIABLES = len(INT_NAMES) + len(LIST_NAMES) + len(BOOL_NAMES) + len(COUNTER_NAMES)

Line = tuple  # (op, depth, target, a, b)
Value = int | bool | list


def format_value(value: Value) -> str:
    """A value as the trace writes it: ``4``, ``True``, ``[3,7,5]`` (no spaces).

    >>> format_value([3, 7, 5]), format_value(-2), format_value(False)
    ('[3,7,5]', '-2', 'False')
    """
    if type(value) is list:
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


#: each op's source line, a template over the line's target ``t`` and operands ``a``, ``b``
_SOURCES = {
    SET: "{t} = {a}",
    COPY: "{t} = {a}",
    INC: "{t} = {a} + 1",
    DEC: "{t} = {a} - 1",
    POPTO: "{t} = {a}.pop()",
    EQ: "{t} = {a} == {b}",
    EQK: "{t} = {a} == {b}",
    NE: "{t} = {a} != {b}",
    NEK: "{t} = {a} != {b}",
    APPEND: "{t}.append({a})",
    APPENDK: "{t}.append({a})",
    POP: "{t}.pop()",
    NEW: "{t} = []",
    IFV: "if {a}:",
    IFEQ: "if {a} == {b}:",
    IFEQK: "if {a} == {b}:",
    IFNE: "if {a} != {b}:",
    IFNEK: "if {a} != {b}:",
    WHILE: "while {a}:",
    WHILEL: "while {a} != []:",
    RETURN: "return",
}


def line_text(line: Line) -> str:
    """The source of one line without indentation.

    >>> line_text((NEK, 1, "cond_a", "cnter_0", 4))
    'cond_a = cnter_0 != 4'
    """
    op, _, t, a, b = line
    if op not in _SOURCES:
        raise ValueError(f"unknown PTG op {op!r}")
    return _SOURCES[op].format(t=t, a=a, b=b)


def call_text(inputs: tuple[tuple[str, Value], ...]) -> str:
    """The Python call of ``f`` with keyword inputs, e.g. ``f(x=3, lst_a=[1,2])``."""
    return FUNCTION + "(" + ", ".join(f"{n}={format_value(v)}" for n, v in inputs) + ")"


@dataclass(frozen=True)
class Program:
    """A PTG function: its parameter names and its body lines (the ``def`` line excluded)."""

    params: tuple[str, ...]
    lines: tuple[Line, ...]

    def __post_init__(self) -> None:
        if not self.lines or self.lines[-1][0] != RETURN:
            raise ValueError("a PTG program must end with its return line")

    @property
    def n_lines(self) -> int:
        """Program length in lines, the ``def`` and ``return`` lines included."""
        return len(self.lines) + 1

    def def_text(self) -> str:
        """The ``def`` line."""
        return f"def {FUNCTION}({', '.join(self.params)}):"

    @cached_property
    def body_texts(self) -> tuple[str, ...]:
        """Each body line's source with its indentation."""
        return tuple(INDENT * ln[1] + line_text(ln) for ln in self.lines)

    def source(self) -> str:
        """The function's source, one line per program line, no line numbers."""
        return "\n".join((self.def_text(), *self.body_texts))

    @cached_property
    def variables(self) -> tuple[str, ...]:
        """Every distinct variable name (parameters first, then locals by first appearance)."""
        seen = dict.fromkeys(self.params)
        for _, _, t, a, b in self.lines:
            for x in (t, a, b):
                if type(x) is str:
                    seen.setdefault(x)
        return tuple(seen)

    @cached_property
    def code(self) -> tuple[tuple, ...]:
        """Control flow for the tracer: ``(op, target, a, b, next, jump_if_false)`` per line."""
        n = len(self.lines)
        nxt = list(range(1, n + 1))
        jump = [-1] * n
        i = 0
        while i < n:
            op, depth = self.lines[i][0], self.lines[i][1]
            if op in HEADERS:
                if depth != 1:
                    raise ValueError(f"line {i + 2}: blocks may not nest")
                end = i + 1
                while end < n and self.lines[end][1] == 2:
                    end += 1
                if end == i + 1:
                    raise ValueError(f"line {i + 2}: empty block")
                jump[i] = end
                if op in LOOPS:
                    nxt[end - 1] = i
                i = end
            else:
                if depth != 1:
                    raise ValueError(f"line {i + 2}: indented line outside a block")
                i += 1
        return tuple(
            (ln[0], ln[2], ln[3], ln[4], nxt[k], jump[k]) for k, ln in enumerate(self.lines)
        )


@dataclass(frozen=True)
class Instance:
    """One PTG instance: a program, its call inputs, its first line number and its trace."""

    program: Program
    inputs: tuple[tuple[str, Value], ...]
    trace: tuple[str, ...]
    first_line: int = 1

    @property
    def call(self) -> str:
        """The call of the function with its inputs."""
        return call_text(self.inputs)

    @property
    def list_length(self) -> int:
        """The length of the input lists (every input list of a program has this length)."""
        return max((len(v) for _, v in self.inputs if type(v) is list), default=0)

    def record(self, split: str) -> dict:
        """The JSON record of ``docs/ptg.md`` (``rasplab data ptg``)."""
        return {
            "program": self.program.source(),
            "first_line": self.first_line,
            "call": self.call,
            "trace": list(self.trace),
            "lines": self.program.n_lines,
            "steps": len(self.trace),
            "variables": len(self.program.variables),
            "list_length": self.list_length,
            "split": split,
        }
