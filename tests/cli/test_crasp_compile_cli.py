"""`rasplab crasp compile | verify` through the real entry point: outputs, exit codes, bad input."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from rasplab.cli import main
from rasplab.compiler.modelspec import spec_digest


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_compile_json_has_the_contract_keys(capsys):
    code, out, _ = cli(
        capsys, "crasp", "compile", "binary_majority", "--max-length", "64", "--json"
    )
    rec = json.loads(out)
    assert code == 0
    keys = {"layers", "heads", "width", "parameters", "max_length", "compile_seconds", "dtype"}
    assert keys <= set(rec)
    assert rec["max_length"] == 64 and rec["dtype"] == "float32" and rec["layers"] == 2


def test_compile_out_saves_a_model_that_verify_accepts(capsys, tmp_path):
    out = tmp_path / "model"
    code, _, err = cli(
        capsys, "crasp", "compile", "tomita4", "--max-length", "30", "--out", str(out)
    )
    assert code == 0 and "saved" in err
    assert sorted(p.name for p in out.iterdir()) == ["model.json", "model.safetensors"]
    args = ("--exhaustive-up-to", "6", "--samples", "20", "--json")
    code, out_text, _ = cli(capsys, "crasp", "verify", "tomita4", "--model", str(out), *args)
    assert code == 0 and json.loads(out_text)["first_divergence"] is None


def test_verify_json_and_exit_1_on_a_corrupted_weight(capsys, tmp_path):
    args = ("--exhaustive-up-to", "5", "--samples", "20", "--json")
    code, out, _ = cli(capsys, "crasp", "verify", "tomita2", "--max-length", "24", *args)
    rec = json.loads(out)
    assert code == 0 and rec["total"] == rec["agree"] == 63 + 20
    assert rec["first_divergence"] is None
    d = tmp_path / "m"
    assert cli(capsys, "crasp", "compile", "tomita2", "--max-length", "24", "--out", str(d))[0] == 0
    weights = load_file(str(d / "model.safetensors"))
    name = "l0_mlp_W_1.values"
    weights[name] = weights[name].clone()
    weights[name][0] = -weights[name][0]
    save_file(weights, str(d / "model.safetensors"))
    code, out, err = cli(capsys, "crasp", "verify", "tomita2", "--model", str(d), *args)
    assert code == 2 and "do not belong together" in err  # the digest catches the edit
    spec = json.loads((d / "model.json").read_text())  # a consistent model with a wrong weight
    spec["digest"] = spec_digest(spec, d / "model.safetensors")
    (d / "model.json").write_text(json.dumps(spec))
    code, out, _ = cli(capsys, "crasp", "verify", "tomita2", "--model", str(d), *args)
    rec = json.loads(out)
    assert code == 1 and rec["agree"] < rec["total"]
    assert {"input", "position", "operation", "expected", "got"} == set(rec["first_divergence"])


@pytest.mark.parametrize(
    "args, message",
    [
        (("compile", "no_such_program"), "unknown C-RASP program"),
        (("compile", "tomita2", "--max-length", "100000000"), "beyond what float64 can certify"),
        (("compile", "tomita2", "--max-length", "0"), "positive integer"),
        (("verify", "tomita2", "--max-length", "10", "--lengths", "5-20"), "beyond the maximum"),
        (("verify", "tomita2", "--lengths", "9-3"), "empty or negative"),
        (("verify", "tomita2", "--lengths", "abc"), "malformed bin"),
        (("verify", "sort", "--exhaustive-up-to", "3"), "more than 1,000,000 strings"),
        (("verify", "tomita2", "--model", "/nonexistent/dir"), "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = cli(capsys, "crasp", *args)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_malformed_program_file_and_nothing_written(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "alphabet": ["a"], "ops": [{"name": "c"}]}))
    out = tmp_path / "out"
    code, _, err = cli(capsys, "crasp", "compile", str(bad), "--out", str(out))
    assert code == 2 and "bad.json" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(
        capsys, "crasp", "compile", "tomita2", "--max-length", "100000000", "--out", str(out)
    )
    assert code == 2 and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_loaded_weights_are_plain_tensors(tmp_path, capsys):
    d = tmp_path / "m"
    assert cli(capsys, "crasp", "compile", "majority_ab", "--out", str(d))[0] == 0
    weights = load_file(str(d / "model.safetensors"))
    assert all(isinstance(t, torch.Tensor) for t in weights.values())
    spec = json.loads((d / "model.json").read_text())
    assert spec["program"] == "majority_ab" and spec["max_length"] == 512
