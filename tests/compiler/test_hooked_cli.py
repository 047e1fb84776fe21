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


def test_a_trained_run_exports_and_loads_with_its_logits(tmp_path, capsys):
    import torch

    from rasplab.models import ModelConfig, build_model

    model = build_model(ModelConfig(width=16, heads=2, layers=2, pe="ape"), 6, 4, 20, seed=2)
    model.save_pretrained(tmp_path / "run")
    out = tmp_path / "tl"
    with pytest.raises(SystemExit) as done:
        main(["export", "--run", str(tmp_path / "run"), "--to", "transformer-lens",
              "--out", str(out)])  # fmt: skip
    assert done.value.code == 0
    bridge = load_hooked(out)
    ids = torch.randint(0, 6, (2, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.allclose(bridge(ids), model.eval()(ids), atol=1e-5)


def test_a_run_without_a_counterpart_is_refused_in_one_line(tmp_path, capsys):
    from rasplab.models import ModelConfig, build_model

    cfg = ModelConfig(width=16, heads=2, layers=2, attention="stick_breaking")
    build_model(cfg, 6, 4, 20, seed=2).save_pretrained(tmp_path / "run")
    out = tmp_path / "tl"
    with pytest.raises(SystemExit) as done:
        main(["export", "--run", str(tmp_path / "run"), "--to", "transformer-lens",
              "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert done.value.code == 2 and "'stick_breaking'" in err and err.count("\n") == 1
    assert not out.exists()


def test_the_export_is_swapped_in_whole_and_refuses_a_folder_with_other_files(
    tmp_path, capsys, monkeypatch
):
    # issue #39: the files were moved into --out one by one, merging into any folder
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    args = ["export", "parity_sequential_relative", "--to", "transformer-lens", "--layers", "5"]
    with pytest.raises(SystemExit) as done:
        main([*args, "--out", str(busy)])
    assert done.value.code == 2 and "holds other files" in capsys.readouterr().err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    import os

    renamed = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: renamed.append(b) or real(a, b))
    out = tmp_path / "tl"
    with pytest.raises(SystemExit) as done:
        main([*args, "--out", str(out)])
    assert done.value.code == 0 and sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "model.safetensors",
    ]
    assert [str(p) for p in renamed] == [str(out)]  # one rename: the whole folder
