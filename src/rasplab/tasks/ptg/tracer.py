"""The fast PTG tracer: interprets the tiny grammar directly and writes the execution trace.

One trace line per executed program line: ``line,var:value`` when the line updates a variable
(the value after the update), ``line,`` otherwise (``if``/``while`` headers each time they are
evaluated, and ``return``). It agrees with Python's own execution (see ``reference.py``).

>>> from rasplab.tasks.ptg.program import Program, NEK, INC, WHILE, SET, RETURN
>>> p = Program(("x",), ((SET, 1, "cnter_0", 0, None), (NEK, 1, "cond_a", "cnter_0", 2),
...     (WHILE, 1, None, "cond_a", None), (INC, 2, "x", "x", None),
...     (INC, 2, "cnter_0", "cnter_0", None), (NEK, 2, "cond_a", "cnter_0", 2),
...     (RETURN, 1, None, None, None)))
>>> trace(p, (("x", 5),))
['2,cnter_0:0', '3,cond_a:True', '4,', '5,x:6', '6,cnter_0:1', '7,cond_a:True', '4,', '5,x:7', '6,cnter_0:2', '7,cond_a:False', '4,', '8,']
"""

from __future__ import annotations

from rasplab.tasks.ptg.program import (
    APPEND,
    APPENDK,
    COPY,
    DEC,
    EQ,
    EQK,
    IFEQ,
    IFEQK,
    IFNE,
    IFNEK,
    IFV,
    INC,
    NE,
    NEK,
    NEW,
    POP,
    POPTO,
    RETURN,
    SET,
    UPDATES,
    WHILE,
    WHILEL,
    Line,
    Program,
    Value,
    format_value,
)

#: a guard against runaway programs handed in from outside the generator
MAX_STEPS = 1_000_000


# long: the tracer's hot loop, one inline branch per opcode; a function call per executed
# line would slow the fast path that benchmarks/bench_ptg.py times against the settrace one
def trace(program: Program, inputs, first_line: int = 1) -> list[str]:
    """The execution trace of ``program`` called with ``inputs`` (``(name, value)`` pairs).

    Body line ``i`` (0-based) is program line ``first_line + 1 + i``; the ``def`` line is
    ``first_line`` and is not traced (it runs before the call). The grammar never reads a
    list's elements, so a list is held as its trace text (``[3,7,5]``) and ``append``/``pop``
    edit that text directly.
    """
    code = program.code
    env: dict = {}
    for name, value in inputs:
        env[name] = format_value(value) if type(value) is list else value
    pre = [
        f"{first_line + 1 + k},{ins[1]}:" if ins[0] in UPDATES else f"{first_line + 1 + k},"
        for k, ins in enumerate(code)
    ]
    out: list[str] = []
    put = out.append
    pc = 0
    for _ in range(MAX_STEPS):
        op, t, a, b, nxt, jump = code[pc]
        if op <= POPTO:
            if op == INC:
                v = env[a] + 1
            elif op == DEC:
                v = env[a] - 1
            elif op == SET:
                v = a
            elif op == POPTO:
                text = env[a]
                if text == "[]":
                    raise IndexError(f"line {first_line + 1 + pc}: pop from empty list")
                cut = text.rfind(",")
                v = int(text[max(cut, 0) + 1 : -1])
                env[a] = "[]" if cut < 0 else text[:cut] + "]"
            else:
                v = env[a]
            env[t] = v
            put(pre[pc] + str(v))
        elif op <= NEK:
            if op == NE:
                v = env[a] != env[b]
            elif op == EQ:
                v = env[a] == env[b]
            elif op == NEK:
                v = env[a] != b
            else:
                v = env[a] == b
            env[t] = v
            put(pre[pc] + ("True" if v else "False"))
        elif op <= NEW:
            if op == NEW:
                text = "[]"
            else:
                text = env[t]
                if op == POP:
                    if text == "[]":
                        raise IndexError(f"line {first_line + 1 + pc}: pop from empty list")
                    cut = text.rfind(",")
                    text = "[]" if cut < 0 else text[:cut] + "]"
                else:
                    item = str(env[a] if op == APPEND else a)
                    text = "[" + item + "]" if text == "[]" else text[:-1] + "," + item + "]"
            env[t] = text
            put(pre[pc] + text)
        else:
            put(pre[pc])
            if op == RETURN:
                return out
            if op == WHILE or op == IFV:
                ok = env[a]
            elif op == WHILEL:
                ok = env[a] != "[]"
            elif op == IFEQ:
                ok = env[a] == env[b]
            elif op == IFNE:
                ok = env[a] != env[b]
            elif op == IFEQK:
                ok = env[a] == b
            else:
                ok = env[a] != b
            if not ok:
                pc = jump
                continue
        pc = nxt
    raise RuntimeError(f"program ran past {MAX_STEPS} steps")


def execute(line: Line, env: dict[str, Value]) -> bool:
    """Run one line on ``env`` in place (no trace); for a header, return its condition.

    >>> env = {"x": 2, "lst_a": [1]}
    >>> execute((APPEND, 1, "lst_a", "x", None), env), env["lst_a"]
    (True, [1, 2])
    >>> execute((IFEQK, 1, None, "x", 3, ), env)
    False
    """
    op, _, t, a, b = line
    if op == SET:
        env[t] = a
    elif op == COPY:
        env[t] = env[a]
    elif op == INC:
        env[t] = env[a] + 1
    elif op == DEC:
        env[t] = env[a] - 1
    elif op == POPTO:
        env[t] = env[a].pop()
    elif op == EQ:
        env[t] = env[a] == env[b]
    elif op == NE:
        env[t] = env[a] != env[b]
    elif op == EQK:
        env[t] = env[a] == b
    elif op == NEK:
        env[t] = env[a] != b
    elif op == APPEND:
        env[t].append(env[a])
    elif op == APPENDK:
        env[t].append(a)
    elif op == POP:
        env[t].pop()
    elif op == NEW:
        env[t] = []
    elif op == IFV or op == WHILE:
        return bool(env[a])
    elif op == WHILEL:
        return env[a] != []
    elif op == IFEQ:
        return env[a] == env[b]
    elif op == IFNE:
        return env[a] != env[b]
    elif op == IFEQK:
        return env[a] == b
    elif op == IFNEK:
        return env[a] != b
    return True
