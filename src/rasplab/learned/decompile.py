"""Decompilation: a discretised model becomes a standalone Python module.

Steps (:func:`decompile`):

1. :func:`extract` reads the hard choices out of the weights: for every head its query, key
   and value variables, its predicate (``logit > 0``) and, for counting heads, its value set;
   for every MLP and the readout its two inputs and its table (argmax per cell);
2. it follows value names through the stream: tokens are named by the vocabulary, positions
   and counts by their number, a categorical head by the names of the variable it copies, an
   MLP by the numbers its table can produce from the values its inputs can hold;
3. it keeps only the components the readout depends on;
4. :func:`render` writes the module: predicates as ``{query value: {key values}}`` tables,
   MLPs as ``{a: {b: output}}`` lookups, one line per component in ``run``, and a docstring
   naming the task, the semantics and one worked example. The module needs only the
   standard library and exposes ``run(tokens) -> list[str | None]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rasplab.deprecation import old_names
from rasplab.errors import RasplabError
from rasplab.learned.model import DiscreteTransformer

__getattr__ = old_names(
    __name__,
    {
        "Extracted": "rasplab.learned.decompile:LearnedProgram",
        "load_program": "rasplab.learned.decompile:load_learned_program",
    },
)
"""``Extracted`` and ``load_program``, the old names of :class:`LearnedProgram` and
:func:`load_learned_program`, still importable (deprecated)."""

RUNTIME = '''
def select(query, key, value, predicate):
    """Categorical head: position i copies ``value`` at the leftmost j whose key is in
    ``predicate[query[i]]``, and ``value[0]`` (the <bos> position) when none is."""
    out = []
    for q in query:
        allowed = predicate[q]
        j = next((j for j, k in enumerate(key) if k in allowed), 0)
        out.append(value[j])
    return out


def count(query, key, value, predicate, members):
    """Counting head: how many positions j >= 1 have key in ``predicate[query[i]]`` and
    value in ``members``, capped at CAP."""
    hits = [v in members for v in value]
    out = []
    for q in query:
        allowed = predicate[q]
        n = sum(1 for j in range(1, len(key)) if hits[j] and key[j] in allowed)
        out.append(min(n, CAP))
    return out


def lookup(first, second, table):
    """MLP: ``table[a][b]`` at every position."""
    return [table[a][b] for a, b in zip(first, second)]
'''


@dataclass(frozen=True)
class Component:
    """One head or MLP: ``kind`` is ``select``, ``count`` or ``lookup``; ``reads`` are
    variable indices (query, key, value; or first, second); ``out`` is the variable written
    (-1 for the readout). ``predicate`` [C][C] and ``members`` [C] are booleans, ``table``
    [C][C] output value ids."""

    kind: str
    name: str
    out: int
    reads: tuple[int, ...]
    predicate: tuple[tuple[bool, ...], ...] = ()
    members: tuple[bool, ...] = ()
    table: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class LearnedProgram:
    """A learned program: the discretised model read as data (variable names, components in
    stream order, readout); :func:`render` writes it as Python, :mod:`~rasplab.learned.to_lang`
    as a ``rasplab.lang`` program."""

    vocab: tuple[str, ...]
    classes: tuple[str, ...]
    width: int
    names: tuple[str, ...]
    components: tuple[Component, ...]
    readout: Component


def _ints(t: torch.Tensor) -> tuple:
    return tuple(tuple(int(v) for v in row) for row in t.tolist())


def _bools(t: torch.Tensor) -> tuple:
    return tuple(tuple(bool(v) for v in row) for row in (t > 0).tolist())


@torch.no_grad()
def extract(model: DiscreteTransformer) -> LearnedProgram:
    """Step 1: the hard choices of every component, in the order they write the stream
    (of a one-seed model: see :meth:`DiscreteTransformer.select`)."""
    if len(model.seeds) != 1:
        raise RasplabError(f"decompile one seed at a time; this model holds {len(model.seeds)}")
    shape = model.shape
    names = ["tokens", "positions"]
    comps: list[Component] = []
    for layer, (cat, cnt, mlp) in enumerate(zip(model.cat, model.count, model.mlp)):
        for kind, heads, count in (
            ("select", cat, shape.cat_heads),
            ("count", cnt, shape.count_heads),
        ):
            for h in range(count):
                name = f"{kind}_{layer}_{h}"
                reads = tuple(int(p[0, h].argmax()) for p in (heads.query, heads.key, heads.value))
                members = tuple(bool(v) for v in (heads.members[0, h] > 0).tolist())
                comps.append(
                    Component(
                        kind,
                        name,
                        len(names),
                        reads,
                        _bools(heads.predicate[0, h]),
                        members if kind == "count" else (),
                    )
                )
                names.append(name)
        for m in range(shape.mlps):
            name = f"mlp_{layer}_{m}"
            reads = (int(mlp.first[0, m].argmax()), int(mlp.second[0, m].argmax()))
            comps.append(
                Component(
                    "lookup", name, len(names), reads, table=_ints(mlp.table[0, m].argmax(-1))
                )
            )
            names.append(name)
    ro = model.readout
    readout = Component(
        "lookup",
        "output",
        -1,
        (int(ro.first[0, 0].argmax()), int(ro.second[0, 0].argmax())),
        table=_ints(ro.table[0, 0].argmax(-1)),
    )
    return LearnedProgram(
        shape.vocab, shape.classes, shape.width, tuple(names), tuple(comps), readout
    )


def value_names(ex: LearnedProgram) -> list[dict[int, object]]:
    """Step 2: per variable, the value ids it can hold (an over-approximation) and their names."""
    tokens = {i: tok for i, tok in enumerate(ex.vocab) if tok != "<pad>"}
    numbers = {i: i for i in range(ex.width)}
    names: list[dict[int, object]] = [tokens, numbers]
    for comp in ex.components:
        if comp.kind == "select":
            names.append(names[comp.reads[2]])
        elif comp.kind == "count":
            names.append(numbers)
        else:
            a, b = (names[r] for r in comp.reads)
            names.append({i: i for i in sorted({comp.table[x][y] for x in a for y in b})})
    return names


def needed(ex: LearnedProgram) -> list[Component]:
    """Step 3: the components the readout depends on, in stream order."""
    want = set(ex.readout.reads)
    keep = []
    for comp in reversed(ex.components):
        if comp.out in want:
            keep.append(comp)
            want.update(comp.reads)
    return keep[::-1]


def _set(labels) -> str:
    return "{" + ", ".join(repr(x) for x in labels) + "}" if labels else "set()"


def _table_text(comp: Component, names, out_names) -> list[str]:
    """A predicate or lookup table as source lines (rows in value order)."""
    q, k = names[comp.reads[0]], names[comp.reads[1]]
    lines = [f"{comp.name.upper()} = {{"]
    for x, xl in q.items():
        if comp.kind == "lookup":
            row = ", ".join(f"{yl!r}: {out_names[comp.table[x][y]]!r}" for y, yl in k.items())
            lines.append(f"    {xl!r}: {{{row}}},")
        else:
            lines.append(
                f"    {xl!r}: {_set([yl for y, yl in k.items() if comp.predicate[x][y]])},"
            )
    lines.append("}")
    return lines


def render(
    ex: LearnedProgram,
    task_name: str,
    description: str,
    unscored: tuple[str, ...],
    example: tuple | None = None,
) -> str:
    """Step 4: the module's source text (``None`` at the ``unscored`` tokens)."""
    names = value_names(ex)
    var = ex.names
    body, tables = [], []
    for comp in needed(ex):
        reads = ", ".join(var[r] for r in comp.reads)
        tables += [f"# {comp.name}: {comp.kind}({reads})"]
        tables += _table_text(comp, names, names[comp.out] if comp.kind == "lookup" else None)
        if comp.kind == "count":
            members = [lab for i, lab in names[comp.reads[2]].items() if comp.members[i]]
            tables.append(f"{comp.name.upper()}_MEMBERS = {_set(members)}")
            body.append(
                f"    {comp.name} = count({reads}, {comp.name.upper()}, {comp.name.upper()}_MEMBERS)"
            )
        else:
            body.append(f"    {comp.name} = {comp.kind}({reads}, {comp.name.upper()})")
        tables.append("")
    classes = dict(enumerate(ex.classes))
    tables += [f"# output: lookup({', '.join(var[r] for r in ex.readout.reads)}) -> class"]
    tables += _table_text(ex.readout, names, classes)
    first, second = (var[r] for r in ex.readout.reads)
    worked = ""
    if example is not None:
        worked = f"\n\nExample::\n\n    run({list(example[0])!r})\n    == {list(example[1])!r}\n"
    doc = (
        f'"""Learned transformer program for {task_name}: {description}.\n\n'
        "Decompiled by rasplab.learned from a discretised transformer and checked against it.\n"
        "Every variable holds one value per position. ``select`` copies the value at the\n"
        "leftmost matching position (position 0 when none matches); ``count`` counts matching\n"
        f"positions after position 0, capped at CAP = {ex.width - 1}; positions read as\n"
        f"min(i, CAP), so any length runs. ``run`` returns None at {', '.join(unscored)}"
        f" tokens.{worked}"
        '"""\n'
    )
    lines = [
        doc,
        f"CAP = {ex.width - 1}",
        f"VOCAB = {tuple(t for t in ex.vocab if t != '<pad>')!r}",
    ]
    lines += [f"UNSCORED = {unscored!r}", RUNTIME, *tables, ""]
    lines += [
        "",
        "def run(tokens: list[str]) -> list[str | None]:",
        '    """One output per position of ``tokens`` (starting with <bos>)."""',
        "    for t in tokens:",
        "        if t not in VOCAB:",
        '            raise ValueError(f"token {t!r} is not in the vocabulary {VOCAB}")',
        "    positions = [min(i, CAP) for i in range(len(tokens))]",
        *body,
        f"    output = lookup({first}, {second}, OUTPUT)",
        "    return [None if t in UNSCORED else y for t, y in zip(tokens, output)]",
        "",
    ]
    return "\n".join(lines)


