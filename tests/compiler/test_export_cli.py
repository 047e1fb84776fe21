"""Saving/loading compiled models and the `compile`, `verify` and `run --compiled/--model` commands."""

from __future__ import annotations

import json

import pytest
import torch

from rasplab.cli import main
from rasplab.compiler import compile_program, run_compiled
from rasplab.compiler.export import load_compiled, save_compiled
from rasplab.errors import RasplabError
from rasplab.programs import get_program


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("name", ["addition", "parity_sum_mod_2", "scan"])
def test_saved_model_loads_and_runs_identically(name, tmp_path):
    entry = get_program(name)
    model = compile_program(entry.program())
    save_compiled(model, tmp_path / "m", entry=name)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["model.json", "model.safetensors"]
    loaded = load_compiled(tmp_path / "m")
    assert loaded.spec["entry"] == name
    rng = torch.Generator().manual_seed(0)
    import numpy as np

    texts = [
        entry.random_input(np.random.default_rng(int(torch.randint(0, 99, (1,), generator=rng))), n)
        for n in (1, 2, 5)
    ]
    batch = [entry.encode(t) for t in texts]
    for dtype in model.spec["exact_dtypes"]:
        a = run_compiled(model, batch, dtype=getattr(torch, dtype), trace=True)
        b = run_compiled(loaded, batch, dtype=getattr(torch, dtype), trace=True)
        assert (a.outputs, a.layers) == (b.outputs, b.layers)
        assert all(x.first_difference(y, tol=0.0) is None for x, y in zip(a.traces, b.traces))


def test_corrupt_or_missing_model_is_one_clear_error(tmp_path):
    with pytest.raises(RasplabError, match="does not exist"):
        load_compiled(tmp_path / "nothing")
    (tmp_path / "weights.safetensors").write_bytes(b"x")
    with pytest.raises(RasplabError, match="is a file; a compiled model is a directory"):
        load_compiled(tmp_path / "weights.safetensors")
    (tmp_path / "weights.safetensors").unlink()
    model = compile_program(get_program("parity_sequential_relative").program())
    d = save_compiled(model, tmp_path / "m", entry="parity_sequential_relative")
    spec = json.loads((d / "model.json").read_text())
    (d / "model.json").write_text(json.dumps({**spec, "input_range": 7}))
    with pytest.raises(RasplabError, match="do not belong together"):  # the digest
        load_compiled(d)
    undigested = {k: v for k, v in spec.items() if k != "digest"}  # as saved before digests
    (d / "model.json").write_text(json.dumps(undigested))
    with pytest.raises(RasplabError, match="has no digest .* compile the model again"):
        load_compiled(d)
    (d / "model.json").write_text(json.dumps({**undigested, "causal": "yes"}))
    with pytest.raises(RasplabError, match="'causal' must be true or false"):  # types first
        load_compiled(d)
    (d / "model.json").write_text("{not json")
    with pytest.raises(RasplabError, match="cannot read the model"):
        load_compiled(d)
    (d / "model.json").write_text(json.dumps(spec))
    (d / "model.safetensors").write_bytes(b"\x00garbage")
    with pytest.raises(RasplabError, match="cannot read the model"):
        load_compiled(d)
    (d / "model.safetensors").unlink()
    with pytest.raises(RasplabError, match="lacks model.safetensors"):
        load_compiled(d)


def test_compile_command_prints_sizes_and_saves(capsys, tmp_path):
    code, out, _ = cli(
        capsys, "compile", "parity_sequential_relative", "--json", "--out", str(tmp_path / "m")
    )
    assert code == 0
    report = json.loads(out)
    assert {
        "residual_width",
        "mlp_widths",
        "rules",
        "layers",
        "parameters",
        "compile_seconds",
    } <= set(report)
    assert (report["residual_width"], report["rules"], report["mlp_widths"]) == (12, 7, [13, 11, 9])
    code, out, _ = cli(
        capsys, "run", "--model", str(tmp_path / "m"), "--input", "1 0 1 1", "--json"
    )
    assert code == 0 and json.loads(out) == {"output": ["1"], "layers": 4}


def test_compile_minimal_program(capsys):
    code, out, _ = cli(
        capsys, "compile", "parity_sequential_relative", "--minimal-lengths", "0-4", "--json"
    )
    assert code == 0 and json.loads(out)["rules"] == 7


