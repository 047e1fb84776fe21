"""Load a RASP model saved by :mod:`rasplab.rasp_compiler.export` back, without the program:
the module is rebuilt from ``model.safetensors`` and decoded through the slots that
``model.json`` names, so ``load_model(DIR).apply(["BOS", ...]).decoded`` is the fresh
compile's. Loading never unpickles anything; before any weight is used it refuses, in one
:class:`~rasplab.errors.RasplabError` line naming the field: a missing or foreign ``format``,
a digest that does not match spec and weights (an edited field, or another model's weights),
a field of the wrong type, a slot outside the residual stream, a weight that is missing,
unexpected or of the wrong shape or dtype, sizes that the weights contradict, and ``causal``
true on weights whose heads attend to later positions (:mod:`~rasplab.rasp_compiler.lookahead`;
``causal`` false on a causal model's weights cannot be told apart, and runs the same).

>>> import os, tempfile
>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> from rasplab.rasp_compiler.export import save_model
>>> folder = os.path.join(tempfile.mkdtemp(), "hist")
>>> save_model(compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 4), folder)
>>> model = load_model(folder)
>>> model.name, model.apply(["BOS", "a", "b", "a"]).decoded
('hist', ['BOS', 2, 1, 2])
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import torch

from rasplab.compiler.modelspec import check_digest
from rasplab.errors import RasplabError
from rasplab.files import read_model_dir
from rasplab.rasp_compiler.export import FORMAT, SPEC, WEIGHTS
from rasplab.rasp_compiler.lookahead import first_lookahead
from rasplab.rasp_compiler.model import RaspTransformer
from rasplab.rasp_compiler.weights import Head, Layer, Slot, Weights
from rasplab.rasp_compiler.wrapper import RaspModel

DTYPES = {"float32": torch.float32, "float64": torch.float64}
LAYER_WEIGHTS = ("W_Q", "W_K", "W_V", "W_O", "W_in", "W_out")


class SavedRasp(RaspModel):
    """A saved RASP model loaded back: Tracr's interface (``apply``, ``encode``, ``sizes``,
    ``model_config``, ``residual_labels``) plus ``name`` (the program's), ``causal`` and
    ``sops`` (every SOp's label and slot, in the order compiled)."""

    def __init__(self, spec: dict, module: RaspTransformer, parsed: dict) -> None:
        self.name: str = spec["program"]
        self.causal: bool = spec["causal"]
        self.sops: list[tuple[str, Slot]] = parsed["sops"]
        output = self.sops[spec["output"]][1]
        super().__init__(
            module,
            parsed["vocab"],
            parsed["bos"],
            parsed["pad"],
            spec["max_seq_len"],
            spec["residual_labels"],
            output,
        )


def is_saved_rasp(folder: str | Path) -> bool:
    """Whether ``folder/model.json`` reads as a saved RASP model's (its ``format``, or, saved
    before formats, its ``sops``): for ``rasplab run --model`` to pick the loader."""
    try:
        spec = json.loads((Path(folder) / SPEC).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    if not isinstance(spec, dict):
        return False
    if "format" in spec:
        return isinstance(spec["format"], str) and spec["format"].startswith("rasplab-rasp-")
    return "sops" in spec and "residual_labels" in spec


def _refuse(where: str, field: str, message: str) -> RasplabError:
    return RasplabError(f"{where}: model.json field {field!r} {message}")


def _literal(text: Any, where: str, field: str) -> Any:
    """The value whose ``repr`` ``text`` is (a Python literal), else one line naming ``field``."""
    try:
        if not isinstance(text, str):
            raise ValueError(text)
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        shown = json.dumps(text)[:60]
        raise _refuse(where, field, f"holds {shown}, which is not a saved value") from None


def _is_int(v: Any, low: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def check_fields(spec: dict, where: str) -> dict[str, Any]:
    """Each field's type; returns the token values and the SOps' slots, read back."""
    checks = (
        ("program", lambda v: isinstance(v, str), "must be a string"),
        ("vocab", lambda v: isinstance(v, list) and bool(v), "must be a non-empty list"),
        ("bos", lambda v: isinstance(v, str), "must be a saved value"),
        ("pad", lambda v: v is None or isinstance(v, str), "must be null or a saved value"),
        ("max_seq_len", lambda v: _is_int(v, 1), "must be a positive integer"),
        ("causal", lambda v: isinstance(v, bool), "must be true or false"),
        ("sizes", lambda v: isinstance(v, dict), "must be an object"),
        (
            "residual_labels",
            lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
            "must be a list of strings",
        ),
        ("sops", lambda v: isinstance(v, list) and bool(v), "must be a non-empty list"),
    )
    for field, ok, expected in checks:
        if not ok(spec.get(field)):
            raise _refuse(where, field, f"{expected}; got {json.dumps(spec.get(field))[:60]}")
    if not _is_int(spec.get("output"), 0) or spec["output"] >= len(spec["sops"]):
        raise _refuse(where, "output", f"must index one of the {len(spec['sops'])} sops")
    if spec["sizes"].get("dtype") not in DTYPES:
        raise _refuse(where, "sizes", f"must name a dtype ({', '.join(DTYPES)})")
    vocab = [_literal(v, where, "vocab") for v in spec["vocab"]]
    pad = None if spec["pad"] is None else _literal(spec["pad"], where, "pad")
    width = len(spec["residual_labels"])
    sops = [_slot(s, width, where) for s in spec["sops"]]
    return {"vocab": vocab, "bos": _literal(spec["bos"], where, "bos"), "pad": pad, "sops": sops}


def _slot(entry: Any, width: int, where: str) -> tuple[str, Slot]:
    """One ``sops`` entry as ``(label, Slot)``; a slot outside the residual stream is refused."""
    ok = (
        isinstance(entry, dict)
        and isinstance(entry.get("label"), str)
        and _is_int(entry.get("start"), 0)
        and isinstance(entry.get("values"), list)
        and isinstance(entry.get("numerical"), bool)
    )
    if not ok:
        shown = json.dumps(entry)[:60]
        raise _refuse(where, "sops", f"entries need label, start, values, numerical; got {shown}")
    label = entry["label"]
    values = tuple(_literal(v, where, "sops") for v in entry["values"])
    slot = Slot(entry["start"], values, entry["numerical"])
    if slot.numerical and not all(isinstance(v, (int, float)) for v in values):
        raise _refuse(where, "sops", f"numerical SOp {label!r} has a value that is not a number")
    if slot.start + slot.width > width:
        raise _refuse(
            where,
            "sops",
            f"puts {label!r} at dims {slot.start}..{slot.start + slot.width - 1}, beyond the "
            f"residual width {width} (residual_labels)",
        )
    return label, slot


def check_weights(spec: dict, tensors: dict, parsed: dict, where: str) -> None:
    """Every weight present, nothing else, each of the shape and dtype the spec implies."""
    layers = spec["sizes"].get("layers")
    if not _is_int(layers, 1):
        raise _refuse(where, "sizes", "must give layers, a positive integer")
    names = ["token_embed", "pos_embed"]
    names += [f"layers.{i}.{w}" for i in range(layers) for w in LAYER_WEIGHTS]
    missing = [n for n in names if n not in tensors]
    if missing:
        raise RasplabError(f"{where}: the weights file lacks {missing[0]} (sizes: {layers} layers)")
    extra = sorted(set(tensors) - set(names))
    if extra:
        raise RasplabError(
            f"{where}: the weights file holds {extra[0]}, which a {layers}-layer model has not"
        )
    d = len(spec["residual_labels"])
    rows = len(parsed["vocab"]) + 1 + (parsed["pad"] is not None)
    expect: dict[str, tuple] = {
        "token_embed": (rows, d),
        "pos_embed": (spec["max_seq_len"] + 1, d),
    }
    for i in range(layers):
        h, _, k = (*tensors[f"layers.{i}.W_Q"].shape, 0, 0, 0)[:3]
        f = tensors[f"layers.{i}.W_in"].shape[-1]
        for w in ("W_Q", "W_K", "W_V"):
            expect[f"layers.{i}.{w}"] = (h, d, k)
        expect[f"layers.{i}.W_O"] = (h, k, d)
        expect[f"layers.{i}.W_in"], expect[f"layers.{i}.W_out"] = (d, f), (f, d)
    dtype = DTYPES[spec["sizes"]["dtype"]]
    for name, shape in expect.items():
        t = tensors[name]
        if tuple(t.shape) != shape:
            raise RasplabError(
                f"{where}: {name} has shape {list(t.shape)}; model.json (vocab, pad, "
                f"max_seq_len, residual_labels) implies {list(shape)}"
            )
        if t.dtype != dtype:
            raise _refuse(
                where, "sizes", f"says dtype {spec['sizes']['dtype']}; {name} is {t.dtype}"
            )
        if not torch.isfinite(t).all():
            raise RasplabError(f"{where}: {name} holds non-finite values")


def build_module(spec: dict, tensors: dict, where: str) -> RaspTransformer:
    """The torch module holding ``tensors`` (shapes checked by :func:`check_weights`)."""
    layers = []
    for i in range(spec["sizes"]["layers"]):
        w = {n: tensors[f"layers.{i}.{n}"].numpy() for n in LAYER_WEIGHTS}
        heads = [
            Head(None, w["W_Q"][h], w["W_K"][h], w["W_V"][h], w["W_O"][h])
            for h in range(w["W_Q"].shape[0])
        ]
        layers.append(Layer(heads, w["W_in"], w["W_out"]))
    labels = spec["residual_labels"]
    tok, pos = tensors["token_embed"].numpy(), tensors["pos_embed"].numpy()
    weights = Weights(labels, {}, tok, pos, layers, {})
    module = RaspTransformer(weights, causal=spec["causal"], dtype=DTYPES[spec["sizes"]["dtype"]])
    for name, value in module.state_dict().items():  # the rebuild copies, never rounds
        if not torch.equal(value, tensors[name]):
            raise RasplabError(f"{where}: {name} changed when the module was rebuilt")
    return module


def load_model(folder: str | Path) -> SavedRasp:
    """The model saved in ``folder`` by :func:`~rasplab.rasp_compiler.export.save_model`."""
    where = repr(str(folder))
    spec, tensors = read_model_dir(folder, SPEC, WEIGHTS)
    if not isinstance(spec, dict):
        raise RasplabError(f"{where}: model.json is not a JSON object")
    if "format" not in spec:
        raise RasplabError(
            f"{where}: model.json has no 'format' field (saved by an older rasplab, or not a "
            "saved RASP model); compile the model again"
        )
    if spec["format"] != FORMAT:
        shown = json.dumps(spec["format"])[:60]
        raise _refuse(where, "format", f"is {shown}, not {FORMAT!r}: not a saved RASP model")
    check_digest(spec, Path(folder) / WEIGHTS, where)
    parsed = check_fields(spec, where)
    check_weights(spec, tensors, parsed, where)
    model = SavedRasp(spec, build_module(spec, tensors, where), parsed)
    saved, rebuilt = spec["sizes"], model.sizes()
    for key in sorted(set(saved) | set(rebuilt)):
        if saved.get(key) != rebuilt.get(key):
            raise _refuse(
                where,
                "sizes",
                f"says {key} {json.dumps(saved.get(key))}; the weights give "
                f"{json.dumps(rebuilt.get(key))}",
            )
    check_causal(spec, model, where)
    return model


def check_causal(spec: dict, model: SavedRasp, where: str) -> None:
    """A model saved as causal must have no head that attends to a later position."""
    if not spec["causal"]:
        return
    found = first_lookahead(model.module, len(model.tokens), model.max_seq_len)
    if found is not None:
        layer, head, ids = found
        shown = " ".join(str(model.bos if i == len(model.tokens) else model.tokens[i]) for i in ids)
        raise _refuse(
            where,
            "causal",
            f"is true, but layer {layer} head {head} attends to a later position on input "
            f"{shown[:60]!r}: the weights are a non-causal compile's; compile the model again",
        )
