"""A saved C-RASP model's ``model.json`` checked against itself and its weights on load.

The digest binds ``model.json`` to ``model.safetensors``, but a spec edited by hand and
re-digested still passes it. The model runs the heads ``head_offsets`` lists, so a head (or a
layer) dropped from it would leave its weights unused and the model answering wrongly without
a word; a ``decode`` entry added or removed would fail only deep in a run. :func:`check_saved`
refuses such a folder with one :class:`~rasplab.errors.RasplabError` line naming the field:
the fields' types, the weights present (exactly those of the listed layers and heads), their
shapes against ``width``, ``decode`` and ``symbols``, and the counts ``layers`` and ``heads``.

>>> check_saved({"program": "p", "alphabet": ["a"], "symbols": ["<bos>", "a"], "max_length": 0},
...             {}, "m")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: m: model.json field 'max_length' must be a positive integer; got 0
"""

from __future__ import annotations

import json

import torch

from rasplab.errors import RasplabError

DTYPES = ("float32", "float64")


def _int(v, low: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def _strs(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


FIELDS = {
    "program": (lambda v: isinstance(v, str), "a string"),
    "alphabet": (_strs, "a list of strings"),
    "symbols": (lambda v: _strs(v) and len(set(v)) == len(v) > 0, "a list of distinct strings"),
    "max_length": (lambda v: _int(v, 1), "a positive integer"),
    "dtype": (lambda v: v in DTYPES, " or ".join(DTYPES)),
    "width": (lambda v: _int(v, 1), "a positive integer"),
    "layers": (lambda v: _int(v, 0), "a non-negative integer"),
    "heads": (lambda v: _int(v, 0), "a non-negative integer"),
    "head_offsets": (
        lambda v: (
            isinstance(v, list)
            and all(
                isinstance(x, list) and all(o is None or _int(o, -(2**31)) for o in x) for x in v
            )
        ),
        "a list (per layer) of lists of null or integer offsets",
    ),
    "coords": (_strs, "a list of strings"),
    "decode": (
        lambda v: isinstance(v, dict) and all(isinstance(x, bool) for x in v.values()),
        "an object of operation names to true (a count) or false",
    ),
}


def _fields(spec: dict, where: str) -> None:
    for key, (ok, expected) in FIELDS.items():
        value = spec.get(key)
        if not ok(value):
            shown = repr(value) if isinstance(value, str) else json.dumps(value)[:60]
            raise RasplabError(f"{where}: model.json field {key!r} must be {expected}; got {shown}")
    offsets = spec["head_offsets"]
    counts = (("layers", len(offsets)), ("heads", sum(len(x) for x in offsets)))
    for key, count in counts:
        if spec[key] != count:
            raise RasplabError(
                f"{where}: model.json {key} is {spec[key]}, but head_offsets lists {count}"
            )
    if len(spec["coords"]) != spec["width"]:
        raise RasplabError(
            f"{where}: model.json coords names {len(spec['coords'])} coordinates, "
            f"but width is {spec['width']}"
        )


def expected_shapes(spec: dict, tensors: dict[str, torch.Tensor]) -> dict[str, list]:
    """Every weight the spec calls for, with its shape (``None``: a size read off the weights
    themselves, checked for agreement between them)."""
    w = spec["width"]
    out: dict[str, list] = {
        "tok_emb": [w, len(spec["symbols"]) + 1],  # last column: padding
        "pos_coords": [None, 3],
        "decode_matrix": [len(spec["decode"]), w],
    }
    for li, offsets in enumerate(spec["head_offsets"]):
        for hi in range(len(offsets)):
            p = f"l{li}_h{hi}_"
            dv = tensors[p + "W_V"].shape[0] if p + "W_V" in tensors else None
            dk = tensors[p + "W_Q"].shape[0] if p + "W_Q" in tensors else None
            out |= {p + "W_V": [dv, w], p + "W_O": [dv], p + "W_Q": [dk, w], p + "W_K": [dk, w]}
        p = f"l{li}_mlp_"
        units = tensors[p + "b_1"].shape[0] if p + "b_1" in tensors else None
        out |= {p + "W_1": [units, w], p + "b_1": [units], p + "W_2": [w, units]}
    return out


def check_saved(spec: dict, tensors: dict[str, torch.Tensor], where: str) -> None:
    """The spec's fields, then the weights: exactly those it calls for, in its dtype, each of
    the expected shape, and the integer tables (``W_O``, ``pos_coords``) within range."""
    _fields(spec, where)
    shapes = expected_shapes(spec, tensors)
    extra = sorted(set(tensors) - set(shapes))
    if extra:
        raise RasplabError(
            f"{where}: the weights hold {', '.join(extra)}, which model.json's head_offsets "
            "(its layers and heads) does not call for"
        )
    missing = sorted(set(shapes) - set(tensors))
    if missing:
        raise RasplabError(f"{where}: the weights lack {', '.join(missing)}")
    for name, shape in shapes.items():
        got = list(tensors[name].shape)
        if len(got) != len(shape) or any(e is not None and g != e for g, e in zip(got, shape)):
            shown = [e if e is not None else "*" for e in shape]
            raise RasplabError(f"{where}: {name} has shape {got}, expected {shown}")
        t = tensors[name]
        if (
            name != "pos_coords"
            and t.is_floating_point()
            and str(t.dtype) != f"torch.{spec['dtype']}"
        ):
            raise RasplabError(
                f"{where}: {name} is {str(t.dtype).replace('torch.', '')}, but model.json "
                f"dtype is {spec['dtype']}"
            )
    _check_tables(spec, tensors, where)


def _check_tables(spec: dict, tensors: dict[str, torch.Tensor], where: str) -> None:
    w = spec["width"]
    for name, t in tensors.items():
        if name.endswith("_W_O") and (
            t.dtype != torch.int64 or (t.numel() and (t.min() < 0 or t.max() >= w))
        ):
            raise RasplabError(f"{where}: {name} must hold int64 coordinates in 0..{w - 1}")
    pos = tensors["pos_coords"]
    if (pos.numel() and pos.dtype != torch.int64) or (
        pos.numel()
        and (
            (pos[:, 0] < 0).any()
            or (pos[:, 0] >= w).any()
            or (pos[:, 1] < 1).any()
            or (pos[:, 2] < 0).any()
            or (pos[:, 2] >= pos[:, 1]).any()
        )
    ):
        raise RasplabError(
            f"{where}: pos_coords must hold int64 rows (coordinate < {w}, modulus >= 1, "
            "0 <= residue < modulus)"
        )
