"""A validated transformer program: variables, attention heads, MLP rules, output, halting.

Execution model (ALTA's, Shaw et al. 2024; guide: ``docs/language.md``): one shared layer applied repeatedly;
each layer runs every head on the residual stream, then the MLP rules at every position;
head outputs are undefined again after every MLP. A run stops after a layer in which every
position of the sequence has ``halt.var == halt.value``, or after exactly ``max_layers``
layers (``max_layers=k`` runs at most k layers; without a halt it runs exactly k).

Undefined values (ALTA's rule, seed paper §2.3): a head output is undefined where its head
selects nothing (or, categorical, more than one position). With ``undefined="raise"`` (the
default) a run fails where a rule would fire but for an atom on an undefined variable, i.e.
where the MLP reads an undefined value; the error names the rule, the variable, the layer
and the position. ``undefined="no_match"`` (opt-in) lets an undefined value match no atom,
silently, as the compiled model does; programs that read edges of the sequence (``left`` of
position 0) on purpose use it, and say so.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def mlp(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             mlp, output="out", input_range=2, max_layers=1)
>>> len(p.rules), p.head_outputs["left"].kind
(1, 'categorical')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rasplab.errors import RasplabError
from rasplab.lang.heads import RELATIVE_QK, RELATIVE_QK_VAR, HeadSpec
from rasplab.lang.inputs import InputSpec
from rasplab.lang.rules import (
    MLPBuilder,
    Rule,
    UnusedHeadReadWarning,
    rules_from_function,
    unused_head_reads,
)
from rasplab.lang.variables import Var, numeric_var, var

UNDEFINED_MODES = ("raise", "no_match")
"""``program(undefined=...)``: reading an undefined value fails the run, or matches nothing."""


def undefined_read(rule: Rule, name: str, layer: int, position: int) -> str:
    """The error for ``rule`` reading undefined ``name`` (``layer`` numbered from 1)."""
    return (
        f"rule [{rule}] reads {name!r}, which is undefined at layer {layer}, position {position}; "
        f"guard the read with a variable that says when {name!r} is defined, or build the "
        "program with undefined='no_match'"
    )


@dataclass(frozen=True)
class Halt:
    """Stop once every position has ``var == value``."""

    var: str
    value: int = 1


@dataclass(frozen=True)
class Builder:
    """Wraps an ALTA-style builder callback ``fn(m: MLPBuilder)`` as an MLP form."""

    fn: Callable[[MLPBuilder], None]


def builder(fn: Callable[[MLPBuilder], None]) -> Builder:
    """Mark ``fn(m)`` as an :class:`MLPBuilder` callback (decorator or call)."""
    return Builder(fn)


@dataclass(frozen=True, eq=False)
class Program:
    """A validated program; build it with :func:`program`."""

    variables: dict[str, Var]
    heads: dict[str, HeadSpec]
    head_outputs: dict[str, Var]
    rules: tuple[Rule, ...]
    output: str
    input_range: int
    position_range: int | None = None
    halt: Halt | None = None
    max_layers: int = 100
    causal: bool = False
    name: str = "program"
    token_table: dict[str, tuple] = field(default_factory=dict, repr=False)
    undefined: str = "raise"
    rule_sources: tuple[tuple[str, int], ...] = ()
    """``(MLP function or builder name, rules it produced)`` in rule order; empty for a list
    of Rules or after :meth:`with_rules`."""
    inputs: InputSpec | None = None
    """How the program's valid inputs look (None: every token-id sequence is an input)."""

    @property
    def all_variables(self) -> dict[str, Var]:
        """Ordinary variables then head outputs, in layout order."""
        return {**self.variables, **self.head_outputs}

    def with_rules(self, rules: Sequence[Rule], name: str | None = None) -> Program:
        """The same program with another rule set (e.g. a minimal one)."""
        return Program(
            self.variables,
            self.heads,
            self.head_outputs,
            tuple(rules),
            self.output,
            self.input_range,
            self.position_range,
            self.halt,
            self.max_layers,
            self.causal,
            name or self.name,
            self.token_table,
            self.undefined,
            inputs=self.inputs,
        )

    def describe(self) -> str:
        """A readable listing of variables, heads and rules."""
        kinds = [v.kind for v in self.variables.values()]
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("categorical", "numerical", "set"))
        lines = [
            f"program {self.name}: output {self.output}, {len(self.rules)} rules",
            f"  summary: {len(self.variables)} variables ({counts}), {len(self.heads)} heads, "
            f"{len(self.rules)} update rules + {reset_rule_count(self)} reset rules; "
            + (f"halts on {self.halt.var} == {self.halt.value}" if self.halt else "no halt")
            + f", at most {self.max_layers} layers"
            + (", causal" if self.causal else "")
            + f", undefined={self.undefined}",
        ]
        if self.rule_sources:
            per = ", ".join(f"{name} {n}" for name, n in self.rule_sources)
            lines.append(f"  update rules per MLP function: {per}")
        for name, v in self.all_variables.items():
            detail = f"range {v.range}" if v.range is not None else f"values {v.values}"
            lines.append(f"  var {name}: {v.kind}, {detail}, init {v.init}")
        for name, h in self.heads.items():
            rel = "" if h.relative is None else f", relative {sorted(h.relative)}"
            lines.append(f"  head {name}: query {h.query}, key {h.key}, value {h.value}{rel}")
        lines += [f"  rule {r}" for r in self.rules]
        return "\n".join(lines)