def load_learned_program(source: str) -> dict:
    """Run generated ``source`` (a rendered learned program, never a file from elsewhere) and
    return its namespace (``run`` and its tables)."""
    namespace: dict = {}
    exec(compile(source, "<learned program>", "exec"), namespace)
    return namespace


def unscored_tokens(task) -> tuple[str, ...]:
    """The special tokens whose positions the task never scores (``<bos>``; ``<eos>``
    unless it carries a label, as the units digit of an addition does).

    >>> from rasplab.tasks import get_task
    >>> unscored_tokens(get_task("rasp_sort")), unscored_tokens(get_task("rasp_addition"))
    (('<bos>', '<eos>'), ('<bos>',))
    """
    ex = task.example(next(iter(task.inputs(task.max_length))))
    eos_scored = any(t == "<eos>" and y is not None for t, y in zip(ex.tokens, ex.targets))
    return tuple(
        t for t in ("<bos>", "<eos>") if t in task.vocab and not (t == "<eos>" and eos_scored)
    )


def decompile(model: DiscreteTransformer, task, example: tuple[str, ...] | None = None) -> str:
    """The readable program of ``model`` trained on ``task`` (steps 1-4); with ``example``
    tokens, the docstring shows what the program outputs for them."""
    ex = extract(model)
    unscored = unscored_tokens(task)
    source = render(ex, task.name, task.description, unscored)
    if example is None:
        return source
    output = load_learned_program(source)["run"](list(example))
    return render(ex, task.name, task.description, unscored, (example, output))
