"""The PTG program generator: a random function of a planned shape, built while it runs.

:func:`build` takes a shape from ``plan.py`` (which fixes the line count and the number of
trace steps) and fills it with statements of the grammar, executing each top-level line as it
is written so that every ``if`` goes the way the shape says and no ``pop`` meets an empty list.
Every variable is used in the body; the inputs are drawn with the program. A list loop of the
shape (``("drain", m, n)``) consumes an input list that no earlier line touched (``while lst !=
[]:``, ``x = lst.pop()``, then ``m`` statements that prefer to read ``x``); it never pops
inside its body nor appends to its own list, so it runs once per element. The result is a
:class:`~rasplab.tasks.ptg.program.Instance` traced by the fast tracer.

>>> import numpy as np
>>> from rasplab.tasks.ptg.draws import Draws
>>> from rasplab.tasks.ptg.plan import reach
>>> draws = Draws(np.random.default_rng(4))
>>> shape = reach((1, 4), (1, 5), True, True).sample(draws, lines=12, steps=25)
>>> inst = build(draws, shape, variables=5, list_length=3, values=(0, 9))
>>> (inst.program.n_lines, len(inst.trace), len(inst.program.variables))
(12, 25, 5)
>>> print(inst.program.source())
def f(e, o, lst_m):
    cnter_0 = 9
    cond_j = cnter_0 != 5
    while cond_j:
        lst_m.append(o)
        e = o + 1
        cnter_0 = cnter_0 - 1
        cond_j = cnter_0 != 5
    if o == cnter_0:
        e = e - 1
        e = e + 1
    return
>>> inst.call
'f(e=8, o=9, lst_m=[4,7,9])'
>>> inst.trace[:6], inst.trace[-3:]
(('2,cnter_0:9', '3,cond_j:True', '4,', '5,lst_m:[4,7,9,9]', '6,e:10', '7,cnter_0:8'), ('4,', '9,', '12,'))
"""

from __future__ import annotations

import re

from rasplab.tasks.ptg import program as P
from rasplab.tasks.ptg.draws import Draws
from rasplab.tasks.ptg.program import Instance, Program
from rasplab.tasks.ptg.tracer import execute, trace

INT, BOOL, LIST = "int", "bool", "list"
#: how many unused parameters one statement line is counted on to take up when planning
PARAMS_PER_LINE = 1.5


class GenerationFailed(Exception):
    """This shape could not be filled with these variables (the caller draws another)."""


def build(
    draws: Draws,
    shape: list[tuple],
    variables: int,
    list_length: int,
    values: tuple[int, int],
    first_line: int = 1,
) -> Instance:
    """Fill ``shape`` with a program of exactly ``variables`` variables and trace it."""
    program, inputs = build_program(draws, shape, variables, list_length, values)
    return Instance(program, inputs, tuple(trace(program, inputs, first_line)), first_line)


def build_program(
    draws: Draws, shape: list[tuple], variables: int, list_length: int, values: tuple[int, int]
) -> tuple[Program, tuple]:
    """Fill ``shape`` with a program and draw its inputs (no trace yet)."""
    return _Builder(draws, shape, variables, list_length, values).run()


