"""The oneDNN-backed :class:`~rasplab.models.linear.Linear` computes ``nn.Linear`` exactly as
``F.linear`` does, on or off and for strided inputs; unknown registry names are refused."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from rasplab.errors import RasplabError
from rasplab.models import linear
from rasplab.models.registry import attention_kind, positional_encoding


@pytest.fixture
def restore():
    before = dict(linear._ENABLED)
    yield
    linear._ENABLED.update(before)


def test_on_off_and_strided_inputs_give_f_linear(restore):
    layer = linear.Linear(6, 4)
    x = torch.randn(5, 3, 6, generator=torch.Generator().manual_seed(0)).transpose(0, 1)
    assert not x.is_contiguous()  # reshaped to 2-D it needs a copy
    want = F.linear(x, layer.weight, layer.bias)
    linear.use_onednn(True)
    assert torch.allclose(layer(x), want, atol=1e-5)
    linear.use_onednn(False)
    assert torch.equal(layer(x), want)


def test_unknown_positional_encodings_and_attention_kinds_are_refused():
    with pytest.raises(RasplabError, match="unknown model.pe 'sinus'"):
        positional_encoding("sinus")
    with pytest.raises(RasplabError, match="unknown model.attention 'linear'"):
        attention_kind("linear")
