"""nnsight on the TransformerLens export of a compiled program: read and intervene.

Reading: the residual stream after a chosen compiled layer, taken through nnsight, decodes
to the interpreter's variables. Intervening: one program variable's coordinates are set in
the exported model's residual stream before layer 1 (nnsight assignment), and the result is
checked against a second computation, the interpreter run with that variable changed in its
initial state. Skipped without the ``interp`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rasplab.lang.interpreter as interpreter
from rasplab.compiler import compile_program
from rasplab.compiler.hooked import (
    hooked_tokens,
    layers_needed,
    to_transformer_lens,
)
from rasplab.compiler.hooked_weights import BLOCKS_PER_LAYER
from rasplab.compiler.layout import decode_columns, encode_value
from rasplab.programs import get_program

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")
nnsight = pytest.importorskip("nnsight", reason="needs the interp extra (nnsight)")

NAME, TEXT = "parity_sequential_relative", "1 1 0 1 0"


def _setup():
    entry = get_program(NAME)
    program = entry.program()
    compiled = compile_program(program)
    ids = list(entry.encode(TEXT))
    return program, compiled, ids


def test_read_the_residual_stream_after_a_chosen_layer():
    program, compiled, ids = _setup()
    k = layers_needed(compiled, [ids])
    model = nnsight.NNsight(to_transformer_lens(compiled, k))
    layer = 2  # compiled layer 2: its MLP ends in block 3 * 2 - 1
    with model.trace(hooked_tokens(compiled, ids)):
        resid = model.blocks[BLOCKS_PER_LAYER * layer - 1].hook_resid_post.output.save()
    got = decode_columns(compiled.layout, resid[0, 1:, : compiled.layout.width])
    want = interpreter.interpret(program, [ids], trace=True).traces[0].layers[layer - 1]
    for var, values in want.after_mlp.items():
        assert got[var] == values, var


@pytest.mark.parametrize("position", [0, 2])
def test_setting_a_variable_matches_the_interpreter_with_it_changed(position, monkeypatch):
    program, compiled, ids = _setup()
    var = "parity"
    before = interpreter.interpret(program, [ids]).outputs[0]

    original = interpreter.initial_state

    def changed_state(prog, tokens):
        state = original(prog, tokens)
        state[var] = state[var].copy()
        state[var][0, position] = 1 - state[var][0, position]
        return state

    monkeypatch.setattr(interpreter, "initial_state", changed_state)
    run = interpreter.interpret(program, [ids])
    monkeypatch.undo()
    want = run.outputs[0]
    assert want != before  # the change matters

    old = int(np.asarray(original(program, np.array([ids]))[var])[0, position])
    slot = compiled.layout.slot(var)
    coords = torch.tensor(encode_value(slot, 1 - old), dtype=torch.float32)
    k = max(run.layers[0], layers_needed(compiled, [ids]))
    model = nnsight.NNsight(to_transformer_lens(compiled, k))
    with model.trace(hooked_tokens(compiled, ids)):
        resid = model.blocks[0].hook_resid_pre.output
        resid[0, 1 + position, slot.start : slot.start + slot.width] = coords
        logits = model.output.save()
    assert logits.argmax(-1)[0, 1:].tolist() == want
