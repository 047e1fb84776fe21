"""The explorer's data for a trained run on one input: attention, predictions, bins, curve.

The run folder is loaded with :func:`rasplab.harness.setup.load_run` (config, task, encoder,
trained weights). The input is a natural input for tasks that build an example from one
(``task.example``: SCAN commands, languages, RASP tasks) or, for any task, an example drawn
at a given length with a seed. The model runs once; each layer's attention weights are read
by calling its attention kind's reference implementation on the same queries and keys with
the identity as values (every kind's output is linear in the values, so the output *is*
the weight matrix). Predictions and targets are per position (scored positions only have a
target); bins and the training curve come from the run's ``result.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from rasplab.errors import RasplabError
from rasplab.explore.program_view import ATTENTION_FLOOR, _Interner
from rasplab.harness.setup import load_run
from rasplab.models.hook_points import attention_pattern
from rasplab.seeding import generator


def _example(task, text: str | None, length: int | None, seed: int):
    """The example to show: from ``text`` (tasks with ``example``) or drawn at ``length``."""
    if (text is None) == (length is None):
        raise RasplabError("give exactly one of --input TEXT and --length N for a run")
    if length is not None:
        if not task.has_length(length):
            raise RasplabError(f"task {task.name!r} has no examples of length {length}")
        return task.sample(generator(seed, "explore", task.name, length), length)
    build = getattr(task, "example", None)
    if build is None:
        raise RasplabError(
            f"task {task.name!r} builds no example from a natural input; "
            "use --length N (and --seed S) to draw one"
        )
    try:
        return build(text) if task.name.startswith("scan") else build(text.split())
    except RasplabError:
        raise
    except (ValueError, KeyError, TypeError) as err:
        raise RasplabError(f"input {text!r} is not an input of task {task.name!r}: {err}") from err


def attention_maps(model, batch) -> list[torch.Tensor]:
    """Per layer (in the order run), the attention weights ``[H, T, T]`` of sequence 0."""
    maps: list[torch.Tensor] = []
    kinds = {id(b.attn.kind): b.attn.kind for b in model.blocks}

    def hook(module, args, output):
        x, q, k, v, ctx = args
        maps.append(attention_pattern(module, x, q, k, ctx)[0].detach())

    handles = [kind.register_forward_hook(hook) for kind in kinds.values()]
    try:
        with torch.no_grad():
            outputs = model(batch.input_ids, batch.pad_mask, batch.offsets)
    finally:
        for h in handles:
            h.remove()
    return maps, outputs


def run_view(
    run_dir: str | Path, text: str | None = None, length: int | None = None, seed: int = 0
) -> dict:
    """Page data for the trained run in ``run_dir`` (see the module docstring)."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RasplabError(f"run directory {str(path)!r} does not exist")
    config, setup = load_run(path)
    task, encoder, model = setup.task, setup.encoder, setup.model
    example = _example(task, text, length, seed)
    batch = encoder.encode([example])
    maps, outputs = attention_maps(model, batch)
    if encoder.kind == "regression":
        predictions = [f"{float(y):.3g}" for y in outputs[0, :, 0]]
    else:
        predictions = [_label(encoder.classes[int(i)]) for i in outputs[0].argmax(-1)]
    targets = [None if y is None else _label(y) for y in example.targets]
    if encoder.kind == "regression":
        targets = [None if y is None else f"{float(y):.3g}" for y in example.targets]
    rows = _Interner()
    t = len(example.tokens)
    layers = []
    for m in maps:
        heads = []
        for h in range(m.shape[0]):
            heads.append(
                [
                    rows(
                        " ".join(
                            f"{j}:{float(m[h, i, j]):.3g}"
                            for j in torch.nonzero(m[h, i, :t].abs() >= ATTENTION_FLOOR)
                            .flatten()
                            .tolist()
                        )
                    )
                    for i in range(t)
                ]
            )
        layers.append({"heads": heads})
    result = _result(path)
    bins = [
        {"bin": b, "accuracy": a} for b, a in (result.get("bins") or {}).items() if a is not None
    ]
    curve = [
        {"step": c["step"], "loss": c["loss"]}
        for c in result.get("curves") or []
        if c.get("loss") is not None
    ]
    scored = [p for p, y in enumerate(targets) if y is not None]
    right = sum(predictions[p] == targets[p] for p in scored)
    return {
        "kind": "run",
        "title": run_title(path.name, config.task, config.variant),
        "tokens": [str(x) for x in example.tokens],
        "targets": targets,
        "predictions": predictions,
        "layers": layers,
        "attention_rows": rows.items,
        "bins": bins,
        "curve": curve,
        "summary": {
            "run": path.name,
            "task": config.task,
            "variant": config.variant,
            "layers": len(layers),
            "right": right,
            "scored": len(scored),
        },
    }


def run_title(name: str, task: str, variant: str) -> str:
    """The page title: the run, then its task and variant unless the run's name says them.

    >>> run_title("tomita1", "tomita1", "rope")
    'run tomita1, variant rope'
    >>> run_title("tomita1-rope-s0", "tomita1", "rope")
    'run tomita1-rope-s0'
    """
    parts = [f"run {name}"]
    for what, value in (("task", task), ("variant", variant)):
        if value and value not in name:
            parts.append(f"{what} {value}")
    return ", ".join(parts)


def _label(value) -> str:
    """A class as the page shows it (a next-symbol set as ``{a,b}``)."""
    if isinstance(value, (tuple, frozenset, set)):
        return "{" + ",".join(map(str, sorted(value, key=str))) + "}"
    return str(value)


def _result(path: Path) -> dict:
    """The run's ``result.json`` (empty when the run wrote none)."""
    try:
        return json.loads((path / "result.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