def reset_rule_count(program: Program) -> int:
    """ALTA's head-output reset rules: one per value (or bucket) of every head output; a
    numerical head output without buckets counts as one."""
    return sum(
        v.range if v.kind == "categorical" else len(v.values or (0.0,))
        for v in program.head_outputs.values()
    )


def rule_count(program: Program) -> int:
    """ALTA's rule count: update rules plus reset rules (rasplab's ``Program.rules`` lists
    update rules only; its interpreter resets head outputs implicitly)."""
    return len(program.rules) + reset_rule_count(program)


def _head_output_spec(name: str, head: HeadSpec, value: Var) -> Var:
    if head.output is not None:
        if head.output.kind != value.kind:
            raise RasplabError(
                f"head {name!r}: output spec is {head.output.kind} but its value is {value.kind}"
            )
        return head.output
    if value.kind == "categorical":
        return var(value.range)
    return numeric_var(values=value.values)


def _traced(
    fn: Callable[[Any], None],
    variables: dict[str, Var],
    readable: dict[str, Var],
    heads: dict[str, HeadSpec],
    head_outputs: dict[str, Var],
) -> list[Rule]:
    """``fn``'s rules; an :class:`UnusedHeadReadWarning` if an update reads a head output it
    never uses (it then cannot fire where that head output is undefined)."""
    rules = rules_from_function(fn, variables, readable)
    selection = {n: (h.query, h.key, h.relative, head_outputs[n].kind) for n, h in heads.items()}
    pairs = unused_head_reads(rules, head_outputs, selection=selection)
    if pairs:
        listed = "; ".join(f"{v!r} reads {h!r}" for v, h in pairs)
        warnings.warn(
            f"MLP function {getattr(fn, '__name__', fn)!r}: the update of {listed} but writes "
            "the same value whatever it holds, so the update never fires where the head "
            "output is undefined (undefined='raise' fails there instead). Move the update "
            "out of the branch that reads the head output, or into its own function "
            "(mlp=[f1, f2, ...])",
            UnusedHeadReadWarning,
            stacklevel=5,  # program()'s caller's caller (via _mlp_rules, program)
        )
    return rules


