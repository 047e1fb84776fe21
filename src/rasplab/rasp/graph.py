"""A RASP program as a graph: every expression it reads, children before parents.

>>> from rasplab.rasp import rasp
>>> x = (rasp.tokens + 1).named("x")
>>> [e.name for e in nodes(rasp.SequenceMap(lambda a, b: a * b, x, rasp.indices).named("y"))]
['tokens', 'x', 'indices', 'y']
"""

from __future__ import annotations

from rasplab.rasp.rasp import RaspError, RASPExpr, SOp


def nodes(program: RASPExpr) -> list[RASPExpr]:
    """Every expression ``program`` depends on (itself last), each once, children first.

    Raises :class:`RaspError` naming the expressions of a cycle (possible only when a
    program's attributes were reassigned after construction).
    """
    if not isinstance(program, RASPExpr):
        raise RaspError(f"a RASP program is an SOp (or selector), got {program!r}")
    order: list[RASPExpr] = []
    done: set[int] = set()
    path: list[RASPExpr] = []
    on_path: set[int] = set()
    stack: list[tuple[RASPExpr, int]] = [(program, 0)]
    while stack:
        expr, i = stack.pop()
        if i == 0:
            if id(expr) in done:
                continue
            path.append(expr)
            on_path.add(id(expr))
        kids = list(expr.children)
        if i < len(kids):
            stack.append((expr, i + 1))
            child = kids[i]
            if not isinstance(child, RASPExpr):
                raise RaspError(f"{expr.label} reads {child!r}, which is not a RASP expression")
            if id(child) in on_path:
                loop = [e.label for e in path[[id(e) for e in path].index(id(child)) :]]
                raise RaspError(f"the program has a cycle: {' -> '.join([*loop, child.label])}")
            if id(child) not in done:
                stack.append((child, 0))
            continue
        path.pop()
        on_path.discard(id(expr))
        done.add(id(expr))
        order.append(expr)
    return order


def sops(program: RASPExpr) -> list[SOp]:
    """The SOps among :func:`nodes`, children first."""
    return [e for e in nodes(program) if isinstance(e, SOp)]
