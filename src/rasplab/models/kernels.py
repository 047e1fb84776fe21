"""Optional GPU kernels from flash-linear-attention (the ``gpu`` extra), used automatically.

On a CUDA tensor, with flash-linear-attention importable, FoX and PaTH layers call its
Triton kernels when the layer needs nothing those kernels lack: decoder mode, no padding
that matters, no sliding window and no positional logit bias (and, for PaTH, a head width
of 16, 32 or 64). Everything else, and every CPU run, takes the pure-PyTorch path.

The kernel calls themselves are untested here: the machines this was written on have no GPU.
``tests/models`` holds ``@pytest.mark.gpu`` tests comparing these kernels with the pure path;
they are skipped without CUDA. Code that can only run on a GPU carries a ``gpu-only``
comment, which the line-coverage figure leaves out (pyproject's ``[tool.coverage.report]``);
the choice of path (:func:`usable`) and the layout change are tested on the CPU.

>>> usable(torch.zeros(1), None)  # a CPU tensor never takes a kernel
False
"""

from __future__ import annotations

import functools
import importlib.util

import torch

PATH_HEAD_DIMS = (16, 32, 64)


@functools.cache
def available() -> bool:
    """True when CUDA and the ``fla`` package (flash-linear-attention) are both present."""
    return torch.cuda.is_available() and importlib.util.find_spec("fla") is not None


def usable(q: torch.Tensor, ctx, head_dims: tuple[int, ...] | None = None) -> bool:
    """Whether the layer with queries ``q`` and context ``ctx`` can use a GPU kernel."""
    if not q.is_cuda or ctx is None or ctx.reference or not available():
        return False
    if head_dims is not None and q.shape[-1] not in head_dims:
        return False
    return ctx.causal and ctx.key_pad is None and ctx.window is None and ctx.bias() is None


def _bthd(x: torch.Tensor) -> torch.Tensor:
    """[B, H, T, ...] -> contiguous [B, T, H, ...], the kernels' layout."""
    return x.transpose(1, 2).contiguous()


def forgetting_attention(q, k, v, log_f, scale: float) -> torch.Tensor:  # gpu-only
    """FoX through ``fla.ops.forgetting_attn``; inputs [B, H, T, Dh], log gates [B, H, T]."""
    # optional extra: rasplab[gpu] (flash-linear-attention)
    from fla.ops.forgetting_attn.parallel import parallel_forgetting_attn

    out = parallel_forgetting_attn(_bthd(q), _bthd(k), _bthd(v), _bthd(log_f), scale=scale)
    return out.transpose(1, 2)


def path_attention(q, k, v, w, beta, scale: float) -> torch.Tensor:  # gpu-only
    """PaTH through ``fla.ops.path_attn``; w unit vectors [B, H, T, Dh], beta [B, H, T]."""
    # optional extra: rasplab[gpu] (flash-linear-attention)
    from fla.ops.path_attn.parallel import parallel_path_attention

    out, _ = parallel_path_attention(
        q=_bthd(q), k=_bthd(k), v=_bthd(v), w=_bthd(w), beta=_bthd(beta), scale=scale
    )
    return out.transpose(1, 2)