def program(
    variables: Mapping[str, Var],
    heads: Mapping[str, HeadSpec],
    mlp: Sequence[Rule] | Builder | Callable[[Any], None],
    output: str,
    input_range: int,
    position_range: int | None = None,
    halt: Halt | tuple[str, int] | None = None,
    max_layers: int = 100,
    causal: bool = False,
    name: str = "program",
    undefined: str = "raise",
    inputs: InputSpec | None = None,
) -> Program:
    """Validate the parts and build a :class:`Program`; every error names what is wrong.

    * ``variables``: name -> :class:`~rasplab.lang.variables.Var` (``var``, ``input_var``,
      ``position_var``, ``numeric_var``, ``set_var``), the residual stream's ordinary slots;
    * ``heads``: name -> head (``qkv``, ``v_relative``); the name is the head's output
      variable, which rules may read but never write;
    * ``mlp``: the transition rules, as a list of :class:`Rule`, a :func:`builder` callback,
      a Python function ``f(x)`` traced into rules, or a list of such functions (each traced
      alone, their rules concatenated);
    * ``output``: the categorical variable read as the program's output per position;
    * ``input_range``: token ids are ``0 .. input_range-1``;
    * ``position_range``: the longest input accepted (None: any length);
    * ``halt``: ``Halt(var, value)`` or ``(var, value)``: stop once every position holds it;
    * ``max_layers``: layers run without a halt, the limit with one;
    * ``causal``: position i attends only to positions j <= i;
    * ``name``: shown in errors, listings and saved models;
    * ``undefined``: ``"raise"`` (default) or ``"no_match"``, see the module docstring;
    * ``inputs``: an :class:`~rasplab.lang.inputs.InputSpec` saying how valid inputs look (a
      start token, a separator, the tokens allowed per position, or a sampler); ``verify``,
      ``minimal`` and ``explore`` then draw only such inputs.
    """
    variables, heads = dict(variables), dict(heads)
    _check_settings(undefined, input_range, max_layers)
    _check_names(variables, heads)
    head_outputs = {n: _checked_head(n, h, variables, heads) for n, h in heads.items()}
    readable = {**variables, **head_outputs}
    rules, sources = _mlp_rules(mlp, variables, readable, heads, head_outputs)
    _check_rules(rules, variables, readable, head_outputs)
    halt = _check_io(variables, output, input_range, halt, inputs, name)
    table = {
        n: tuple(v.initial(t, 0) for t in range(input_range))
        for n, v in variables.items()
        if v.init == "token"
    }
    return Program(
        variables,
        heads,
        head_outputs,
        tuple(rules),
        output,
        input_range,
        position_range,
        halt,
        max_layers,
        causal,
        name,
        table,
        undefined,
        tuple(sources),
        inputs,
    )


def _check_settings(undefined: str, input_range: int, max_layers: int) -> None:
    """Check the undefined mode, the token range and the layer limit."""
    if undefined not in UNDEFINED_MODES:
        raise RasplabError(
            f"undefined must be one of: {', '.join(UNDEFINED_MODES)}; got {undefined!r}"
        )
    if not isinstance(input_range, int) or input_range < 1:
        raise RasplabError(f"input_range must be a positive int, got {input_range!r}")
    if not isinstance(max_layers, int) or max_layers < 1:
        raise RasplabError(f"max_layers must be a positive int, got {max_layers!r}")


def _check_names(variables: dict[str, Var], heads: dict[str, HeadSpec]) -> None:
    """Check that variable and head names are distinct identifiers; add the relative-position
    query variable to ``variables`` when a head uses it."""
    if any(h.query == RELATIVE_QK for h in heads.values()):
        variables.setdefault(RELATIVE_QK, RELATIVE_QK_VAR)
    for n in list(variables) + list(heads):
        if not isinstance(n, str) or not n.isidentifier():
            raise RasplabError(f"variable and head names must be identifiers, got {n!r}")
    clash = set(variables) & set(heads)
    if clash:
        raise RasplabError(
            f"names used both as a variable and a head output: {', '.join(sorted(clash))}"
        )


