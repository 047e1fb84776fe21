"""Compile a RASP program to a PyTorch transformer, Tracr's way of calling it.

``compile_rasp_to_model(program, vocab, max_seq_len)`` runs four steps:

1. :func:`~rasplab.rasp_compiler.plan.make_plan` infers every SOp's value set, checks that each SOp
   compiles exactly (refusing the first that does not, naming it and the reason; with
   ``causal=True`` also every SOp that would look ahead) and places each in a sub-layer;
2. :func:`~rasplab.rasp_compiler.weights.build_weights` lays out the residual stream and builds the
   embeddings, heads and MLPs in numpy, bounding float32 error as it goes;
3. :class:`~rasplab.rasp_compiler.model.RaspTransformer` holds them as a frozen ``torch.nn.Module``;
4. :class:`CompiledRasp` wraps it with Tracr's interface
   (:mod:`~rasplab.rasp_compiler.wrapper`, shared with a saved model loaded back): ``apply(["BOS", ...]).decoded``,
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

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from rasplab.rasp import rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp.values import value_order
from rasplab.rasp_compiler.model import RaspTransformer
from rasplab.rasp_compiler.plan import Plan, make_plan
from rasplab.rasp_compiler.weights import Slot, Weights, build_weights
from rasplab.rasp_compiler.wrapper import ModelConfig, Output, RaspModel, decode_slot

__all__ = ["COMPILER_BOS", "CompiledRasp", "ModelConfig", "Output", "compile_rasp_to_model"]

COMPILER_BOS = "BOS"


class CompiledRasp(RaspModel):
    """A compiled RASP program: the torch module, its layout, and Tracr-style calls; decodes
    every SOp of the program (:meth:`decode`), not only the output."""

    def __init__(
        self, plan: Plan, weights: Weights, module: RaspTransformer, bos: str, pad: str | None
    ) -> None:
        self.plan, self.weights = plan, weights
        self.program: rasp.SOp = plan.program
        output = weights.slots[id(plan.program)]
        super().__init__(module, plan.vocab, bos, pad, plan.max_seq_len, weights.labels, output)

    def decode(self, x: torch.Tensor, sop: rasp.SOp) -> np.ndarray:
        """Value indices ``[B, T]`` of ``sop`` into its value set (-1: None) from ``x``."""
        return decode_slot(x, self.slot(sop))

    def value(self, sop: rasp.SOp, index: int) -> Any:
        """The value with index ``index`` in ``sop``'s value set (None for -1)."""
        return None if index < 0 else self.weights.slots[id(sop)].values[index]

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