def test_verify_command(capsys):
    code, out, _ = cli(
        capsys,
        "verify",
        "parity_sequential_relative",
        "--lengths",
        "0-6",
        "--samples",
        "10",
        "--exhaustive-up-to",
        "3",
        "--json",
    )
    assert code == 0
    # 10 random inputs of 0-6 bits, then all 1 + 2 + 4 + 8 inputs of up to 3 bits
    assert json.loads(out) == {"total": 25, "agree": 25, "first_divergence": None}


def test_verify_exits_1_on_disagreement(capsys, monkeypatch):
    import rasplab.compiler.verify as verify

    real = verify.run_compiled

    def broken(model, batch, **kw):
        run = real(model, batch, **kw)
        run.traces[0].layers[0].after_mlp["parity"][0] = (
            1 - run.traces[0].layers[0].after_mlp["parity"][0]
        )
        return run

    monkeypatch.setattr(verify, "run_compiled", broken)
    code, out, _ = cli(
        capsys,
        "verify",
        "parity_sequential_relative",
        "--lengths",
        "2-2",
        "--samples",
        "4",
        "--json",
    )
    assert code == 1
    report = json.loads(out)
    assert report["agree"] == report["total"] - 1
    assert (
        report["first_divergence"]["variable"] == "parity"
        and report["first_divergence"]["layer"] == 1
    )
    args = ("verify", "parity_sequential_relative", "--lengths", "2-2", "--samples", "4")
    code, text, _ = cli(capsys, *args)
    lines = text.splitlines()
    assert code == 1 and lines[0].startswith(f"{report['agree']} of {report['total']} inputs agree")
    assert lines[1] == f"first divergence: {json.dumps(report['first_divergence'])}"


def test_run_compiled_matches_the_interpreter(capsys, tmp_path):
    path = tmp_path / "inputs.txt"
    path.write_text("12+34\n999+1\n0+0\n")
    _, interpreted, _ = cli(capsys, "run", "addition", "--inputs", str(path), "--json")
    code, compiled, _ = cli(
        capsys, "run", "addition", "--compiled", "--inputs", str(path), "--json"
    )
    assert code == 0 and compiled == interpreted
    code, out, _ = cli(capsys, "run", "addition", "--compiled", "--input", "12+34", "--trace")
    assert code == 0 and "layer 1: after attention" in out


def test_run_model_errors_are_one_line(capsys, tmp_path):
    code, out, err = cli(capsys, "run", "--model", str(tmp_path / "missing"), "--input", "1")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "model.json").write_text("[]")
    code, _, err = cli(capsys, "run", "--model", str(tmp_path / "bad"), "--input", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "compile", "no_such_program")
    assert code == 2 and "unknown program" in err


def test_failed_save_leaves_no_folder_behind(capsys, tmp_path, monkeypatch):
    """A write error (safetensors reports I/O errors as SafetensorError) is one line, exit 2,
    and the folders the save created are removed again."""
    from safetensors import SafetensorError

    def broken(*args, **kwargs):
        raise SafetensorError("Error while serializing: I/O error: No space left on device")

    monkeypatch.setattr("rasplab.compiler.export.save_file", broken)
    out_dir = tmp_path / "new" / "deeper" / "model"
    code, out, err = cli(capsys, "compile", "parity_sum_mod_2", "--out", str(out_dir), "--json")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "cannot write the model" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--exhaustive-up-to", "40"], "at most"),
        (["--exhaustive-up-to", "-1"], "non-negative"),
    ],
)
def test_verify_refuses_bad_exhaustive_bounds(capsys, extra, words):
    """Too many inputs to enumerate (2**41 here) is refused up front instead of exhausting memory."""
    code, out, err = cli(
        capsys, "verify", "parity_sum_mod_2", "--lengths", "1-3", "--samples", "2", *extra
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err


def test_compile_minimal_samples_zero_is_refused(capsys, tmp_path):
    """--samples 0 used to fall back to the default silently."""
    out_dir = tmp_path / "m"
    code, out, err = cli(
        capsys,
        "compile",
        "parity_sum_mod_2",
        "--minimal-lengths",
        "1-3",
        "--samples",
        "0",
        "--out",
        str(out_dir),
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "samples" in err and not out_dir.exists()
