"""``first_lookahead`` (the weights run without a mask) agrees with the planner's causal check
(the selectors read symbolically): on every program of Tracr's library, a head of the
non-causal compile attends to a later position exactly when ``causal=True`` is refused."""

import pytest
import torch

from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import compile_rasp_to_model
from rasplab.rasp_compiler.lookahead import FLOOR, first_lookahead, probes

from .test_compile import LIB

N = 4


@pytest.mark.parametrize("name", sorted(LIB))
def test_lookahead_is_found_exactly_where_a_causal_compile_is_refused(name):
    build, vocab = LIB[name]
    model = compile_rasp_to_model(build(N), vocab, N)
    found = first_lookahead(model.module, len(model.tokens), N)
    try:
        causal = compile_rasp_to_model(build(N), vocab, N, causal=True)
    except RaspError as err:
        assert "causal=True" in str(err)
        assert found is not None, name
        layer, head, ids = found
        # the probe it names shows the look-ahead, recomputed by the module itself: masking
        # later keys changes that layer's attention output at some position
        x = torch.tensor([ids])
        res = []
        model.module(x, residuals=res)
        block = model.module.layers[layer]
        free = block.attention(res[2 * layer], False, None)
        masked = block.attention(res[2 * layer], True, None)
        assert (free - masked).abs().max() > FLOOR
        return
    assert found is None, name
    assert first_lookahead(causal.module, len(causal.tokens), N) is None


def test_probes_are_exhaustive_when_few_and_seeded_samples_otherwise():
    few = probes(n_tokens=3, max_seq_len=3)
    assert [b.shape for b in few] == [(3, 2), (9, 3), (27, 4)]
    assert len({tuple(r) for b in few for r in b.tolist()}) == 39
    many = probes(n_tokens=5, max_seq_len=100)
    assert len(many) == 1 and many[0].shape == (64, 65) and (many[0][:, 0] == 5).all()
    assert many[0][:, 1:].max() < 5 and len({tuple(r) for r in many[0].tolist()}) == 64
    assert all((a == b).all() for a, b in zip(many, probes(5, 100)))
