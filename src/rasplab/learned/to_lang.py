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
* **Categorical heads** copy the value at the *leftmost* matching position, or at position
  0 when none matches; the language's categorical attention is defined only when exactly
  one position is selected. A head exports when, for every query value that can occur, the
  key values its predicate accepts (among those that can occur) have a leftmost match that
  is either always position 0, or a key value that occurs at most once per input:

  - key ``positions`` (inputs of at most CAP + 1 tokens, where positions are distinct):
    the leftmost match is the smallest accepted position, present exactly when the input
    is long enough, so the query becomes that one position;
  - key ``tokens``: ``<bos>`` only at position 0 (leftmost of everything), ``<eos>`` at
    most once; any other accepted token can occur several times, and the export refuses;
  - any other key: only a predicate that accepts nothing (the head always reads position 0).

  The head becomes three: one reads the value at the target (defined when the target is
  present), one averages the start indicator over position 0 and the target (1 when the
  target is absent, 1/2 when present), one reads the value at position 0; the MLP picks.
* **MLPs and the readout** become one rule per pair of input values that can occur.

One learned layer takes three language layers, told apart by a ``phase`` counter: *prepare*
(the MLP writes the query sets and keys the layer's heads need), *attend* (heads run; the
MLP copies their results into ordinary variables), *mlp* (the learned MLPs); a last layer
applies the readout. Every learned variable is written once, in its phase.

>>> import torch
>>> from rasplab.learned.model import DiscreteTransformer, Shape
>>> from rasplab.learned.decompile import extract
>>> net = DiscreteTransformer(Shape(vocab=("<pad>", "<bos>", "a", "b"), classes=("1", "2"),
...     width=4, layers=1, cat_heads=0, count_heads=1, mlps=0))
>>> with torch.no_grad():
...     net.readout.first[0, 0, 2] = 1.0   # the readout reads the count
>>> export = to_lang(extract(net), position_range=None)
>>> export.program.max_layers, export.mapped
(4, {'count_0_0': 'count'})
>>> ids = [1, 2, 3, 2]   # <bos> a b a
>>> model = net(torch.tensor([ids]), torch.ones(1, 4, dtype=torch.bool), hard=True)
>>> interpret(export.program, [ids]).outputs[0] == model.argmax(-1)[0, 0].tolist()
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
from rasplab.learned.decompile import Component, Extracted, needed, value_names


class NotExpressible(RasplabError):
    """A learned component has no exact counterpart in :mod:`rasplab.lang`."""


@dataclass(frozen=True)
class LangExport:
    """The program, how each learned head was mapped (``count``, ``first``: always the
    value at position 0, ``unique``: the value at one key position), the longest input it
    accepts (None: any), and the token / class names of its ids."""

    program: Program
    mapped: dict[str, str]
    position_range: int | None
    vocab: tuple[str, ...]
    classes: tuple[str, ...]


def _layer(comp: Component) -> int:
    return int(comp.name.split("_")[1])


def _targets(comp: Component, ex: Extracted, occurs: list[dict]) -> dict[int, int | None]:
    """Per query value that can occur: the key value of its leftmost match when that is a
    key occurring at most once per input, or None when the match is always position 0."""
    q, k, _ = comp.reads
    key = ex.names[k]
    bos, eos = (ex.vocab.index(t) if t in ex.vocab else -1 for t in ("<bos>", "<eos>"))
    out = {}
    for qv, qname in occurs[q].items():
        accepted = [kv for kv in occurs[k] if comp.predicate[qv][kv]]
        if not accepted or (key == "tokens" and bos in accepted):
            out[qv] = None
        elif key == "positions":
            out[qv] = min(accepted) or None
        elif key == "tokens" and accepted == [eos]:
            out[qv] = eos
        else:
            shown = [occurs[k][kv] for kv in accepted]
            why = (
                "key tokens that can occur at several positions"
                if key == "tokens"
                else f"values of {key!r}, which can occur at several positions"
            )
            raise NotExpressible(
                f"{comp.name} cannot be expressed in rasplab.lang: query {qname!r} accepts {why} "
                f"({', '.join(map(repr, shown))}); the learned head copies the leftmost match, "
                "and the language's categorical attention is undefined when several positions match"
            )
    return out


