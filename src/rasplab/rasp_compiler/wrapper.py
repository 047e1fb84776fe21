"""Tracr's interface over a compiled RASP transformer, the same for a fresh compile
(:class:`~rasplab.rasp_compiler.compile.CompiledRasp`) and a saved one loaded back
(:class:`~rasplab.rasp_compiler.load.SavedRasp`): token ids in (``encode``), the residual
stream out (``run``), the output SOp decoded from its slot (``apply(...).decoded``), and the
sizes as Tracr reports them, all read from the module and the residual layout alone.

>>> from rasplab.rasp import lib
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> model = compile_rasp_to_model(lib.make_length(), {"a", "b"}, 3)
>>> isinstance(model, RaspModel), model.encode(["BOS", "b", "a"])
(True, [2, 1, 0])
>>> module_config(model.module) == model.model_config
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rasplab.rasp.rasp import RaspError
from rasplab.rasp.values import value_order
from rasplab.rasp_compiler.model import RaspTransformer
from rasplab.rasp_compiler.weights import Slot


@dataclass(frozen=True)
class ModelConfig:
    """Sizes under Tracr's names (``num_layers`` counts attention + MLP pairs)."""

    num_layers: int
    num_heads: int
    key_size: int
    mlp_hidden_size: int
    causal: bool
    layer_norm: bool = False


@dataclass
class Output:
    """``decoded``: the BOS token then the output SOp's value at every position (None where
    it has none); ``residuals``: the residual stream ``[1, T, D]`` after every sub-layer."""

    decoded: list
    residuals: list[torch.Tensor]


def module_config(module: RaspTransformer) -> ModelConfig:
    """Tracr's sizes of ``module``: the most heads in a layer, the widest head (query or
    value), the widest MLP (1 where there is none)."""
    layers = list(module.layers)
    with_heads = [x for x in layers if x.W_Q.shape[0]]
    return ModelConfig(
        num_layers=len(layers),
        num_heads=max((x.W_Q.shape[0] for x in layers), default=0) or 1,
        key_size=max((x.W_Q.shape[2] for x in with_heads), default=1),
        mlp_hidden_size=max((x.W_in.shape[1] for x in layers), default=0) or 1,
        causal=module.causal,
    )


def decode_slot(x: torch.Tensor, slot: Slot) -> np.ndarray:
    """Value indices ``[B, T]`` into ``slot``'s values (-1: None) read from residuals ``x``:
    the nearest value of a numerical slot, the hot dim (above 0.5) of a categorical one."""
    part = x[..., slot.start : slot.start + slot.width].double().numpy()
    if slot.numerical:
        xs = np.array([float(v) for v in slot.values])
        return np.abs(part - xs[None, None, :]).argmin(axis=-1)
    best = part.argmax(axis=-1)
    return np.where(part.max(axis=-1, initial=0.0) > 0.5, best, -1)


class RaspModel:
    """A RASP transformer with its token order (``tokens``: token id i is ``tokens[i]``,
    then BOS, then PAD if any), its residual labels and the slot of the output SOp."""

    def __init__(
        self,
        module: RaspTransformer,
        tokens: Sequence[Any],
        bos: Any,
        pad: Any,
        max_seq_len: int,
        labels: Sequence[str],
        output: Slot,
    ) -> None:
        self.module, self.bos, self.pad = module, bos, pad
        self.tokens = tuple(tokens)
        self.max_seq_len = max_seq_len
        self.vocab = tuple(sorted(self.tokens, key=value_order))
        self.token_ids = {t: i for i, t in enumerate(self.tokens)}
        self.residual_labels: list[str] = list(labels)
        self.output_slot = output
        self.model_config = module_config(module)

    def sizes(self) -> dict[str, Any]:
        """Layers, heads, residual width, MLP width, and parameters counted as Tracr's
        assembled model counts them (every layer padded to the largest, with biases);
        ``module_params`` is this module's own count."""
        c, d = self.model_config, len(self.residual_labels)
        hk = c.num_heads * c.key_size
        per_layer = 3 * (d * hk + hk) + (hk * d + d) + (d * c.mlp_hidden_size)
        per_layer += c.mlp_hidden_size + c.mlp_hidden_size * d + d
        embed = (len(self.tokens) + 2) * d + (self.max_seq_len + 1) * d
        return {
            "layers": c.num_layers,
            "heads": c.num_heads,
            "residual_width": d,
            "mlp_width": c.mlp_hidden_size,
            "params": embed + c.num_layers * per_layer,
            "module_params": sum(p.numel() for p in self.module.parameters()),
            "dtype": str(self.module.token_embed.dtype).replace("torch.", ""),
        }

    def encode(self, tokens: Sequence[Any]) -> list[int]:
        """Token ids of ``[BOS, t1, ...]``; refuses a missing BOS or a token outside the vocab."""
        tokens = list(tokens)
        if not tokens or tokens[0] != self.bos:
            raise RaspError(f"the input must start with the BOS token {self.bos!r}: {tokens!r}")
        n = len(tokens) - 1
        if n > self.max_seq_len:
            raise RaspError(
                f"the input has {n} tokens after BOS; the model was compiled for at most "
                f"{self.max_seq_len}"
            )
        ids = [len(self.tokens)]
        for i, t in enumerate(tokens[1:], start=1):
            if self.pad is not None and t == self.pad:
                ids.append(len(self.tokens) + 1)
                continue
            try:
                ids.append(self.token_ids[t])
            except (KeyError, TypeError):
                shown = "{" + ", ".join(map(repr, self.vocab)) + "}"
                raise RaspError(
                    f"token {t!r} at position {i} is not in the vocabulary {shown}"
                ) from None
        return ids

    def run(self, batch: Sequence[Sequence[int]], residuals: list | None = None) -> torch.Tensor:
        """The final residual stream ``[B, T, D]`` of equal-length id sequences."""
        ids = torch.tensor([list(x) for x in batch], dtype=torch.long)
        pad_id = len(self.tokens) + 1
        keep = ids != pad_id if self.pad is not None else None
        with torch.no_grad():
            return self.module(ids, keep=keep, residuals=residuals)

    def apply(self, tokens: Sequence[Any]) -> Output:
        """Run on ``[BOS, t1, ..., tn]``; ``.decoded`` is Tracr's: BOS, then one value each."""
        ids = self.encode(tokens)
        residuals: list[torch.Tensor] = []
        x = self.run([ids], residuals)
        codes = decode_slot(x, self.output_slot)[0]
        values = self.output_slot.values
        decoded = [self.bos] + [None if c < 0 else values[int(c)] for c in codes[1:]]
        if self.pad is not None:
            decoded = [self.pad if i == len(self.tokens) + 1 else d for i, d in zip(ids, decoded)]
        return Output(decoded, residuals)
