"""Export a discretised learned model to a :mod:`rasplab.lang` program, where the language
can say exactly what the model computes.

The language (ALTA's execution model, ``docs/language.md``) differs from the learned model
in three ways, and the export bridges each one exactly or refuses:

* **Counting heads** become numerical heads. The query is the set of key values the
  predicate accepts plus a start marker ``S`` that only position 0 carries; the key is
  ``S`` at position 0, the key where the value is in the head's value set, and a marker
  ``N`` that no query holds elsewhere; the head averages a start indicator (1 at position
  0), so it reads ``1/(k+1)`` for ``k`` counted positions, and buckets at ``1/(k+1)`` for
  ``k = 0 .. CAP`` give the count, saturating at CAP exactly as the model does (a mean
  below ``1/(CAP+1)`` falls into the lowest bucket). Always exact.
* **Categorical heads** copy the value at the *leftmost* matching position (position 0
  included), or at position 0 when none matches; the language's categorical attention is
  defined only when exactly one position is selected. Per query value that can occur, the
  export takes the set R of key values the predicate accepts (among those that can occur).
  When R is empty the head reads position 0. Otherwise the MLP first notes whether position
  0's key (read by a head) is in R, which makes position 0 the leftmost match; if not, it
  marks the leftmost position j >= 1 whose key is in R: a numerical head with a relative
  mask (offsets ``-(P-1) .. -1`` for inputs of at most P tokens) averages a start
  indicator over position 0 and the earlier positions with a key in R, which is 1 exactly
  when there are none. Then one head reads the value at the marked position (exactly one is
  marked, when any), one averages over position 0 and the marked one (1: none marked, 1/2:
  one), one reads position 0, and the MLP picks. Exact for every input of at most P tokens
  and nothing is assumed about the inputs; with no bound P the export refuses
  (:class:`NotExpressible`).
* **MLPs and the readout** become one rule per pair of input values that can occur.

One learned layer takes four language layers, told apart by a ``phase`` counter: *prepare*
(the MLP writes the keys and query sets the layer's heads need), *prefix* (the MLP marks the
leftmost match of each accepted set), *attend* (heads run; the MLP copies their results into
ordinary variables), *mlp* (the learned MLPs); a last layer applies the readout. Every
learned variable is written once.

>>> import torch
>>> from rasplab.learned.model import DiscreteTransformer, Shape
>>> from rasplab.learned.decompile import extract
>>> net = DiscreteTransformer(Shape(vocab=("<pad>", "<bos>", "a", "b"), classes=("1", "2"),
...     width=4, layers=1, cat_heads=0, count_heads=1, mlps=0))
>>> with torch.no_grad():
...     net.readout.first[0, 0, 2] = 1.0   # the readout reads the count
>>> export = to_lang(extract(net), position_range=None)
>>> export.program.max_layers, export.mapped
(5, {'count_0_0': 'count'})
>>> ids = [1, 2, 3, 2]   # <bos> a b a
>>> model = net(torch.tensor([ids]), torch.ones(1, 4, dtype=torch.bool), hard=True)
>>> interpret(export.program, [ids]).outputs[0] == model.argmax(-1)[0, 0].tolist()
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rasplab.compiler.verify import verify as verify_compiled
from rasplab.errors import RasplabError
from rasplab.lang import (
    Program,
    Rule,
    input_var,
    interpret,
    numeric_var,
    position_var,
    program,
    qkv,
    set_var,
    var,
)
from rasplab.learned.decompile import (
    Component,
    LearnedProgram,
    extract,
    needed,
    unscored_tokens,
    value_names,
)
from rasplab.learned.verify import ProgramMismatch, verify

PHASES = 4
"""Language layers per learned layer: prepare, prefix, attend, mlp."""


class NotExpressible(RasplabError):
    """A learned component has no exact counterpart in :mod:`rasplab.lang`."""


@dataclass(frozen=True)
class LangExport:
    """The program, how each learned head was mapped (``count``; ``first``: always the
    value at position 0; ``leftmost``: the value at the leftmost match, for some query
    value), the longest input it accepts (None: any), and the token / class names of its
    ids."""

    program: Program
    mapped: dict[str, str]
    position_range: int | None
    vocab: tuple[str, ...]
    classes: tuple[str, ...]


def _layer(comp: Component) -> int:
    return int(comp.name.split("_")[1])


def _accepted(comp: Component, occurs: list[dict]) -> dict[int, frozenset | None]:
    """Per query value that can occur: the key values its predicate accepts among those that
    can occur (None when there are none: the head reads position 0)."""
    q, k, _ = comp.reads
    out = {}
    for qv in occurs[q]:
        accepted = frozenset(kv for kv in occurs[k] if comp.predicate[qv][kv])
        out[qv] = accepted or None
    return out


class _Builder:
    """Collects variables, heads and rules while the components are translated."""

    def __init__(self, ex: LearnedProgram, layers: int, position_range: int | None):
        c = ex.width
        self.ex, self.c, self.occurs = ex, c, value_names(ex)
        self.position_range = position_range
        self.sets: dict[tuple[str, frozenset], int] = {}
        self.fracs = tuple(sorted(1 / (k + 1) for k in range(c)))
        self.variables = {
            "tokens": input_var(c),
            "positions": position_var(c, lambda i: min(i, c - 1)),
            "start": position_var(2, lambda i: int(i == 0)),
            "start_num": numeric_var(values=(0.0, 1.0), position_init_fn=lambda i: float(i == 0)),
            "one": var(2, default=1),
            "hit": set_var(3, values=(frozenset({1}),), default=frozenset({1})),
            "hit_or_start": set_var(3, values=(frozenset({1, 2}),), default=frozenset({1, 2})),
            "phase": var(PHASES * layers + 1),
            "output": var(len(ex.classes)),
        }
        self.heads: dict = {}
        self.rules = [Rule((), "phase", p, p + 1) for p in range(PHASES * layers)]

    def rule(self, phase: int, reads: dict, name: str, new) -> None:
        old = self.variables[name].default
        if new != old:
            lhs = tuple({"phase": phase, **reads}.items())
            self.rules.append(Rule(lhs, name, old, new))

    def pairs(self, a: str, b: str):
        """Every (reads, value a, value b) over the values of ``a`` and ``b`` that can occur."""
        ia, ib = self.ex.names.index(a), self.ex.names.index(b)
        for va in self.occurs[ia]:
            for vb in [va] if a == b else self.occurs[ib]:
                yield {a: va, b: vb}, va, vb

    def first(self, value: str) -> str:
        """A head reading ``value`` at position 0 (the only position with ``start`` = 1)."""
        name = f"first_{value}"
        self.heads.setdefault(name, qkv("one", "start", value))
        return name

    def lookup(self, comp: Component, phase: int, out: str) -> None:
        a, b = (self.ex.names[r] for r in comp.reads)
        for reads, va, vb in self.pairs(a, b):
            self.rule(phase, reads, out, comp.table[va][vb])

    def count(self, comp: Component, layer: int) -> None:
        q, k, v = (self.ex.names[r] for r in comp.reads)
        h, c = comp.name, self.c
        ik = comp.reads[1]
        sets = {
            qv: frozenset({c} | {kv for kv in self.occurs[ik] if comp.predicate[qv][kv]})
            for qv in self.occurs[comp.reads[0]]
        }
        self.variables[f"{h}_key"] = var(c + 2, default=c)
        self.variables[f"{h}_query"] = set_var(c + 2, values=(frozenset(), *set(sets.values())))
        for reads, kv, vv in self.pairs(k, v):
            self.rule(
                PHASES * layer, {"start": 0, **reads}, f"{h}_key", kv if comp.members[vv] else c + 1
            )
        for qv, s in sets.items():
            self.rule(PHASES * layer, {q: qv}, f"{h}_query", s)
        self.heads[f"{h}_mean"] = qkv(
            f"{h}_query", f"{h}_key", "start_num", output=numeric_var(values=self.fracs)
        )
        for n in range(c):
            self.rule(PHASES * layer + 2, {f"{h}_mean": 1 / (n + 1)}, h, n)

    def leftmost(self, key: str, accepted: frozenset, layer: int) -> str:
        """A variable that is 1 at the leftmost position j >= 1 whose ``key`` is in
        ``accepted``, 0 at every other j >= 1 and S = 2 at position 0: written in the
        *prefix* phase from a head counting earlier positions with such a key."""
        name = f"leftmost_{self.sets.setdefault((key, accepted), len(self.sets))}"
        if name in self.variables:
            return name
        hit = self.ex.names.index(key)
        self.variables[f"{name}_hit"] = var(3, default=2)
        self.variables[name] = var(3, default=2)
        for kv in self.occurs[hit]:
            self.rule(PHASES * layer, {"start": 0, key: kv}, f"{name}_hit", int(kv in accepted))
        back = range(-(self.position_range - 1), 0)
        self.heads[f"{name}_before"] = qkv(
            "hit_or_start", f"{name}_hit", "start_num", back, numeric_var(values=(0.5, 1.0))
        )
        self.rule(PHASES * layer + 1, {f"{name}_hit": 0}, name, 0)
        for mean in (0.5, 1.0):
            self.rule(
                PHASES * layer + 1,
                {f"{name}_hit": 1, f"{name}_before": mean},
                name,
                int(mean == 1.0),
            )
        return name

    def select(self, comp: Component, layer: int) -> str:
        q, k, v = (self.ex.names[r] for r in comp.reads)
        h = comp.name
        accepted = _accepted(comp, self.occurs)
        value_at_start, key_at_start = self.first(v), self.first(k)
        values = list(self.occurs[comp.reads[2]])
        attend = PHASES * layer + 2
        if all(keys is None for keys in accepted.values()):
            for val in values:
                self.rule(attend, {value_at_start: val}, h, val)
            return "first"
        if self.position_range is None:
            raise NotExpressible(
                f"{h} cannot be expressed in rasplab.lang without a maximum input length: "
                "it copies the leftmost of several matching positions, which the export "
                "finds with relative attention over earlier positions; give position_range"
            )
        zero = f"{h}_matches_start"  # 1 where position 0's key is accepted: it is the leftmost
        self.variables[zero] = var(2)
        for qv, keys in accepted.items():
            if keys is None:
                for val in values:
                    self.rule(attend, {q: qv, value_at_start: val}, h, val)
                continue
            for kv in keys:
                self.rule(PHASES * layer + 1, {q: qv, key_at_start: kv}, zero, 1)
            first = self.leftmost(k, keys, layer)
            found, absent = f"{h}_at_{first}", f"{h}_absent_{first}"
            self.heads[found] = qkv("hit", first, v)
            self.heads[absent] = qkv(
                "hit_or_start", first, "start_num", output=numeric_var(values=(0.5, 1.0))
            )
            for val in values:
                self.rule(attend, {q: qv, zero: 1, value_at_start: val}, h, val)
                self.rule(attend, {q: qv, zero: 0, absent: 1.0, value_at_start: val}, h, val)
                self.rule(attend, {q: qv, zero: 0, absent: 0.5, found: val}, h, val)
        return "leftmost"


def to_lang(ex: LearnedProgram, position_range: int | None, name: str = "learned") -> LangExport:
    """The :mod:`rasplab.lang` program of an extracted model (only the components the
    readout depends on), accepting inputs of at most ``position_range`` tokens (None: any
    length). A categorical head that can copy the leftmost of several matches needs a
    bound (its relative attention looks back at most ``position_range - 1`` positions);
    without one it is :class:`NotExpressible`, named in the message."""
    keep = needed(ex)
    layers = 1 + max((_layer(comp) for comp in keep), default=-1)
    b = _Builder(ex, layers, position_range)
    mapped = {}
    for comp in keep:
        layer = _layer(comp)
        b.variables[comp.name] = var(ex.width)
        if comp.kind == "count":
            b.count(comp, layer)
            mapped[comp.name] = "count"
        elif comp.kind == "select":
            mapped[comp.name] = b.select(comp, layer)
        else:
            b.lookup(comp, PHASES * layer + 3, comp.name)
    b.lookup(ex.readout, PHASES * layers, "output")
    prog = program(
        b.variables,
        b.heads,
        b.rules,
        output="output",
        input_range=len(ex.vocab),
        position_range=position_range,
        max_layers=PHASES * layers + 1,
        name=name,
    )
    return LangExport(prog, mapped, position_range, ex.vocab, ex.classes)


def lang_outputs(
    export: LangExport, inputs: Sequence[Sequence[str]], unscored: tuple[str, ...]
) -> list[list[str | None]]:
    """Interpret the exported program on token sequences (with ``<bos>``): class names per
    position, None at ``unscored`` tokens, as ``program.py``'s ``run`` returns them."""
    ids = {t: i for i, t in enumerate(export.vocab)}
    out = []
    for lo in range(0, len(inputs), 512):
        part = inputs[lo : lo + 512]
        run = interpret(export.program, [[ids[t] for t in tokens] for tokens in part])
        for tokens, row in zip(part, run.outputs):
            out.append([None if t in unscored else export.classes[y] for t, y in zip(tokens, row)])
    return out


