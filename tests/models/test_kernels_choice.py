"""Which layers may take a flash-linear-attention kernel, decided on the CPU: a stand-in query
that reports itself on CUDA, with the kernels reported present (the kernel calls themselves
are ``# gpu-only`` and tested in test_gpu.py on a GPU machine)."""

from __future__ import annotations

import pytest
import torch

from rasplab.models import kernels
from rasplab.models.masking import AttentionContext


class _CudaQuery:
    """Just what :func:`kernels.usable` reads from a query tensor on a GPU."""

    is_cuda = True

    def __init__(self, head_dim: int) -> None:
        self.shape = (1, 2, 5, head_dim)


@pytest.fixture
def present(monkeypatch):
    monkeypatch.setattr(kernels, "available", lambda: True)


@pytest.mark.parametrize(
    ("context", "head_dims", "usable"),
    [
        ({"causal": True}, None, True),
        ({"causal": True}, kernels.PATH_HEAD_DIMS, True),
        ({"causal": False}, None, False),
        ({"causal": True, "reference": True}, None, False),
        ({"causal": True, "window": 3}, None, False),
        ({"causal": True, "key_pad": torch.ones(1, 5, dtype=torch.bool)}, None, False),
        (None, None, False),
    ],
)
def test_only_a_plain_causal_layer_takes_a_kernel(present, context, head_dims, usable):
    ctx = None if context is None else AttentionContext(length=5, **context)
    assert kernels.usable(_CudaQuery(32), ctx, head_dims) is usable


def test_path_kernels_take_only_their_head_widths(present):
    ctx = AttentionContext(causal=True, length=5)
    assert not kernels.usable(_CudaQuery(24), ctx, kernels.PATH_HEAD_DIMS)
    assert kernels.usable(_CudaQuery(24), ctx)


def test_a_cpu_tensor_or_missing_kernels_take_the_pure_path(monkeypatch):
    ctx = AttentionContext(causal=True, length=5)
    assert not kernels.usable(torch.zeros(1, 2, 5, 32), ctx)
    monkeypatch.setattr(kernels, "available", lambda: False)
    assert not kernels.usable(_CudaQuery(32), ctx)


def test_the_kernel_layout_swaps_heads_and_time():
    x = torch.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)  # [B, H, T, Dh]
    y = kernels._bthd(x)
    assert y.shape == (2, 4, 3, 5) and y.is_contiguous()
    assert all(torch.equal(y[:, t, h], x[:, h, t]) for h in range(3) for t in range(4))
