"""The saved model's spec (``model.json``): field types checked on load, and a digest that
binds it to its weights.

:func:`check_spec_types` checks every field a loaded model relies on (type and allowed
values), so a hand-edited ``model.json`` is one :class:`~rasplab.errors.RasplabError` line,
never a ``KeyError`` deep in the model. :func:`spec_digest` is a SHA-256 of the spec (without
its own ``digest`` field) and of the weights file; :func:`save_compiled` writes it into the
spec, and :func:`load_compiled` refuses a pair whose digest does not match: a tampered
``model.json`` or weights from another model. A ``model.json`` without a digest (saved before
digests existed, or with it deleted) is refused too: the type checks alone cannot tell a
hand-edited value of the right type (``halt: null`` on a halting program) from the real one,
and compiling again (seconds) gives the digest.

>>> check_spec_types({"causal": "yes"}, "m", keys=("causal",))
Traceback (most recent call last):
...
rasplab.errors.RasplabError: m: model.json field 'causal' must be true or false; got 'yes'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from rasplab.errors import RasplabError

DTYPES = ("float32", "float64")


def _int(v, low: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_ROLES = ("query", "key", "value")


def _str_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "name": (lambda v: isinstance(v, str), "a string"),
    "layout": (
        lambda v: (
            isinstance(v, dict) and _int(v.get("width"), 1) and isinstance(v.get("slots"), list)
        ),
        "an object with width and slots",
    ),
    "variables": (
        lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        "an object of variable kinds",
    ),
    "head_offsets": (
        lambda v: (
            isinstance(v, list)
            and all(
                x is None or (isinstance(x, list) and all(_int(o, -(2**31)) for o in x)) for x in v
            )
        ),
        "a list of null or integer lists",
    ),
    "heads": (
        lambda v: (
            isinstance(v, dict)
            and all(
                isinstance(h, dict) and all(isinstance(h.get(r), str) for r in _ROLES)
                for h in v.values()
            )
        ),
        "an object of heads, each with query, key and value variable names",
    ),
    "head_groups": (
        lambda v: isinstance(v, list) and all(_str_list(g) for g in v),
        "a list of lists of head names",
    ),
    "causal": (lambda v: isinstance(v, bool), "true or false"),
    "halt": (
        lambda v: v is None or (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)),
        'null or ["variable", value]',
    ),
    "output": (lambda v: isinstance(v, str), "a variable name"),
    "input_range": (lambda v: _int(v, 1), "a positive integer"),
    "max_layers": (lambda v: _int(v, 1), "a positive integer"),
    "max_length": (lambda v: v is None or _int(v, 1), "null or a positive integer"),
    "exact_dtypes": (
        lambda v: _str_list(v) and bool(v) and set(v) <= set(DTYPES),
        f"a non-empty list of {', '.join(DTYPES)}",
    ),
    "notes": (_str_list, "a list of strings"),
    "rules": (lambda v: _int(v), "a non-negative integer"),
    "mlp_shapes": (
        lambda v: (
            isinstance(v, list)
            and len(v) == 4
            and all(isinstance(s, list) and len(s) == 2 and all(_int(n, 1) for n in s) for s in v)
        ),
        "four [rows, columns] pairs of positive integers",
    ),
    "mlp_widths": (
        lambda v: isinstance(v, list) and len(v) == 3 and all(_int(n, 1) for n in v),
        "three positive integers",
    ),
    "constants": (
        lambda v: (
            isinstance(v, dict)
            and _number(v.get("match"))
            and _number(v.get("numeric_scale"))
            and isinstance(v.get("unit_roundoff"), dict)
            and all(_number(v["unit_roundoff"].get(d)) for d in DTYPES)
        ),
        "an object with match, numeric_scale and unit_roundoff",
    ),
}


def check_spec_types(spec: dict, where: str, keys: Iterable[str] | None = None) -> None:
    """Every field of ``spec`` (or just ``keys``) has its type and allowed values, and the
    output and halting variables exist; else one RasplabError naming the field."""
    for key in CHECKS if keys is None else keys:
        ok, expected = CHECKS[key]
        value = spec.get(key)
        if not ok(value):
            shown = json.dumps(value)[:60]
            shown = repr(value) if isinstance(value, str) else shown
            raise RasplabError(f"{where}: model.json field {key!r} must be {expected}; got {shown}")
    if keys is not None:
        return
    for role, name in (("output", spec["output"]), ("halt", (spec["halt"] or [None])[0])):
        if name is not None and name not in spec["variables"]:
            raise RasplabError(f"{where}: model.json {role} variable {name!r} is not a variable")
    if len(spec["head_groups"]) != len(spec["head_offsets"]):
        raise RasplabError(f"{where}: model.json head_groups and head_offsets differ in length")


def spec_digest(spec: dict, weights: str | Path) -> str:
    """SHA-256 over the spec (canonical JSON, its ``digest`` left out) and the weights file."""
    h = hashlib.sha256()
    body = {k: v for k, v in spec.items() if k != "digest"}
    h.update(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    with open(weights, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_digest(spec: dict, weights: str | Path, where: str) -> None:
    """Refuse a spec whose digest does not match (edited, or paired with other weights)."""
    if "digest" not in spec:
        raise RasplabError(
            f"{where}: model.json has no digest (saved by an older rasplab, or edited), so "
            "its fields cannot be trusted; compile the model again"
        )
    if spec["digest"] != spec_digest(spec, weights):
        raise RasplabError(
            f"{where}: model.json and model.safetensors do not belong together (digest "
            "mismatch: one was edited or replaced); compile the model again"
        )
