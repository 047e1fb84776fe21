"""Compiled RASP programs in TransformerLens 4: every lib program, every layer, every SOp.

Two computations must agree: rasplab's compiled RASP module (its residual stream after every
sub-layer) and the exported ``TransformerBridge`` read through ``run_with_cache``; every SOp
is decoded from both at every layer, and the bridge's logits give the output the evaluator
gives. Skipped without the ``interp`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.compiler.hooked_rasp import rasp_to_transformer_lens
from rasplab.rasp import rasp
from rasplab.rasp.evaluate import evaluate
from rasplab.rasp.graph import nodes
from rasplab.rasp.load import LIBRARY
from rasplab.rasp_compiler.compile import compile_rasp_to_model

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")

NUMS, LETTERS = (1, 2, 3, 4), ("a", "b", "c", "x")
DYCK = ("(", ")", "{", "}", "x")
VOCAB = {
    "make_pair_balance": DYCK,
    "make_shuffle_dyck": DYCK,
    "make_shuffle_dyck2": DYCK,
    "make_frac_prevs": LETTERS,
    "detect_pattern": LETTERS,
    "make_count": LETTERS,
    "make_nary_sequencemap": LETTERS,
}
N = 5


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_every_layer_decodes_like_the_compiled_module(name):
    program = LIBRARY[name][0](N)
    vocab = VOCAB.get(name, NUMS)
    compiled = compile_rasp_to_model(program, set(vocab), N)
    rng = np.random.default_rng(3)
    tokens = [vocab[i] for i in rng.integers(0, len(vocab), N)]
    ids = compiled.encode([compiled.bos, *tokens])
    residuals: list[torch.Tensor] = []
    compiled.run([ids], residuals)
    bridge = rasp_to_transformer_lens(compiled)
    logits, cache = bridge.run_with_cache(torch.tensor([ids]))
    ours = [cache["blocks.0.hook_resid_pre"]]
    for layer in range(len(compiled.module.layers)):
        ours += [cache[f"blocks.{layer}.hook_resid_mid"], cache[f"blocks.{layer}.hook_resid_post"]]
    assert len(ours) == len(residuals)
    sops = [s for s in nodes(compiled.program) if isinstance(s, rasp.SOp)]
    for step, (got, want) in enumerate(zip(ours, residuals)):
        for sop in sops:
            a, b = compiled.decode(got, sop), compiled.decode(want, sop)
            assert np.array_equal(a, b), f"{name}: sub-layer {step} {sop.label}: {a} != {b}"
    expected = evaluate(compiled.program, tokens)
    out = compiled.slot(compiled.program)
    if out.numerical:
        values = [float(x) for x in logits[0, 1:, 0]]
        assert np.allclose(values, [float(e) for e in expected], atol=1e-3), (values, expected)
    else:
        codes = compiled.decode(cache[f"blocks.{len(compiled.module.layers) - 1}.hook_resid_post"],
                                compiled.program)[0, 1:]  # fmt: skip
        argmax = logits[0, 1:].argmax(-1).tolist()
        for p, (code, e) in enumerate(zip(codes, expected)):
            assert compiled.value(compiled.program, int(code)) == e, (name, p)
            if code >= 0:  # where the SOp has a value, it is the logits' argmax
                assert argmax[p] == code, (name, p)