class _Builder:
    """Collects variables, heads and rules while the components are translated."""

    def __init__(self, ex: Extracted, layers: int):
        c = ex.width
        self.ex, self.c, self.occurs = ex, c, value_names(ex)
        self.fracs = tuple(sorted(1 / (k + 1) for k in range(c)))
        self.variables = {
            "tokens": input_var(c),
            "positions": position_var(c, lambda i: min(i, c - 1)),
            "start": position_var(2, lambda i: int(i == 0)),
            "start_num": numeric_var(values=(0.0, 1.0), position_init_fn=lambda i: float(i == 0)),
            "one": var(2, default=1),
            "phase": var(3 * layers + 1),
            "output": var(len(ex.classes)),
        }
        self.heads: dict = {}
        self.rules = [Rule((), "phase", p, p + 1) for p in range(3 * layers)]

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
                3 * layer, {"start": 0, **reads}, f"{h}_key", kv if comp.members[vv] else c + 1
            )
        for qv, s in sets.items():
            self.rule(3 * layer, {q: qv}, f"{h}_query", s)
        self.heads[f"{h}_mean"] = qkv(
            f"{h}_query", f"{h}_key", "start_num", output=numeric_var(values=self.fracs)
        )
        for n in range(c):
            self.rule(3 * layer + 1, {f"{h}_mean": 1 / (n + 1)}, h, n)

    def select(self, comp: Component, layer: int, position_keys: list) -> str:
        q, k, v = (self.ex.names[r] for r in comp.reads)
        h, c = comp.name, self.c
        targets = _targets(comp, self.ex, self.occurs)
        at_start = self.first(v)
        values = list(self.occurs[comp.reads[2]])
        if all(t is None for t in targets.values()):
            for val in values:
                self.rule(3 * layer + 1, {at_start: val}, h, val)
            return "first"
        if k == "positions":
            position_keys.append(h)
        self.variables[f"{h}_key"] = var(c + 1, default=c)
        sel = {qv: frozenset() if t is None else frozenset({t}) for qv, t in targets.items()}
        has = {qv: s | {c} for qv, s in sel.items()}
        self.variables[f"{h}_query"] = set_var(c + 1, values=(frozenset(), *set(sel.values())))
        self.variables[f"{h}_has"] = set_var(c + 1, values=(frozenset(), *set(has.values())))
        for kv in self.occurs[comp.reads[1]]:
            self.rule(3 * layer, {"start": 0, k: kv}, f"{h}_key", kv)
        for qv in targets:
            self.rule(3 * layer, {q: qv}, f"{h}_query", sel[qv])
            self.rule(3 * layer, {q: qv}, f"{h}_has", has[qv])
        self.heads[f"{h}_at"] = qkv(f"{h}_query", f"{h}_key", v)
        self.heads[f"{h}_absent"] = qkv(
            f"{h}_has", f"{h}_key", "start_num", output=numeric_var(values=(0.5, 1.0))
        )
        for val in values:
            self.rule(3 * layer + 1, {f"{h}_absent": 1.0, at_start: val}, h, val)
            self.rule(3 * layer + 1, {f"{h}_absent": 0.5, f"{h}_at": val}, h, val)
        return "unique"


def to_lang(ex: Extracted, position_range: int | None, name: str = "learned") -> LangExport:
    """The :mod:`rasplab.lang` program of an extracted model (only the components the
    readout depends on), or :class:`NotExpressible` naming the first component that has no
    exact counterpart. ``position_range`` bounds the inputs accepted; a categorical head
    keyed by positions needs inputs of at most CAP + 1 tokens and lowers it to that."""
    keep = needed(ex)
    layers = 1 + max((_layer(comp) for comp in keep), default=-1)
    b = _Builder(ex, layers)
    mapped, position_keys = {}, []
    for comp in keep:
        layer = _layer(comp)
        b.variables[comp.name] = var(ex.width)
        if comp.kind == "count":
            b.count(comp, layer)
            mapped[comp.name] = "count"
        elif comp.kind == "select":
            mapped[comp.name] = b.select(comp, layer, position_keys)
        else:
            b.lookup(comp, 3 * layer + 2, comp.name)
    b.lookup(ex.readout, 3 * layers, "output")
    if position_keys:
        position_range = min(position_range or ex.width, ex.width)
    prog = program(
        b.variables,
        b.heads,
        b.rules,
        output="output",
        input_range=len(ex.vocab),
        position_range=position_range,
        max_layers=3 * layers + 1,
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
    from rasplab.compiler.verify import verify as verify_compiled
    from rasplab.learned.verify import ProgramMismatch, verify

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
    """Export ``model`` (one seed, trained on ``task``) and check it (:func:`check_export`):
    ``(record, listing)``. For a model outside the exportable class, ``strict`` raises
    :class:`NotExpressible`; otherwise the record says ``exported: False`` with the reason
    and there is no listing."""
    from rasplab.learned.decompile import extract, unscored_tokens

    try:
        export = to_lang(extract(model), None, name=f"learned_{task.name}")
    except NotExpressible as err:
        if strict:
            raise
        return {"exported": False, "reason": str(err)}, None
    record = check_export(export, model, checks, unscored_tokens(task))
    return record, export.program.describe()