class _Builder:
    """One attempt at filling a shape (raises :class:`GenerationFailed` when it cannot)."""

    def __init__(self, draws, shape, variables, list_length, values) -> None:
        self.d = draws
        self.shape = shape
        self.values = values
        self.lines: list[tuple] = []
        self.env: dict = {}
        self.defined = {INT: [], BOOL: [], LIST: []}  # readable variables by kind
        self.writable = {INT: [], BOOL: [], LIST: []}  # the same without loop control
        self.pending: dict[str, str] = {}  # unused parameters -> type
        self._plan_variables(variables, list_length)

    # -- variables ------------------------------------------------------------------
    def _plan_variables(self, v: int, list_length: int) -> None:
        d, shape = self.d, self.shape
        loops = sum(1 for it in shape if it[0] == "loop")
        drains = sum(1 for it in shape if it[0] == "drain")
        ifs = sum(1 for it in shape if it[0] == "if")
        top = sum(1 for it in shape if it[0] == "simple")
        in_if = sum(it[1] for it in shape if it[0] == "if")
        in_loop = sum(it[1] for it in shape if it[0] in ("loop", "drain"))
        need_int = 1 if ifs or drains else 0
        need_list = max(1, drains)  # each list loop consumes its own input list
        min_params = need_list + need_int
        pairs = min(loops, len(P.COUNTER_NAMES), max(0, (v - min_params) // 2))
        if loops and not pairs:
            raise GenerationFailed("too few variables for the loops")
        rest = v - 2 * pairs
        creatable = top + in_loop
        capacity = top + in_if + in_loop + ifs
        lo = max(0, rest - int(PARAMS_PER_LINE * capacity))
        hi = min(rest - min_params, creatable)
        if lo > hi:
            raise GenerationFailed("variables do not fit the lines")
        n_local = d.randint(lo, hi) if hi > lo else lo
        n_param = rest - n_local
        n_list = need_list + sum(1 for _ in range(n_param - min_params) if d.chance(0.25))
        n_int = n_param - n_list
        n_list += max(0, n_int - len(P.INT_NAMES))
        n_int = n_param - n_list
        if n_list > len(P.LIST_NAMES):
            raise GenerationFailed("too many parameters")
        self.free = {INT: list(P.INT_NAMES), BOOL: list(P.BOOL_NAMES), LIST: list(P.LIST_NAMES)}
        lo_v, hi_v = self.values
        self.inputs = []
        for _ in range(n_int):
            name = self._fresh(INT)
            self._define(name, INT, d.randint(lo_v, hi_v))
            self.pending[name] = INT
            self.inputs.append((name, self.env[name]))
        for _ in range(n_list):
            name = self._fresh(LIST)
            self._define(name, LIST, [d.randint(lo_v, hi_v) for _ in range(list_length)])
            self.pending[name] = LIST
            self.inputs.append((name, list(self.env[name])))
        self.params = tuple(n for n, _ in self.inputs)
        self.pairs = [(P.COUNTER_NAMES[i], self._fresh(BOOL)) for i in range(pairs)]
        # input lists kept untouched (unreadable, unwritable) until their list loop drains them
        self.reserved = [n for n, v in self.inputs if type(v) is list][:drains]
        for name in self.reserved:
            self.defined[LIST].remove(name)
            self.writable[LIST].remove(name)
            del self.pending[name]
        self.focus: str | None = None
        room = {k: len(v) for k, v in self.free.items()}
        has_int = n_int > 0 or pairs > 0
        kinds = []
        for _ in range(n_local):
            u = d.random()
            kind = INT if u < 0.45 or not has_int else BOOL if u < 0.85 else LIST
            for alt in (kind, INT, BOOL, LIST):
                if room[alt] and (alt != BOOL or has_int):
                    kind = alt
                    break
            else:
                raise GenerationFailed("too many local variables")
            room[kind] -= 1
            kinds.append(kind)
        self.to_create = kinds
        self.creatable = creatable
        self.capacity = capacity

    def _fresh(self, kind: str) -> str:
        """A random unused name of ``kind``."""
        pool = self.free[kind]
        i = int(self.d.random() * len(pool))
        pool[i], pool[-1] = pool[-1], pool[i]
        return pool.pop()

    def _define(self, name: str, kind: str, value) -> None:
        self.env[name] = value
        self.defined[kind].append(name)
        self.writable[kind].append(name)

    # -- walking the shape ------------------------------------------------------------
    def run(self) -> tuple[Program, tuple]:
        """Write every item of the shape, then the return line."""
        loop_no = 0
        for item in self.shape:
            if item[0] == "simple":
                self._top(self._statement("top"))
            elif item[0] == "if":
                self._if(item[1], item[2])
            elif item[0] == "drain":
                self._drain(item[1], item[2])
            else:
                self._loop(self.pairs[loop_no % len(self.pairs)], item[1], item[2])
                loop_no += 1
        if self.pending or self.to_create:
            raise GenerationFailed("some variables were never used")
        self.lines.append((P.RETURN, 1, None, None, None))
        return Program(self.params, tuple(self.lines)), tuple(self.inputs)

    def _top(self, line: tuple) -> None:
        self.lines.append(line)
        execute(line, self.env)

    def _if(self, k: int, taken: bool) -> None:
        self.capacity -= 1
        self.lines.append(self._condition(taken))
        for _ in range(k):
            line = self._statement("if" if taken else "skip", depth=2)
            self.lines.append(line)
            if taken:
                execute(line, self.env)

    def _loop(self, pair: tuple[str, str], m: int, n: int) -> None:
        d, (counter, cond) = self.d, pair
        start = d.randint(*self.values)
        step = P.INC if d.chance(0.5) else P.DEC
        stop = start + n if step == P.INC else start - n
        head = [(P.SET, 1, counter, start, None), (P.NEK, 1, cond, counter, stop)]
        for line in head:
            self._top(line)
        for name in pair:
            if name not in self.defined[BOOL] and name not in self.defined[INT]:
                self.defined[BOOL if name == cond else INT].append(name)
        self.loop_ops: dict[str, list[int]] = {}
        self.loop_n = n
        self.lines.append((P.WHILE, 1, None, cond, None))
        body = [self._statement("loop", depth=2) for _ in range(m)]
        body += [(step, 2, counter, counter, None), (P.NEK, 2, cond, counter, stop)]
        self.lines.extend(body)
        for _ in range(n):
            for line in body:
                execute(line, self.env)

    def _drain(self, m: int, n: int) -> None:
        """A list loop: pop the next reserved input list (``n`` elements) until it is empty."""
        lst = self.reserved.pop(0)
        if len(self.env[lst]) != n:
            raise GenerationFailed("the list to drain does not have the planned length")
        if self.to_create and self.to_create[-1] == INT and self.d.chance(0.5):
            x = self._fresh(self.to_create.pop())
            self.defined[INT].append(x)
            self.writable[INT].append(x)
        else:
            x = self._pick(INT, writable=True)
            if x is None:
                raise GenerationFailed("no integer to pop into")
        self._used(x)
        self.lines.append((P.WHILEL, 1, None, lst, None))
        self.focus = x
        body = [(P.POPTO, 2, x, lst, None)]
        body += [self._statement("drain", depth=2) for _ in range(m)]
        self.focus = None
        self.lines.extend(body)
        for _ in range(n):
            for line in body:
                execute(line, self.env)
        self.defined[LIST].append(lst)
        self.writable[LIST].append(lst)

    # -- statements ---------------------------------------------------------------------
    def _urgency(self) -> float:
        return min(1.0, 1.5 * len(self.pending) / max(self.capacity, 1))

    def _pick(self, kind: str, exclude=(), writable: bool = False) -> str | None:
        """A defined variable of ``kind``, preferring unused parameters when they are due."""
        if self.pending and self.d.random() < self._urgency():
            due = [n for n, k in self.pending.items() if k == kind and n not in exclude]
            if due:
                return self.d.choice(due)
        focus = self.focus
        if kind == INT and focus is not None and focus not in exclude and self.d.chance(0.4):
            return focus
        pool = self.writable[kind] if writable else self.defined[kind]
        if exclude:
            pool = [n for n in pool if n not in exclude]
        return self.d.choice(pool) if pool else None

    def _used(self, *names) -> None:
        for n in names:
            if type(n) is str:
                self.pending.pop(n, None)

    def _const(self) -> int:
        return self.d.randint(*self.values)

    def _statement(self, ctx: str, depth: int = 1) -> tuple:
        """One simple statement for context ``top``, ``loop``, ``if`` (taken) or ``skip``."""
        self.capacity -= 1
        can_create = ctx in ("top", "loop", "drain")
        if can_create:
            self.creatable -= 1
        if self.to_create and can_create:
            due = len(self.to_create) > self.creatable or self.d.random() < len(self.to_create) / (
                self.creatable + 1
            )
            if due:
                line = self._create(self.to_create[-1], depth, ctx)
                if line is not None:
                    self.to_create.pop()
                    return line
        for _ in range(12):
            line = self._update(ctx, depth)
            if line is not None:
                return line
        raise GenerationFailed("no statement fits here")

    def _create(self, kind: str, depth: int, ctx: str) -> tuple | None:
        d = self.d
        name = self._fresh(kind)
        if kind == LIST:
            line = (P.NEW, depth, name, None, None)
            if ctx == "loop":
                self.loop_ops[name] = [None]
        elif kind == INT:
            src = self._pick(INT)
            u = d.random()
            if src is None or (u < 0.25 and src not in self.pending):
                line = (P.SET, depth, name, self._const(), None)
            else:
                op = P.COPY if u < 0.4 else P.INC if u < 0.7 else P.DEC
                line = (op, depth, name, src, None)
        else:
            line = self._compare(name, depth)
            if line is None:
                self.free[kind].append(name)
                return None
        self._used(*line[2:])
        self.defined[kind].append(name)
        self.writable[kind].append(name)
        return line

    def _compare(self, target: str, depth: int) -> tuple | None:
        a = self._pick(INT)
        if a is None:
            return None
        eq = self.d.chance(0.5)
        b = self._pick(INT, exclude=(a,)) if self.d.random() < max(0.5, self._urgency()) else None
        if b is not None:
            return (P.EQ if eq else P.NE, depth, target, a, b)
        k = self.env.get(a) if self.d.chance(0.3) else None
        if type(k) is not int:
            k = self._const()
        return (P.EQK if eq else P.NEK, depth, target, a, k)

    def _update(self, ctx: str, depth: int) -> tuple | None:
        """A statement writing an existing variable (never a loop's counter or condition)."""
        d = self.d
        line = None
        if self.pending and d.random() < self._urgency():
            line = self._urgent(ctx, depth)
        if line is not None:
            pass
        elif (kind := self._kind()) == LIST:
            lst = self._pick(LIST)
            if d.chance(0.35) and self._can_pop(ctx, lst):
                line = (P.POP, depth, lst, None, None)
            else:
                src = self._pick(INT) if d.chance(0.6) else None
                line = (
                    (P.APPEND, depth, lst, src, None)
                    if src is not None
                    else (P.APPENDK, depth, lst, self._const(), None)
                )
        elif kind == INT:
            t = self._pick(INT, writable=True)
            w = d.random()
            if w < 0.12:
                line = (P.SET, depth, t, self._const(), None)
            else:
                src = self._pick(INT) if w < 0.3 else (t if d.chance(0.5) else self._pick(INT))
                if src is None:
                    return None
                op = P.COPY if w < 0.3 and src != t else P.INC if d.chance(0.5) else P.DEC
                line = (op, depth, t, src, None)
        else:
            line = self._compare(d.choice(self.writable[BOOL]), depth)
            if line is None:
                return None
        if line[0] == P.POP or line[0] == P.APPEND or line[0] == P.APPENDK:
            if ctx == "loop":
                self.loop_ops.setdefault(line[2], []).append(-1 if line[0] == P.POP else 1)
        self._used(*line[2:])
        return line

    def _kind(self) -> str:
        """The kind of variable the next update writes: list 0.3, integer 0.5, boolean 0.2."""
        w = self.writable
        wl, wi, wb = 0.3 if w[LIST] else 0.0, 0.5 if w[INT] else 0.0, 0.2 if w[BOOL] else 0.0
        u = self.d.random() * (wl + wi + wb)
        return LIST if u < wl else INT if u < wl + wi else BOOL

    def _urgent(self, ctx: str, depth: int) -> tuple | None:
        """A statement that uses up to two unused parameters at once."""
        d = self.d
        ints = [n for n, k in self.pending.items() if k == INT]
        lists = [n for n, k in self.pending.items() if k == LIST]
        if lists and (ints or d.chance(0.5)):
            lst = d.choice(lists)
            if not ints and d.chance(0.3) and self._can_pop(ctx, lst):
                return (P.POP, depth, lst, None, None)
            src = d.choice(ints) if ints else self._pick(INT)
            if src is None:
                return (P.APPENDK, depth, lst, self._const(), None)
            return (P.APPEND, depth, lst, src, None)
        if not ints:
            return None
        a = d.choice(ints)
        others = [n for n in ints if n != a]
        bools = self.writable[BOOL]
        if bools and d.chance(0.4):
            b = d.choice(others) if others else self._pick(INT, exclude=(a,))
            if b is not None:
                return (P.EQ if d.chance(0.5) else P.NE, depth, d.choice(bools), a, b)
        if others:
            b = d.choice(others)
            op = P.COPY if d.chance(0.2) else P.INC if d.chance(0.5) else P.DEC
            return (op, depth, a, b, None) if d.chance(0.5) else (op, depth, b, a, None)
        return (P.INC if d.chance(0.5) else P.DEC, depth, a, a, None)

    def _can_pop(self, ctx: str, lst: str) -> bool:
        """Whether popping ``lst`` here never meets an empty list (never inside a list loop,
        whose iteration count follows the input size)."""
        if ctx == "skip":
            return True
        if ctx == "drain":
            return False
        if ctx != "loop":
            return len(self.env[lst]) > 0
        ops = self.loop_ops.get(lst, []) + [-1]
        size = len(self.env.get(lst, ()))
        for _ in range(self.loop_n):
            for delta in ops:
                size = 0 if delta is None else size + delta
                if size < 0:
                    return False
        return True

    def _condition(self, want: bool) -> tuple:
        """An ``if`` header whose condition evaluates to ``want`` right now."""
        d, env = self.d, self.env
        bools = [n for n in self.writable[BOOL] if env[n] == want]
        u = d.random()
        if bools and u < 0.35 and not (self.pending and d.random() < self._urgency()):
            return (P.IFV, 1, None, d.choice(bools), None)
        a = self._pick(INT)
        if a is None:
            raise GenerationFailed("no integer for an if condition")
        b = self._pick(INT, exclude=(a,)) if u < 0.65 else None
        self._used(a, b)
        if b is not None:
            same = env[a] == env[b]
            return (P.IFEQ if same == want else P.IFNE, 1, None, a, b)
        eq = d.chance(0.5)
        k = env[a]
        if eq != want:
            while k == env[a]:
                k = self._const()
        return (P.IFEQK if eq else P.IFNEK, 1, None, a, k)


def rename(draws: Draws, program: Program, inputs: tuple) -> tuple[Program, tuple] | None:
    """The same program with one variable (not a loop counter) renamed to a random free name.

    Renaming changes the source but not what the program does; the caller traces it afterwards.
    Returns None when the chosen variable's name pool has no free name.
    """
    names = [n for n in program.variables if not n.startswith("cnter_")]
    old = draws.choice(names)
    pool = (
        P.LIST_NAMES
        if old.startswith("lst_")
        else P.BOOL_NAMES
        if old.startswith("cond_")
        else P.INT_NAMES
    )
    used = set(program.variables)
    free = [n for n in pool if n not in used]
    if not free:
        return None
    new = draws.choice(free)

    def sub(x):
        return new if x == old else x

    lines = tuple((op, dp, sub(t), sub(a), sub(b)) for op, dp, t, a, b in program.lines)
    params = tuple(sub(n) for n in program.params)
    renamed = Program(params, lines)
    word = re.compile(r"\b" + old + r"\b")
    # the cached views, edited as text instead of rendered again (same result, cheaper)
    renamed.__dict__["body_texts"] = tuple(word.sub(new, text) for text in program.body_texts)
    renamed.__dict__["variables"] = tuple(sub(n) for n in program.variables)
    return renamed, tuple((sub(n), v) for n, v in inputs)
