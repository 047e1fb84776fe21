"""Compiled models in TransformerLens: every library program, every layer, every position.

Three computations must agree on real compiler output: the interpreter's trace, rasplab's
compiled model (``run_compiled``) and the exported ``HookedTransformer`` read through
``run_with_cache``. Skipped (with the reason) without the ``interp`` extra.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rasplab.compiler import run_compiled
from rasplab.compiler.hooked import (
    hooked_states,
    hooked_tokens,
    layers_needed,
    load_hooked,
    save_hooked,
    to_hooked_transformer,
)
from rasplab.compiler.verify import compile_for
from rasplab.errors import RasplabError
from rasplab.lang.interpreter import interpret
from rasplab.programs import get_program, program_names

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, abs_tol=1e-5)
    return a == b


def _case(name: str):
    entry = get_program(name)
    text = entry.random_input(np.random.default_rng(7), max(entry.min_length, 3))
    ids = list(entry.encode(text))
    return entry, ids, compile_for(entry.program(), [len(ids)])


@pytest.mark.parametrize("name", program_names())
def test_every_layer_decodes_like_the_compiled_model_and_the_interpreter(name):
    entry, ids, compiled = _case(name)
    run = run_compiled(compiled, [ids], trace=True)
    layers = run.layers[0]
    interp = interpret(entry.program(), [ids], trace=True).traces[0]
    assert len(interp.layers) == layers
    n_ctx = len(ids) if compiled.max_length is None else None
    hooked = to_hooked_transformer(compiled, layers, n_ctx=n_ctx)
    logits, cache = hooked.run_with_cache(hooked_tokens(compiled, ids))
    states = hooked_states(compiled, cache, layers)
    for layer in range(layers):
        for part in ("after_attention", "after_mlp"):
            ours = states[layer][part]
            for source in (run.traces[0].layers[layer], interp.layers[layer]):
                for var, values in getattr(source, part).items():
                    assert all(_same(a, b) for a, b in zip(ours[var], values, strict=True)), (
                        f"{name}: layer {layer + 1} {part} {var}: {ours[var]} != {values}"
                    )
    assert logits.argmax(-1)[0, 1:].tolist() == run.outputs[0]
    assert run.outputs[0] == interpret(entry.program(), [ids]).outputs[0]


def test_more_layers_than_the_halting_layer_keep_the_output():
    entry, ids, compiled = _case("parity_sequential_relative")
    need = layers_needed(compiled, [ids])
    want = run_compiled(compiled, [ids]).outputs[0]
    for k in (need, need + 3):
        hooked = to_hooked_transformer(compiled, k, n_ctx=len(ids))
        assert hooked(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist() == want
    short = to_hooked_transformer(compiled, 1, n_ctx=len(ids))
    got = short(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist()
    assert got == run_compiled(compiled, [ids], fixed_layers=1).outputs[0]


def test_structure_no_layer_norm_unrolled_shared_blocks_and_output_unembedding():
    entry, ids, compiled = _case("majority")
    hooked = to_hooked_transformer(compiled, 4)
    assert hooked.cfg.normalization_type is None and hooked.cfg.n_layers == 12
    assert hooked.blocks[0].attn.W_Q is hooked.blocks[3].attn.W_Q
    assert not hooked.blocks[1].attn.W_Q.any()
    slot = compiled.layout.slot(compiled.spec["output"])
    rows = torch.nonzero(hooked.unembed.W_U)[:, 0].tolist()
    assert rows == list(range(slot.start, slot.stop))


def test_save_and_reload_give_the_same_logits(tmp_path):
    entry, ids, compiled = _case("reverse")
    hooked = to_hooked_transformer(compiled, layers_needed(compiled, [ids]))
    save_hooked(hooked, tmp_path / "tl")
    again = load_hooked(tmp_path / "tl")
    tokens = hooked_tokens(compiled, ids)
    assert torch.equal(hooked(tokens), again(tokens))


def test_refusals():
    _, _, compiled = _case("parity_sum_mod_2")
    with pytest.raises(RasplabError, match="runs exactly 1 layers"):
        to_hooked_transformer(compiled, 2)
    _, _, compiled = _case("majority")
    with pytest.raises(RasplabError, match="exceeds the compiled model's maximum length"):
        to_hooked_transformer(compiled, 1, n_ctx=compiled.max_length + 1)
    with pytest.raises(RasplabError, match="outside"):
        hooked_tokens(compiled, [compiled.spec["input_range"]])
