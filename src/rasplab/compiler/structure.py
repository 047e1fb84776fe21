"""A saved model's parts checked against each other: variables, heads, MLP shapes, rules.

:mod:`rasplab.compiler.modelspec` checks each ``model.json`` field on its own (type, allowed
values) and the digest; a spec edited by hand and re-digested can still contradict itself or
its weights: ``variables`` that are not the layout's slots (so ``output`` or ``halt`` could
name a variable with no dims), a head group naming a head that does not exist, a head output
of the layout with no ``heads`` entry, ``mlp_shapes`` that do not chain from the residual
width through ``mlp_widths`` and back. :func:`check_structure` finds these on load, each as
one :class:`~rasplab.errors.RasplabError` line naming the field, instead of a model that loads
and then fails deep in a run (or runs wrong).

>>> spec = {"layout": {"width": 3, "slots": [
...     {"name": "h", "kind": "categorical", "head": True, "start": 1, "width": 2, "range": 1}]},
...     "heads": {"h": {"query": "h", "key": "h", "value": "h"}}, "head_groups": [["h", "g"]]}
>>> check_heads(spec, "m")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: m: model.json head_groups names 'g', which is not in heads
"""

from __future__ import annotations

from collections import Counter

import torch

from rasplab.compiler.layout import Layout
from rasplab.errors import RasplabError


def check_variables(spec: dict, where: str) -> None:
    """``variables`` names exactly the layout's slots, in slot order, each with its slot's kind.

    >>> spec = {"layout": {"width": 2, "slots": [
    ...     {"name": "a", "kind": "numerical", "head": False, "start": 1, "width": 1}]},
    ...     "variables": {"a": "categorical"}}
    >>> check_variables(spec, "m")
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: m: model.json variables gives 'a' kind 'categorical'; its layout slot is numerical
    """
    slots, variables = Layout.from_json(spec["layout"]).slots, spec["variables"]
    names = [s.name for s in slots]
    for name in names:
        if name not in variables:
            raise RasplabError(f"{where}: model.json variables lacks {name!r}, a layout slot")
    for name in variables:
        if name not in names:
            raise RasplabError(
                f"{where}: model.json variables names {name!r}, which is not a layout slot"
            )
    if list(variables) != names:
        raise RasplabError(f"{where}: model.json variables are not in the layout's slot order")
    for s in slots:
        if variables[s.name] != s.kind:
            raise RasplabError(
                f"{where}: model.json variables gives {s.name!r} kind {variables[s.name]!r}; "
                f"its layout slot is {s.kind}"
            )


def check_heads(spec: dict, where: str) -> None:
    """``heads`` are exactly the layout's head outputs, each reading known variables, and
    ``head_groups`` lists every one of them once, in non-empty groups."""
    layout = Layout.from_json(spec["layout"])
    names, heads = layout.names(), spec["heads"]
    outputs = [s.name for s in layout.slots if s.head]
    for name in outputs:
        if name not in heads:
            raise RasplabError(
                f"{where}: model.json heads lacks {name!r}, a head output of the layout"
            )
    for name, head in heads.items():
        if name not in outputs:
            raise RasplabError(
                f"{where}: model.json heads entry {name!r} is not a head output of the layout"
            )
        for role in ("query", "key", "value"):
            if head[role] not in names:
                raise RasplabError(
                    f"{where}: model.json heads entry {name!r} has {role} {head[role]!r}, "
                    "which is not a variable of the layout"
                )
    grouped = Counter(n for group in spec["head_groups"] for n in group)
    for i, group in enumerate(spec["head_groups"]):
        if not group:
            raise RasplabError(f"{where}: model.json head_groups entry {i} is empty")
        for name in group:
            if name not in heads:
                raise RasplabError(
                    f"{where}: model.json head_groups names {name!r}, which is not in heads"
                )
            if grouped[name] > 1:
                raise RasplabError(f"{where}: model.json head_groups lists {name!r} twice")
    for name in heads:
        if name not in grouped:
            raise RasplabError(f"{where}: model.json head_groups leaves out head {name!r}")


def check_mlp(spec: dict, tensors: dict[str, torch.Tensor], where: str) -> None:
    """``mlp_widths`` match the biases, and ``mlp_shapes`` chain residual -> E1 -> E2 -> E3
    -> residual (``[rows, columns]`` = ``[E1, D]``, ``[E2, E1]``, ``[E3, E2]``, ``[D, E3]``)."""
    widths, d = spec["mlp_widths"], spec["layout"]["width"]
    biases = [list(tensors[f"mlp_b{k}"].shape) for k in range(1, 4)]
    if biases != [[w] for w in widths]:
        raise RasplabError(
            f"{where}: model.json mlp_widths {widths} do not match the biases mlp_b1..3 "
            f"(shapes {biases})"
        )
    e1, e2, e3 = widths
    for k, expected in enumerate(([e1, d], [e2, e1], [e3, e2], [d, e3]), start=1):
        got = spec["mlp_shapes"][k - 1]
        if list(got) != expected:
            raise RasplabError(
                f"{where}: model.json mlp_shapes entry {k} is {list(got)}; the residual width "
                f"{d} and mlp_widths {widths} make it {expected}"
            )


def check_rules_and_heads(spec: dict, tensors: dict[str, torch.Tensor], where: str) -> None:
    """``rule_units`` and ``rule_writes`` have one in-range entry per rule; the attention
    weights agree on the key and value widths; one head offset entry per compiled head."""
    rules, slots = spec["rules"], len(spec["layout"]["slots"])
    for name, bound in (("rule_units", spec["mlp_widths"][2]), ("rule_writes", slots)):
        t = tensors[name]
        if t.dtype != torch.int64 or tuple(t.shape) != (rules,):
            raise RasplabError(
                f"{where}: {name} must be {rules} int64 entries (model.json rules), "
                f"got {t.dtype} of shape {list(t.shape)}"
            )
        if t.numel() and (t.min() < 0 or t.max() >= bound):
            raise RasplabError(f"{where}: {name} entries fall outside 0..{bound - 1}")
    q, k, v, o = (tensors[n] for n in ("W_Q", "W_K", "W_V", "W_O"))
    if any(t.ndim != 3 for t in (q, k, v, o)):
        raise RasplabError(f"{where}: W_Q, W_K, W_V and W_O must each have three dimensions")
    if k.shape != q.shape:
        raise RasplabError(f"{where}: W_K has shape {list(k.shape)}, W_Q {list(q.shape)}")
    expected = [v.shape[0], v.shape[2], spec["layout"]["width"]]
    if list(o.shape) != expected:
        raise RasplabError(f"{where}: W_O has shape {list(o.shape)}, expected {expected}")


def check_structure(spec: dict, tensors: dict[str, torch.Tensor], where: str) -> None:
    """All of the above; the spec's field types and the tensors' presence already checked."""
    check_variables(spec, where)
    check_heads(spec, where)
    check_mlp(spec, tensors, where)
    check_rules_and_heads(spec, tensors, where)
