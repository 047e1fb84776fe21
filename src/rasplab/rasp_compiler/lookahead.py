"""Whether a compiled RASP model's heads attend to later positions: the check that a saved
model's ``causal`` flag is one its weights can carry.

A ``causal=True`` compile refuses every selector that could select a key after its query
(``plan._check_causal``), and otherwise builds the very weights a ``causal=False`` compile
builds; only the mask differs. So the weights of a causal model, run with no mask, give every
later key a weight of at most ``e^(-M/2)`` (under ``2^-26`` for a whole row, see
``weights.score_scale``), while a head that selects a later key gives it at least
``1/(T + 1)``. :func:`first_lookahead` runs the module without a mask on probe inputs and
returns the first (layer, head, input) whose attention puts more than :data:`FLOOR` on a later
position. The probes are every input of 1..``max_seq_len`` tokens when there are at most
:data:`EXHAUSTIVE` of them, else :data:`SAMPLED` seeded random inputs of
``min(max_seq_len, PROBE_LEN)`` tokens: a head that looks ahead only on inputs the probes miss
goes unseen. The other direction cannot be told from the weights: a causal model saved as
``causal=False`` has the same weights, and runs the same, as the non-causal compile.

>>> from rasplab.rasp import lib, rasp
>>> from rasplab.rasp_compiler.compile import compile_rasp_to_model
>>> hist = compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 3)
>>> first_lookahead(hist.module, n_tokens=2, max_seq_len=3)  # a histogram reads ahead
(0, 0, [2, 0, 0])
>>> prevs = compile_rasp_to_model(lib.make_frac_prevs(rasp.tokens == "a"), {"a", "b"}, 3)
>>> first_lookahead(prevs.module, n_tokens=2, max_seq_len=3) is None
True
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from rasplab.rasp_compiler.model import RaspTransformer
from rasplab.seeding import generator

#: attention weight on a later key above which a head counts as looking ahead
FLOOR = 2.0**-20
#: probe every input of 1..max_seq_len tokens when there are at most this many
EXHAUSTIVE = 1024
#: otherwise this many seeded random inputs of min(max_seq_len, PROBE_LEN) tokens
SAMPLED, PROBE_LEN = 64, 64


def probes(n_tokens: int, max_seq_len: int) -> list[np.ndarray]:
    """Batches ``[B, T]`` of token ids (BOS, id ``n_tokens``, first), one per length.

    >>> [b.tolist() for b in probes(n_tokens=2, max_seq_len=2)]
    [[[2, 0], [2, 1]], [[2, 0, 0], [2, 0, 1], [2, 1, 0], [2, 1, 1]]]
    """
    total = sum(n_tokens**n for n in range(1, max_seq_len + 1))
    if total <= EXHAUSTIVE:
        lengths = range(1, max_seq_len + 1)
        rows = [list(itertools.product(range(n_tokens), repeat=n)) for n in lengths]
    else:
        rng = generator(0, "rasp-lookahead", n_tokens, max_seq_len)
        rows = [rng.integers(n_tokens, size=(SAMPLED, min(max_seq_len, PROBE_LEN))).tolist()]
    return [np.array([[n_tokens, *r] for r in batch], dtype=np.int64) for batch in rows]


def first_lookahead(
    module: RaspTransformer, n_tokens: int, max_seq_len: int
) -> tuple[int, int, list[int]] | None:
    """``(layer, head, token ids)`` of the first probe on which a head, run without a causal
    mask, weighs a later position above :data:`FLOOR`; None if no probe does."""
    for batch in probes(n_tokens, max_seq_len):
        ids = torch.from_numpy(batch)
        with torch.no_grad():
            x = module.token_embed[ids] + module.pos_embed[: ids.shape[1]][None]  # [B, T, D]
            for i, layer in enumerate(module.layers):
                if layer.W_Q.shape[0]:
                    q = torch.einsum("btd,hdk->bhtk", x, layer.W_Q)
                    k = torch.einsum("btd,hdk->bhtk", x, layer.W_K)
                    weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)  # [B, H, T, T]
                    ahead = weights.triu(1).amax(dim=(-1, -2)) > FLOOR  # [B, H]
                    if ahead.any():
                        b, h = (int(v) for v in ahead.nonzero()[0])
                        return i, h, batch[b].tolist()
                x = x + layer.attention(x, False, None)
                x = x + layer.mlp(x)
    return None
