"""The compiled attention a trace-supervised model runs with (``trace.attention``).

rasplab's compiled attention is exact, and for that a categorical head's selected position
*ties* with the head's sink: both have the score ``MATCH`` (1,500), so one selected position
gets weight exactly 1/2 and the head reads ``u = one-hot/2, mass = 1/2`` (two or more selected
positions give another mass, which is how the compiled MLP tells "undefined"). A tie is a
knife edge: when a learned MLP leaves an error ``e`` on a query or key dim, the score moves
by about ``1500 e`` and the weight to ``sigmoid(1500 e)``: ``e = 0.001`` on the query and the
key already turns 1/2 into 0.95, ``e = 0.003`` into 1.0, far outside what an MLP trained with
input noise 0.1 has seen (the learned MLPs of the parity programs leave errors of 0.003-0.02).

ALTA's compiled attention (the one its trace-supervision runs use, seed 001 App. C.1) has
no sink: a head whose mask allows one position gives it all the weight whatever the score,
and a matching score (``100 x 100``) is far above a non-matching one (0), so small errors in
the learned MLP's query and key dims change nothing. :func:`tolerant_attention` gives the
compiled model that property without changing what a head reads: the sink of every
categorical head is lowered to ``MATCH/2`` (as numerical heads already have it), so a
selected position wins by 750 and takes the whole weight, and the head's output matrix is
halved, so one selected position still reads ``one-hot/2, mass 1/2`` and none reads zeros,
exactly the vectors of the traces. Where a categorical head selects two or more positions it
reads their mean (halved) instead of "undefined": the construction is for programs whose
categorical heads select at most one position, as the parity programs' heads do (one
relative offset; unique absolute positions); :func:`check_tolerant` checks it on a
program's own inputs and refuses the tolerant attention where a head would read otherwise.

>>> import torch
>>> from rasplab.programs import get_program
>>> from rasplab.compiler import compile_program
>>> exact = compile_program(get_program("parity_sequential_relative").program())
>>> tolerant = tolerant_attention(exact)
>>> x = exact.embed(torch.tensor([[2, 1, 0]]), torch.tensor([3]))
>>> bool(torch.equal(exact.attend_(x.clone()), tolerant.attend_(x.clone())))
True
>>> qk = exact.layout.slot("relative_qk").start
>>> y = x.clone(); y[..., qk] += 0.001   # a learned MLP's small error on the query/key dim
>>> mass = exact.layout.slot("parity_left").flag
>>> [round(float(m.attend_(y.clone())[0, 1, mass]), 3) for m in (exact, tolerant)]
[0.953, 0.5]
"""

from __future__ import annotations

import torch

from rasplab.compiler.model import CompiledTransformer, valid_mask
from rasplab.errors import RasplabError


def tolerant_attention(model: CompiledTransformer) -> CompiledTransformer:
    """A copy of ``model`` whose categorical heads take a selected position's whole weight
    (sink ``MATCH/2``) and write half of it: the same head vectors, robust to small errors."""
    match = float(model.spec["constants"]["match"])
    tensors = {name: t.clone() for name, t in model.named_buffers()}
    categorical = tensors["sink"] == match
    tensors["sink"][categorical] = match / 2
    tensors["W_O"][categorical] *= 0.5
    return CompiledTransformer(model.spec, tensors)


def check_tolerant(
    exact: CompiledTransformer,
    tolerant: CompiledTransformer,
    tokens: torch.Tensor,
    lengths: torch.Tensor,
    layers: int,
    name: str,
) -> None:
    """Refuse ``tolerant`` for program ``name`` unless, on the inputs ``tokens`` ``[B, T]``,
    every layer's attention writes the same residual as ``exact``'s (the exact model's own
    MLP between layers): a categorical head selecting two or more positions would otherwise
    read their mean where the traces say "undefined".

    >>> from rasplab.programs import get_program
    >>> from rasplab.compiler import compile_program
    >>> exact = compile_program(get_program("parity_sequential_relative").program())
    >>> check_tolerant(exact, tolerant_attention(exact), torch.tensor([[2, 1, 0]]),
    ...                torch.tensor([3]), 4, "parity_sequential_relative")
    """
    x = exact.embed(tokens, lengths).float()
    mask = valid_mask(lengths, tokens.shape[1])
    for layer in range(layers):
        after = exact.attend_(x.clone())
        if not torch.allclose(tolerant.attend_(x.clone()), after, atol=1e-4):
            raise RasplabError(
                f"trace.attention 'tolerant' changes what a head of {name!r} reads at layer "
                f"{layer} (a categorical head selects more than one position); use "
                "trace.attention: exact"
            )
        exact.mlp_(after)
        x = after.mul_(mask)