def check_export(
    export: LangExport,
    model,
    checks: dict[str, Sequence],
    unscored: tuple[str, ...],
    compiled_inputs: int = 200,
) -> dict:
    """Two second computations for an export: the interpreter running the exported program
    against the discretised ``model`` at every scored position of every check set (inputs
    longer than the program accepts are left out and counted), and the compiled weights
    against the interpreter (every variable at every layer) on the first
    ``compiled_inputs`` inputs of the first check set. A disagreement raises
    :class:`~rasplab.learned.verify.ProgramMismatch`; a compiler refusal is reported."""
    limit = export.position_range
    kept, skipped = {}, 0
    for name, examples in checks.items():
        fits = [ex for ex in examples if limit is None or len(ex.tokens) <= limit]
        skipped += len(examples) - len(fits)
        kept[f"{name} (rasplab.lang export)"] = fits
    every = [ex for examples in kept.values() for ex in examples]
    outputs = lang_outputs(export, [ex.tokens for ex in every], unscored)
    table = {tuple(ex.tokens): out for ex, out in zip(every, outputs)}
    checked = verify(lambda tokens: table[tuple(tokens)], model, kept)
    ids = {t: i for i, t in enumerate(export.vocab)}
    first = next(iter(kept.values()), [])[:compiled_inputs]
    try:
        report = verify_compiled(
            export.program, samples=0, inputs=[[ids[t] for t in ex.tokens] for ex in first]
        )
    except RasplabError as err:
        compiled = f"compiler refused: {str(err).splitlines()[0]}"
    else:
        if not report.ok:
            raise ProgramMismatch(
                f"compiled weights != interpreter for the rasplab.lang export: "
                f"{report.first_divergence}"
            )
        compiled = report.total
    return {
        "exported": True,
        "heads": export.mapped,
        "layers": export.program.max_layers,
        "rules": len(export.program.rules),
        "position_range": limit,
        "positions_checked": {
            k.removesuffix(" (rasplab.lang export)"): v for k, v in checked.items()
        },
        "inputs_too_long": skipped,
        "compiled_inputs_checked": compiled,
    }


def export_checked(model, task, checks: dict[str, Sequence], strict: bool = False):
    """Export ``model`` (one seed, trained on ``task``) for inputs of up to twice the
    training length in tokens and check it (:func:`check_export`): ``(record, listing)``.
    Should :func:`to_lang` refuse, ``strict`` raises :class:`NotExpressible`; otherwise the
    record says ``exported: False`` with the reason and there is no listing."""
    longest = 2 * task.max_tokens(task.max_length)
    try:
        export = to_lang(extract(model), longest, name=f"learned_{task.name}")
    except NotExpressible as err:
        if strict:
            raise
        return {"exported": False, "reason": str(err)}, None
    record = check_export(export, model, checks, unscored_tokens(task))
    return record, export.program.describe()