def _checked_head(
    hname: str, h: HeadSpec, variables: dict[str, Var], heads: dict[str, HeadSpec]
) -> Var:
    """Check head ``hname``'s query, key and value variables; return its output's spec."""
    for role in ("query", "key", "value"):
        ref = getattr(h, role)
        if ref in heads:
            raise RasplabError(
                f"head {hname!r} reads head output {ref!r} as its {role}; head outputs are "
                "undefined during attention (copy it into a variable in the MLP first)"
            )
        if ref not in variables:
            raise RasplabError(f"head {hname!r}: unknown {role} variable {ref!r}")
    q, k, v = variables[h.query], variables[h.key], variables[h.value]
    if q.kind == "numerical":
        raise RasplabError(
            f"head {hname!r}: query {h.query!r} must be categorical or set, not numerical"
        )
    if k.kind != "categorical":
        raise RasplabError(f"head {hname!r}: key {h.key!r} must be categorical, not {k.kind}")
    if q.range != k.range:
        raise RasplabError(
            f"head {hname!r}: query {h.query!r} has range {q.range} but key {h.key!r} has range {k.range}"
        )
    if v.kind == "set":
        raise RasplabError(
            f"head {hname!r}: set variable {h.value!r} cannot be an attention value; "
            "use a categorical or numerical value"
        )
    return _head_output_spec(hname, h, v)


def _mlp_rules(
    mlp: Sequence[Rule] | Builder | Callable[[Any], None],
    variables: dict[str, Var],
    readable: dict[str, Var],
    heads: dict[str, HeadSpec],
    head_outputs: dict[str, Var],
) -> tuple[list, list[tuple[str, int]]]:
    """The MLP's rules (from a builder, traced functions, or given) and where they came from
    (a (function name, rule count) per builder or function)."""
    sources: list[tuple[str, int]] = []
    if isinstance(mlp, Builder):
        m = MLPBuilder(readable)
        mlp.fn(m)
        sources.append((getattr(mlp.fn, "__name__", "builder"), len(m.rules)))
        return m.rules, sources
    functions = [mlp] if callable(mlp) else list(mlp)
    if not (functions and all(callable(f) and not isinstance(f, Builder) for f in functions)):
        return functions, sources
    rules: list = []
    for f in functions:
        part = _traced(f, variables, readable, heads, head_outputs)
        rules += part
        sources.append((getattr(f, "__name__", "mlp"), len(part)))
    return rules, sources


def _check_rules(
    rules: list, variables: dict[str, Var], readable: dict[str, Var], head_outputs: dict
) -> None:
    """Check that every rule is a :class:`Rule` writing a variable (not a head output) and
    matching only values its variables can hold."""
    for r in rules:
        if not isinstance(r, Rule):
            raise RasplabError(
                f"MLP rules must be Rule objects, got {type(r).__name__}; pass mlp as a list "
                "of Rules, one function f(x) or a list of functions (each traced alone), or "
                "builder(fn)"
            )
        if r.var in head_outputs:
            raise RasplabError(
                f"rule writes head output {r.var!r}; an MLP may not write head outputs ({r})"
            )
        if r.var not in variables:
            raise RasplabError(f"rule writes unknown variable {r.var!r} ({r})")
        for vname, value in r.lhs:
            if vname not in readable:
                raise RasplabError(f"rule reads unknown variable {vname!r} ({r})")
            if value not in readable[vname].possible_values():
                raise RasplabError(
                    f"rule matches {vname} == {value!r}, not a value of that variable ({r})"
                )
        variables[r.var].check_value(r.new, f"rule's new value for {r.var!r}")


def _check_io(
    variables: dict[str, Var],
    output: str,
    input_range: int,
    halt: Halt | tuple[str, int] | None,
    inputs: InputSpec | None,
    name: str,
) -> Halt | None:
    """Check the input spec, the output variable and the halt; return the halt as a
    :class:`Halt` (None without one)."""
    if inputs is not None:
        if not isinstance(inputs, InputSpec):
            raise RasplabError(
                f"inputs must be an InputSpec (rasplab.lang.inputs), got {type(inputs).__name__}"
            )
        inputs.check_range(input_range, f"program {name!r}")
    if output not in variables:
        raise RasplabError(f"output variable {output!r} is not a program variable")
    if variables[output].kind != "categorical":
        raise RasplabError(f"output variable {output!r} must be categorical")
    if halt is None:
        return None
    halt = halt if isinstance(halt, Halt) else Halt(*halt)
    if halt.var not in variables or variables[halt.var].kind != "categorical":
        raise RasplabError(f"halt variable {halt.var!r} must be a categorical program variable")
    variables[halt.var].check_value(halt.value, "halt value")
    return halt
