"""``rasplab export lib:NAME --to transformer-lens``: the folder opens in plain TransformerLens 4
(``boot_native`` + ``load_state_dict``) and computes what the RASP evaluator computes.
Skipped without the ``interp`` extra."""

from __future__ import annotations

import itertools
import json

import pytest

from rasplab.cli import main
from rasplab.rasp import lib, rasp
from rasplab.rasp_compiler.compile import compile_rasp_to_model

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_the_exported_hist_loads_in_plain_transformer_lens_and_counts(tmp_path, capsys):
    import safetensors.torch
    import torch
    import transformer_lens as tl

    out = tmp_path / "tl"
    code, printed, _ = cli(
        capsys, "export", "lib:make_hist", "--to", "transformer-lens", "--vocab", "1 2 3",
        "--max-seq-len", "4", "--out", str(out), "--input", "1 3 1 2",
    )  # fmt: skip
    assert code == 0 and json.loads(printed) == ["BOS", 2, 1, 2, 1]
    cfg = json.loads((out / "config.json").read_text())
    cfg["dtype"] = getattr(torch, cfg["dtype"])
    bridge = tl.TransformerBridge.boot_native(tl.TransformerBridgeConfig(**cfg))
    bridge.load_state_dict(safetensors.torch.load_file(out / "model.safetensors"))
    # the same program compiled here gives the ids and reads the values of the logits
    compiled = compile_rasp_to_model(lib.make_hist(), {1, 2, 3}, 4)
    for tokens in itertools.product((1, 2, 3), repeat=4):
        ids = torch.tensor([compiled.encode(["BOS", *tokens])])
        with torch.no_grad():
            argmax = bridge(ids).argmax(-1)[0, 1:].tolist()
        got = [compiled.value(compiled.program, i) for i in argmax]
        assert got == rasp.evaluate(compiled.program, list(tokens)), tokens


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--vocab", "1 2", "--input", "1 4"], "not in the vocabulary"),
        (["--vocab", "1 2", "--layers", "2"], "not for RASP"),
        (["--vocab", "1 2", "--max-seq-len", "0"], "at least 1"),
    ],
)
def test_bad_input_writes_nothing(tmp_path, capsys, extra, message):
    out = tmp_path / "tl"
    code, printed, err = cli(
        capsys, "export", "lib:make_hist", "--to", "transformer-lens", "--out", str(out), *extra
    )
    assert code == 2 and printed == "" and message in err and err.count("\n") == 1
    assert not out.exists()
