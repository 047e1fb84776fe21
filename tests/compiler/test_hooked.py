"""Compiled models in TransformerLens 4: every library program, every layer, every position.

Three computations must agree on real compiler output: the interpreter's trace, rasplab's
compiled model (``run_compiled``) and the exported ``TransformerBridge`` read through
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
    to_transformer_lens,
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
    hooked = to_transformer_lens(compiled, layers, n_ctx=n_ctx)
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
        hooked = to_transformer_lens(compiled, k, n_ctx=len(ids))
        assert hooked(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist() == want
    short = to_transformer_lens(compiled, 1, n_ctx=len(ids))
    got = short(hooked_tokens(compiled, ids)).argmax(-1)[0, 1:].tolist()
    assert got == run_compiled(compiled, [ids], fixed_layers=1).outputs[0]


def test_structure_no_layer_norm_unrolled_shared_blocks_and_output_unembedding():
    entry, ids, compiled = _case("majority")
    hooked = to_transformer_lens(compiled, 4)
    assert type(hooked).__name__ == "TransformerBridge"
    assert hooked.cfg.normalization_type is None and hooked.cfg.n_layers == 12
    native = hooked.original_model.layers
    assert native[0].attn.q.weight is native[3].attn.q.weight  # one tensor per unrolled weight
    assert native[1].mlp.fc_in.weight is native[4].mlp.fc_in.weight
    assert native[0].attn.q.weight.any() and not native[1].attn.q.weight.any()
    assert not hooked.blocks[1].attn.W_Q.any() and hooked.blocks[0].attn.W_Q.any()
    slot = compiled.layout.slot(compiled.spec["output"])
    rows = torch.nonzero(hooked.original_model.head.weight)[:, 1].tolist()
    assert rows == list(range(slot.start, slot.stop))


def test_save_and_reload_give_the_same_logits(tmp_path):
    entry, ids, compiled = _case("reverse")
    hooked = to_transformer_lens(compiled, layers_needed(compiled, [ids]))
    save_hooked(hooked, tmp_path / "tl")
    again = load_hooked(tmp_path / "tl")
    tokens = hooked_tokens(compiled, ids)
    assert torch.equal(hooked(tokens), again(tokens))


def test_plain_transformer_lens_code_loads_the_export(tmp_path):
    """The snippet docs/explore.md gives, run as written (no rasplab import in the load)."""
    entry, ids, compiled = _case("parity_sequential_relative")
    k = layers_needed(compiled, [ids])
    save_hooked(to_transformer_lens(compiled, k), tmp_path / "tl")
    snippet = f"""
import json, torch, safetensors.torch
from transformer_lens import TransformerBridge, TransformerBridgeConfig

cfg = json.load(open("{tmp_path}/tl/config.json"))
cfg["dtype"] = getattr(torch, cfg["dtype"])
model = TransformerBridge.boot_native(TransformerBridgeConfig(**cfg))
model.load_state_dict(safetensors.torch.load_file("{tmp_path}/tl/model.safetensors"))
logits, cache = model.run_with_cache(tokens)
"""
    scope = {"tokens": hooked_tokens(compiled, ids)}
    exec(snippet, scope)  # noqa: S102 - the documented snippet, verbatim
    assert scope["logits"].argmax(-1)[0, 1:].tolist() == run_compiled(compiled, [ids]).outputs[0]
    states = hooked_states(compiled, scope["cache"], k)
    assert states == hooked_states(
        compiled, to_transformer_lens(compiled, k).run_with_cache(scope["tokens"])[1], k
    )


def test_a_transformer_lens_3_export_is_refused(tmp_path):
    from safetensors.torch import save_file

    (tmp_path / "old").mkdir()
    save_file({"embed.W_E": torch.zeros(2, 2)}, str(tmp_path / "old" / "model.safetensors"))
    (tmp_path / "old" / "config.json").write_text('{"n_layers": 3, "dtype": "float32"}')
    with pytest.raises(RasplabError, match="TransformerLens 3 export"):
        load_hooked(tmp_path / "old")


def test_refusals():
    _, _, compiled = _case("parity_sum_mod_2")
    with pytest.raises(RasplabError, match="runs exactly 1 layers"):
        to_transformer_lens(compiled, 2)
    _, _, compiled = _case("majority")
    with pytest.raises(RasplabError, match="exceeds the compiled model's maximum length"):
        to_transformer_lens(compiled, 1, n_ctx=compiled.max_length + 1)
    with pytest.raises(RasplabError, match="outside"):
        hooked_tokens(compiled, [compiled.spec["input_range"]])
