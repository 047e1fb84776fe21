"""Compile a RASP program to a PyTorch transformer, Tracr's way of calling it.

``compile_rasp_to_model(program, vocab, max_seq_len)`` runs four steps:

1. :func:`~rasplab.rasp_compiler.plan.make_plan` infers every SOp's value set, checks that each SOp
   compiles exactly (refusing the first that does not, naming it and the reason; with
   ``causal=True`` also every SOp that would look ahead) and places each in a sub-layer;
2. :func:`~rasplab.rasp_compiler.weights.build_weights` lays out the residual stream and builds the
   embeddings, heads and MLPs in numpy, bounding float32 error as it goes;
3. :class:`~rasplab.rasp_compiler.model.RaspTransformer` holds them as a frozen ``torch.nn.Module``;
4. :class:`CompiledRasp` wraps it with Tracr's interface: ``apply(["BOS", ...]).decoded``,
   ``model_config``, ``residual_labels``; and decodes *every* SOp, which
   :mod:`rasplab.rasp_compiler.verify` compares with the evaluator.

>>> from rasplab.rasp import rasp, lib
>>> model = compile_rasp_to_model(lib.make_sort_unique(rasp.tokens, rasp.tokens), {1, 2, 3}, 3)
>>> model.apply(["BOS", 3, 1, 2]).decoded
['BOS', 1, 2, 3]
>>> model.model_config.num_layers, isinstance(model.module, torch.nn.Module)
(2, True)
>>> model.apply(["BOS", 4])
Traceback (most recent call last):
rasplab.rasp.rasp.RaspError: token 4 at position 1 is not in the vocabulary {1, 2, 3}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rasplab.rasp import rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp.values import value_order
from rasplab.rasp_compiler.model import RaspTransformer
from rasplab.rasp_compiler.plan import Plan, make_plan
from rasplab.rasp_compiler.weights import Slot, Weights, build_weights

COMPILER_BOS = "BOS"


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


class CompiledRasp:
    """A compiled RASP program: the torch module, its layout, and Tracr-style calls."""

    def __init__(
        self, plan: Plan, weights: Weights, module: RaspTransformer, bos: str, pad: str | None
    ) -> None:
        self.plan, self.weights, self.module = plan, weights, module
        self.program: rasp.SOp = plan.program
        self.bos, self.pad = bos, pad
        self.vocab = tuple(sorted(plan.vocab, key=value_order))
        self.token_ids = {t: i for i, t in enumerate(plan.vocab)}
        self.residual_labels: list[str] = list(weights.labels)
        heads = [len(x.heads) for x in weights.layers]
        keys = [max(h.W_Q.shape[1], h.W_V.shape[1]) for x in weights.layers for h in x.heads]
        mlps = [0 if x.W1 is None else x.W1.shape[1] for x in weights.layers]
        self.model_config = ModelConfig(
            num_layers=plan.layers,
            num_heads=max(heads, default=0) or 1,
            key_size=max(keys, default=1),
            mlp_hidden_size=max(mlps, default=0) or 1,
            causal=plan.causal,
        )

    def sizes(self) -> dict[str, Any]:
        """Layers, heads, residual width, MLP width, and parameters counted as Tracr's
        assembled model counts them (every layer padded to the largest, with biases);
        ``module_params`` is this module's own count."""
        c, d = self.model_config, len(self.residual_labels)
        hk = c.num_heads * c.key_size
        per_layer = 3 * (d * hk + hk) + (hk * d + d) + (d * c.mlp_hidden_size)
        per_layer += c.mlp_hidden_size + c.mlp_hidden_size * d + d
        embed = (len(self.plan.vocab) + 2) * d + (self.plan.max_seq_len + 1) * d
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
        if n > self.plan.max_seq_len:
            raise RaspError(
                f"the input has {n} tokens after BOS; the model was compiled for at most "
                f"{self.plan.max_seq_len}"
            )
        ids = [len(self.plan.vocab)]
        for i, t in enumerate(tokens[1:], start=1):
            if self.pad is not None and t == self.pad:
                ids.append(len(self.plan.vocab) + 1)
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
        pad_id = len(self.plan.vocab) + 1
        keep = ids != pad_id if self.pad is not None else None
        with torch.no_grad():
            return self.module(ids, keep=keep, residuals=residuals)

    def decode(self, x: torch.Tensor, sop: rasp.SOp) -> np.ndarray:
        """Value indices ``[B, T]`` of ``sop`` into its value set (-1: None) from ``x``."""
        slot = self.weights.slots[id(sop)]
        part = x[..., slot.start : slot.start + slot.width].double().numpy()
        if slot.numerical:
            xs = np.array([float(v) for v in slot.values])
            return np.abs(part - xs[None, None, :]).argmin(axis=-1)
        best = part.argmax(axis=-1)
        return np.where(part.max(axis=-1, initial=0.0) > 0.5, best, -1)

    def value(self, sop: rasp.SOp, index: int) -> Any:
        """The value with index ``index`` in ``sop``'s value set (None for -1)."""
        return None if index < 0 else self.weights.slots[id(sop)].values[index]

    def apply(self, tokens: Sequence[Any]) -> Output:
        """Run on ``[BOS, t1, ..., tn]``; ``.decoded`` is Tracr's: BOS, then one value each."""
        ids = self.encode(tokens)
        residuals: list[torch.Tensor] = []
        x = self.run([ids], residuals)
        codes = self.decode(x, self.program)[0]
        decoded = [self.bos] + [self.value(self.program, int(c)) for c in codes[1:]]
        if self.pad is not None:
            decoded = [
                self.pad if i == len(self.plan.vocab) + 1 else d for i, d in zip(ids, decoded)
            ]
        return Output(decoded, residuals)

    def slot(self, sop: rasp.SOp) -> Slot:
        """Where ``sop`` lives in the residual stream."""
        return self.weights.slots[id(sop)]


def compile_rasp_to_model(
    program: rasp.SOp,
    vocab: Iterable[Any],
    max_seq_len: int,
    compiler_bos: str = COMPILER_BOS,
    compiler_pad: str | None = None,
    causal: bool = False,
    dtype: torch.dtype | None = None,
) -> CompiledRasp:
    """Compile ``program`` for inputs over ``vocab`` of 1..``max_seq_len`` tokens (after
    ``compiler_bos``); every SOp is exact, or a :class:`RaspError` names the one that is not.

    ``dtype=None`` compiles in float32 where the error bounds prove every SOp exact there,
    else in float64 (``sizes()["dtype"]`` says which); a given dtype is used or refused."""
    vocab = set(vocab)
    for special, what in ((compiler_bos, "BOS"), (compiler_pad, "PAD")):
        if special is not None and special in vocab:
            raise RaspError(f"the {what} token {special!r} must not be in the vocabulary")
    plan = make_plan(program, sorted(vocab, key=value_order), max_seq_len, causal=causal)
    if dtype is None:
        try:
            weights, dtype = (
                build_weights(plan, eps=torch.finfo(torch.float32).eps / 2),
                torch.float32,
            )
        except RaspError:
            weights, dtype = (
                build_weights(plan, eps=torch.finfo(torch.float64).eps / 2),
                torch.float64,
            )
    else:
        weights = build_weights(plan, eps=torch.finfo(dtype).eps / 2)
    if compiler_pad is not None:  # PAD: a zero embedding row after BOS's; never a key
        weights.token_embed = np.concatenate(
            [weights.token_embed, np.zeros_like(weights.token_embed[:1])]
        )
    module = RaspTransformer(weights, causal=causal, dtype=dtype)
    return CompiledRasp(plan, weights, module, compiler_bos, compiler_pad)
