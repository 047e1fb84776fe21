"""The compiled RASP transformer as a torch module: embeddings, then per layer multi-head
attention and a ReLU MLP, each added to the residual stream; no layer norm.

Shapes: B batch, T positions (BOS first), D residual width, H heads, K key width, F MLP width.
All weights are frozen parameters. Scores are plain ``q . k`` (the scale lives in ``W_Q``).

>>> from rasplab.rasp import rasp, lib
>>> from rasplab.rasp_compiler.plan import make_plan
>>> from rasplab.rasp_compiler.weights import build_weights
>>> m = RaspTransformer(build_weights(make_plan(lib.make_hist(), {"a", "b"}, 3)))
>>> m(torch.tensor([[2, 0, 1, 0]])).shape    # BOS a b a: [B, T, D]
torch.Size([1, 4, 9])
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from rasplab.rasp_compiler.weights import Layer, Weights


def _frozen(a: np.ndarray, dtype: torch.dtype) -> nn.Parameter:
    return nn.Parameter(torch.as_tensor(np.asarray(a), dtype=dtype), requires_grad=False)


class RaspLayer(nn.Module):
    """Attention (``W_Q``/``W_K`` ``[H, D, K]``, ``W_V`` ``[H, D, K]``, ``W_O`` ``[H, K, D]``)
    then an MLP (``W_in`` ``[D, F]``, ``W_out`` ``[F, D]``)."""

    def __init__(self, layer: Layer, width: int, dtype: torch.dtype) -> None:
        super().__init__()
        h = len(layer.heads)
        k = max([max(x.W_Q.shape[1], x.W_V.shape[1]) for x in layer.heads], default=0)
        wq, wk = np.zeros((h, width, k)), np.zeros((h, width, k))
        wv, wo = np.zeros((h, width, k)), np.zeros((h, k, width))
        for i, head in enumerate(layer.heads):
            wq[i, :, : head.W_Q.shape[1]] = head.W_Q
            wk[i, :, : head.W_K.shape[1]] = head.W_K
            wv[i, :, : head.W_V.shape[1]] = head.W_V
            wo[i, : head.W_O.shape[0]] = head.W_O
        self.W_Q, self.W_K = _frozen(wq, dtype), _frozen(wk, dtype)
        self.W_V, self.W_O = _frozen(wv, dtype), _frozen(wo, dtype)
        w1 = layer.W1 if layer.W1 is not None else np.zeros((width, 0))
        w2 = layer.W2 if layer.W2 is not None else np.zeros((0, width))
        self.W_in, self.W_out = _frozen(w1, dtype), _frozen(w2, dtype)

    def attention(self, x: torch.Tensor, causal: bool, keep: torch.Tensor | None) -> torch.Tensor:
        """Sum of the heads' outputs ``[B, T, D]`` (``keep`` [B, T] masks padded keys)."""
        if self.W_Q.shape[0] == 0:
            return torch.zeros_like(x)
        q = torch.einsum("btd,hdk->bhtk", x, self.W_Q)
        k = torch.einsum("btd,hdk->bhtk", x, self.W_K)
        v = torch.einsum("btd,hdk->bhtk", x, self.W_V)
        scores = q @ k.transpose(-1, -2)  # [B, H, T, T]
        t = x.shape[1]
        if causal:
            later = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(later, float("-inf"))
        if keep is not None:
            scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        mixed = torch.softmax(scores, dim=-1) @ v  # [B, H, T, K]
        return torch.einsum("bhtk,hkd->btd", mixed, self.W_O)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.W_in) @ self.W_out


class RaspTransformer(nn.Module):
    """Token ids ``[B, T]`` (BOS first) to the final residual stream ``[B, T, D]``."""

    def __init__(self, weights: Weights, causal: bool = False, dtype=torch.float32) -> None:
        super().__init__()
        self.causal = causal
        self.token_embed = _frozen(weights.token_embed, dtype)
        self.pos_embed = _frozen(weights.pos_embed, dtype)
        self.layers = nn.ModuleList(RaspLayer(x, weights.width, dtype) for x in weights.layers)

    def forward(
        self, ids: torch.Tensor, keep: torch.Tensor | None = None, residuals: list | None = None
    ) -> torch.Tensor:
        """The final residual stream; ``residuals`` (a list) collects it after every
        sub-layer, embedding first."""
        x = self.token_embed[ids] + self.pos_embed[: ids.shape[1]][None]
        if residuals is not None:
            residuals.append(x)
        for layer in self.layers:
            x = x + layer.attention(x, self.causal, keep)
            if residuals is not None:
                residuals.append(x)
            x = x + layer.mlp(x)
            if residuals is not None:
                residuals.append(x)
        return x
