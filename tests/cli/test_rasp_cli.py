"""`rasplab rasp programs | run | compile | verify` through the real entry point, errors included."""

from __future__ import annotations

import json
import textwrap

import pytest

from rasplab.cli import main
from rasplab.rasp import lib


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_programs_lists_every_lib_program(capsys):
    code, out, _ = cli(capsys, "rasp", "programs", "--json")
    names = [json.loads(line)["name"] for line in out.splitlines()]
    assert code == 0 and sorted(names) == sorted(f"lib:{n}" for n in lib.PROGRAMS)


def test_run_evaluator_and_compiled_agree(capsys):
    args = ["rasp", "run", "lib:make_sort", "--vocab", "1 2 3", "--max-seq-len", "5"]
    code, out, _ = cli(capsys, *args, "--input", "BOS 3 1 2 1")
    assert code == 0 and json.loads(out) == ["BOS", 1, 1, 2, 3]
    code, out, _ = cli(capsys, *args, "--input", "BOS 3 1 2 1", "--compiled")
    assert code == 0 and json.loads(out) == ["BOS", 1, 1, 2, 3]


def test_user_file_program_compiles_and_verifies(capsys, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        textwrap.dedent(
            """
            from rasplab.rasp import rasp
            def smaller():
                return rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT))
            """
        )
    )
    code, out, _ = cli(capsys, "rasp", "compile", f"{path}:smaller", "--vocab", "a b c")
    assert code == 0 and json.loads(out)["layers"] == 1
    code, out, _ = cli(
        capsys, "rasp", "verify", f"{path}:smaller", "--vocab", "a b c", "--max-seq-len", "5"
    )
    report = json.loads(out)
    assert code == 0 and report["disagreeing_inputs"] == 0 and report["inputs"] == 363


def test_compile_out_saves_weights(capsys, tmp_path):
    out_dir = tmp_path / "hist"
    code, out, _ = cli(
        capsys, "rasp", "compile", "lib:make_hist", "--vocab", "1 2", "--out", str(out_dir)
    )
    assert code == 0 and (out_dir / "model.safetensors").exists()
    spec = json.loads((out_dir / "model.json").read_text())
    assert spec["sizes"]["residual_width"] == len(spec["residual_labels"])


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "lib:make_srt", "--vocab", "1", "--input", "BOS 1"], "unknown RASP library"),
        (["run", "lib:make_hist", "--vocab", "1 2", "--input", "1 2"], "must start with the BOS"),
        (["run", "lib:make_hist", "--vocab", "1 2", "--input", "BOS 3"], "not in the vocabulary"),
        (["compile", "lib:make_hist", "--vocab", "1", "--max-seq-len", "0"], "at least 1"),
        (["compile", "lib:make_length", "--vocab", "1", "--causal"], "causal=True"),
        (["compile", "nofile.py:x", "--vocab", "1"], "cannot read program file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    code, out, err = cli(
        capsys, "rasp", *args, *(["--out", str(tmp_path / "o")] if "--out" in args else [])
    )
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
