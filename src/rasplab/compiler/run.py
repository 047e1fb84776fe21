"""Running a compiled model on a batch: padding, halting per sequence, traces.

Same contract as :func:`rasplab.lang.interpreter.interpret`: without a halt spec every
sequence runs ``max_layers`` layers; with one, a sequence stops after the first layer in
which all of its positions hold the halt value (it is then dropped from further work), and
one that has not halted after ``max_layers`` layers is an error. ``fixed_layers=L`` instead
runs exactly L layers for everyone, ignoring the halt spec. Two rules writing one variable
at one position (read off the rule units) fail the sequence, as in the interpreter: the
default ``errors="raise"`` raises, ``errors="mark"`` gives that sequence ``outputs[b] = None``
and its message in ``errors[b]`` and completes the rest; a compiled model never returns the
state such a position decodes to. With ``trace=True`` the decoded
residual after every sub-layer (and the rules fired, read off the rule units) is returned as
one :class:`rasplab.lang.trace.Trace` per sequence, comparable with the interpreter's.

>>> from rasplab.lang import var, input_var, v_relative, program
>>> def step(x):
...     if x["left"] == 1:
...         x["out"] = 1
>>> p = program({"tok": input_var(2), "out": var(2)}, {"left": v_relative("tok", -1)},
...             step, "out", 2, max_layers=1)
>>> from rasplab.compiler import compile_program
>>> run = run_compiled(compile_program(p), [[1, 0, 1, 1], [0, 1]], trace=True)
>>> run.outputs, run.layers, run.traces[1].layers[0].after_attention["left"]
([[0, 1, 0, 1], [0, 0]], [1, 1], [None, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rasplab.compiler.layout import decode_columns
from rasplab.compiler.model import CompiledTransformer, valid_mask
from rasplab.errors import RasplabError
from rasplab.lang.inputs import check_batch
from rasplab.lang.trace import LayerTrace, Trace

MAX_CHUNK_ELEMENTS = 1 << 24
"""Sequences run in chunks holding at most this many activations (residual, MLP hidden units
and attention scores), which bounds the memory of a run."""
MAX_SEQUENCE_ELEMENTS = 1 << 27
"""The most activations one sequence may need in a layer (about 1 GiB in float64); a longer
input is refused before anything is allocated, with the longest length that fits."""


@dataclass
class CompiledRun:
    """Per sequence: output values (``None``: failed), layers completed, (optional) trace, and
    why each sequence failed (``None`` where it did not)."""

    outputs: list[list[int] | None]
    layers: list[int]
    traces: list[Trace] | None = None
    errors: list[str | None] | None = None


def _suffix(b: int, size: int) -> str:
    return f" (sequence {b} of the batch)" if size > 1 else ""


def _check(model: CompiledTransformer, batch: Sequence[Sequence[int]]) -> list[list[int]]:
    """The batch checked (:func:`~rasplab.lang.inputs.check_batch`) against the model's input
    range, maximum length and memory limit."""
    vocab, limit = model.spec["input_range"], model.max_length
    batch = check_batch(batch, vocab)
    for b, seq in enumerate(batch):
        if limit is not None and len(seq) > limit:
            raise RasplabError(
                f"input of length {len(seq)} is longer than the compiled model supports "
                f"({limit} positions){_suffix(b, len(batch))}; recompile with "
                f"max_length >= {len(seq)}"
            )
    longest = max((len(seq) for seq in batch), default=0)
    if _cost(model, longest) > MAX_SEQUENCE_ELEMENTS:
        fits = longest
        while fits > 1 and _cost(model, fits) > MAX_SEQUENCE_ELEMENTS:
            fits = int(fits * 0.9)
        gib = _cost(model, longest) * 8 / 2**30
        raise RasplabError(
            f"an input of {longest} positions needs about {gib:.1f} GiB for one layer of the "
            f"compiled model (limit {MAX_SEQUENCE_ELEMENTS * 8 / 2**30:.0f} GiB); give inputs "
            f"of at most about {fits} positions, or run the interpreter"
        )
    return batch


class _Recorder:
    """Decoded states of the active rows, turned into Traces at the end."""

    def __init__(self, model: CompiledTransformer, batch, kinds: dict[str, str]):
        self.model, self.batch, self.kinds = model, batch, kinds
        self.traces: dict[int, Trace] = {}

    def _columns(self, x: torch.Tensor, ids: list[int], lengths: list[int]) -> list[dict]:
        t = x.shape[1]
        cols = decode_columns(self.model.layout, x.reshape(-1, x.shape[-1]), self.kinds)
        return [{k: v[r * t : r * t + n] for k, v in cols.items()} for r, n in enumerate(lengths)]

    def initial(self, x: torch.Tensor, ids: list[int], lengths: list[int]) -> None:
        """Start one Trace per sequence from the embedded residual."""
        out = self.model.spec["output"]
        for b, vals in zip(ids, self._columns(x, ids, lengths)):
            self.traces[b] = Trace(list(self.batch[b]), self.kinds, vals, [], out)

    def layer(
        self,
        xa: torch.Tensor,
        xm: torch.Tensor,
        h3: torch.Tensor,
        ids: list[int],
        lengths: list[int],
    ) -> None:
        """Record one layer: decoded states after attention and MLP, rules fired per position."""
        rules = self.model.rule_units
        fired = (h3[rules].T > 0.5).cpu().numpy().reshape(xa.shape[0], xa.shape[1], -1)
        after_a = self._columns(xa, ids, lengths)
        after_m = self._columns(xm, ids, lengths)
        for r, (b, n) in enumerate(zip(ids, lengths)):
            f = [np.flatnonzero(fired[r, p]).tolist() for p in range(n)]
            self.traces[b].layers.append(LayerTrace(after_a[r], after_m[r], f))


def _conflicts(model: CompiledTransformer, h3: torch.Tensor, lengths: torch.Tensor, layer: int):
    """``{row: message}``: rows with two fired rule units writing one variable at one real
    position; the message names the first such position and pair, as the interpreter does.
    Only the (few) fired units are looked at: (column, written slot) keys, sorted, repeat
    exactly where two rules write one variable at one position."""
    writes = model.rule_writes
    if not len(writes):
        return {}
    t = h3.shape[1] // len(lengths)
    rule_of_unit = torch.full((h3.shape[0],), -1, dtype=torch.long)
    rule_of_unit[model.rule_units] = torch.arange(len(writes))
    units, cols = torch.nonzero(h3 > 0.5, as_tuple=True)
    rules = rule_of_unit[units]
    real = (rules >= 0) & (cols % t < lengths[cols // t])
    rules, cols = rules[real], cols[real]
    keys, _ = torch.sort(cols * len(model.layout.slots) + writes[rules])
    twice = keys[1:][keys[1:] == keys[:-1]] // len(model.layout.slots)  # clashing columns
    out = {}
    for col in twice.tolist():
        r, pos = divmod(col, t)
        if r in out:  # columns are sorted: the first clash of a row is its first position
            continue
        seen: dict[int, int] = {}
        for rule in torch.nonzero(h3[model.rule_units, col] > 0.5).flatten().tolist():
            slot = int(writes[rule])
            if slot in seen:
                name = model.layout.slots[slot].name
                out[r] = (
                    f"rules conflict on {name!r} at layer {layer}, position {pos}: rules "
                    f"{seen[slot]} and {rule} (indices in the program's rule list)"
                )
                break
            seen[slot] = rule
    return out


def _run_chunk(
    model, batch, ids, limit, fixed, dtype, recorder, outputs, layers, failures, raising
) -> None:
    lengths = torch.tensor([len(batch[b]) for b in ids], dtype=torch.long)
    t = int(lengths.max())
    tokens = torch.zeros((len(ids), t), dtype=torch.long)
    for r, b in enumerate(ids):
        tokens[r, : len(batch[b])] = torch.as_tensor(list(batch[b]), dtype=torch.long)
    x = model.embed(tokens, lengths).to(dtype)
    active = list(ids)
    if recorder is not None:
        recorder.initial(x, active, lengths.tolist())
    halting = model.spec["halt"] is not None and fixed is None
    for layer in range(1, limit + 1):
        xa = model.attend_(x if recorder is None else x.clone())
        x = xa.clone() if recorder is not None else xa
        h3 = model.mlp_(x)
        x.mul_(valid_mask(lengths, x.shape[1]))
        bad = _conflicts(model, h3, lengths, layer)
        if bad and raising:
            r = min(bad, key=lambda k: active[k])
            raise RasplabError(bad[r] + _suffix(active[r], len(batch)))
        ok = torch.tensor([r not in bad for r in range(len(active))])
        for r, b in enumerate(active):
            if r in bad:
                failures[b] = bad[r]
            else:
                layers[b] += 1
        if recorder is not None:
            if bad:  # a failed sequence's trace ends with its last completed layer
                keep_h3 = h3.view(h3.shape[0], len(active), -1)[:, ok].reshape(h3.shape[0], -1)
                kept = [b for b, k in zip(active, ok.tolist()) if k]
                recorder.layer(xa[ok], x[ok], keep_h3, kept, lengths[ok].tolist())
            else:
                recorder.layer(xa, x, h3, active, lengths.tolist())
        done = (
            model.halted(x, lengths) & ok if halting else torch.zeros(len(active), dtype=torch.bool)
        )
        if done.any() or bad:
            out = model.output(x)
            for r in torch.nonzero(done).flatten().tolist():
                outputs[active[r]] = out[r, : int(lengths[r])].tolist()
            keep = ~done & ok
            active = [b for b, k in zip(active, keep.tolist()) if k]
            if not active:
                return
            lengths = lengths[keep]
            x = x[keep][:, : int(lengths.max())].contiguous()
    if halting:
        message = f"program {model.spec['name']!r} did not halt within {limit} layers"
        if raising:
            raise RasplabError(message + _suffix(active[0], len(batch)))
        failures.update((b, message) for b in active)
        return
    out = model.output(x)
    for r, b in enumerate(active):
        outputs[b] = out[r, : int(lengths[r])].tolist()


def _cost(model: CompiledTransformer, length: int) -> int:
    """Activations held per sequence of ``length`` positions during one layer."""
    t = max(length, 1)
    width = model.layout.width + sum(model.spec["mlp_widths"])
    return t * width + 3 * len(model.spec["head_offsets"]) * t * (t + 1)


@torch.no_grad()
def run_compiled(
    model: CompiledTransformer,
    batch: Sequence[Sequence[int]],
    *,
    trace: bool = False,
    max_layers: int | None = None,
    fixed_layers: int | None = None,
    dtype: torch.dtype | None = None,
    errors: str = "raise",
) -> CompiledRun:
    """Run ``model`` on every token-id sequence of ``batch`` (see the module docstring)."""
    if errors not in ("raise", "mark"):
        raise RasplabError(f"errors must be one of: raise, mark; got {errors!r}")
    dtype = model.default_dtype() if dtype is None else dtype
    model.check_dtype(dtype)
    if fixed_layers is not None:
        limit = fixed_layers
    else:
        limit = model.spec["max_layers"] if max_layers is None else max_layers
    if not isinstance(limit, int) or limit < 1:
        raise RasplabError(f"the number of layers must be a positive int, got {limit!r}")
    batch = _check(model, batch)
    size = len(batch)
    outputs: list[list[int] | None] = [[] for _ in range(size)]
    failures: dict[int, str] = {}
    layers = [0] * size
    kinds = {s.name: s.kind for s in model.layout.slots}
    recorder = _Recorder(model, batch, kinds) if trace else None
    order = sorted(range(size), key=lambda b: len(batch[b]))  # similar lengths share a chunk
    start = 0
    while start < size:
        stop = start + 1
        while (
            stop < size
            and (stop - start + 1) * _cost(model, len(batch[order[stop]])) <= MAX_CHUNK_ELEMENTS
        ):
            stop += 1
        empty = [b for b in order[start:stop] if len(batch[b]) == 0]
        ids = [b for b in order[start:stop] if len(batch[b]) > 0]
        for b in empty:
            layers[b] = limit if not (model.spec["halt"] and fixed_layers is None) else 1
            if recorder is not None:
                recorder.traces[b] = Trace(
                    [],
                    kinds,
                    {k: [] for k in kinds},
                    [
                        LayerTrace({k: [] for k in kinds}, {k: [] for k in kinds}, [])
                        for _ in range(layers[b])
                    ],
                    model.spec["output"],
                )
        if ids:
            _run_chunk(
                model,
                batch,
                ids,
                limit,
                fixed_layers,
                dtype,
                recorder,
                outputs,
                layers,
                failures,
                errors == "raise",
            )
        start = stop
    traces = [recorder.traces[b] for b in range(size)] if recorder is not None else None
    for b in failures:
        outputs[b] = None
    return CompiledRun(outputs, layers, traces, [failures.get(b) for b in range(size)])
