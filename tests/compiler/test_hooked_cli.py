"""``rasplab export NAME --to transformer-lens``: the folder it writes opens in TransformerLens 4.

The folder is loaded by plain ``TransformerBridge.boot_native`` + ``load_state_dict`` (what
``load_hooked`` does, strict about every key) and must compute the program's output and the
interpreter's variables at every layer. Skipped without the ``interp`` extra.
"""

from __future__ import annotations

import pytest

from rasplab.cli import main
from rasplab.compiler.hooked import hooked_states, hooked_tokens, load_hooked
from rasplab.compiler.verify import compile_for
from rasplab.lang.interpreter import interpret
from rasplab.programs import get_program

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")


def test_the_exported_folder_loads_and_computes_the_program(tmp_path, capsys):
    name, text = "parity_sequential_relative", "1 0 1 1"
    out = tmp_path / "tl"
    with pytest.raises(SystemExit) as done:
        main(["export", name, "--to", "transformer-lens", "--layers", "5", "--input", text,
              "--out", str(out)])  # fmt: skip
    assert done.value.code == 0
    capsys.readouterr()
    bridge = load_hooked(out)
    assert type(bridge).__name__ == "TransformerBridge" and bridge.cfg.n_layers == 15
    entry = get_program(name)
    ids = list(entry.encode(text))
    compiled = compile_for(entry.program(), [len(ids)])
    logits, cache = bridge.run_with_cache(hooked_tokens(compiled, ids))
    run = interpret(entry.program(), [ids], trace=True)
    assert logits.argmax(-1)[0, 1:].tolist() == run.outputs[0]
    layers = run.traces[0].layers
    states = hooked_states(compiled, cache, len(layers))
    for layer, step in enumerate(layers):
        for var, values in step.after_mlp.items():
            assert states[layer]["after_mlp"][var] == values, (layer, var)
