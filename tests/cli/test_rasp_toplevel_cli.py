"""The top-level ``rasplab run|compile|verify`` take RASP programs (``lib:NAME``, ``FILE.py:NAME``
holding an SOp) and give what ``rasplab rasp run|compile|verify`` give; ``--vocab`` and
``--max-seq-len`` are refused for ALTA programs; bad input is one line and exit 2."""

from __future__ import annotations

import json
import textwrap

import pytest

from rasplab.cli import main


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_run_make_length_prints_the_length_at_every_position_bos_first(capsys):
    args = ["lib:make_length", "--vocab", "a b c", "--max-seq-len", "5"]
    code, out, _ = cli(capsys, "run", *args, "--input", "a b c")
    assert code == 0 and json.loads(out) == ["BOS", 3, 3, 3]
    code, compiled, _ = cli(capsys, "run", *args, "--input", "BOS a b c", "--compiled")
    assert code == 0 and json.loads(compiled) == ["BOS", 3, 3, 3]
    code, grouped, _ = cli(capsys, "rasp", "run", *args, "--input", "BOS a b c")
    assert code == 0 and grouped == out


def test_run_a_file_sop_and_a_function_returning_one(capsys, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        textwrap.dedent(
            """
            from rasplab.rasp import rasp
            doubled = rasp.numerical(rasp.Map(lambda x: 2 * x, rasp.tokens))
            def smaller():
                return rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT))
            """
        )
    )
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("3 1 2\n2 2\n")
    code, out, _ = cli(
        capsys, "run", f"{path}:smaller", "--vocab", "1 2 3", "--inputs", str(inputs), "--compiled"
    )
    assert code == 0 and [json.loads(x) for x in out.splitlines()] == [
        ["BOS", 2, 0, 1],
        ["BOS", 0, 0],
    ]
    code, out, _ = cli(capsys, "run", f"{path}:doubled", "--vocab", "1 2 3", "--input", "3 1")
    assert code == 0 and json.loads(out) == ["BOS", 6, 2]


def test_compile_prints_the_sizes_rasp_compile_prints_and_saves(capsys, tmp_path):
    args = ["lib:make_hist", "--vocab", "1 2 3", "--max-seq-len", "5"]
    code, out, _ = cli(capsys, "compile", *args, "--out", str(tmp_path / "hist"))
    assert code == 0 and (tmp_path / "hist" / "model.safetensors").exists()
    sizes = json.loads(out)
    code, grouped, _ = cli(capsys, "rasp", "compile", *args)
    assert code == 0 and sizes.pop("saved") == str(tmp_path / "hist")
    assert sizes == json.loads(grouped) and sizes["layers"] == 1


def test_verify_exits_0_and_counts_every_input(capsys):
    code, out, _ = cli(capsys, "verify", "lib:make_hist", "--vocab", "1 2 3", "--max-seq-len", "4")
    report = json.loads(out)
    # every input of lengths 1..4 over 3 tokens: 3 + 9 + 27 + 81
    assert code == 0 and report["inputs"] == 120 and report["disagreeing_inputs"] == 0
    assert report["values_compared"] > 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "lib:make_srt", "--vocab", "1", "--input", "1"], "unknown RASP library"),
        (["run", "lib:make_hist", "--vocab", "1 2", "--input", "1 3"], "not in the vocabulary"),
        (["run", "lib:make_hist", "--input", "1 2"], "needs --vocab"),
        (["compile", "lib:make_hist", "--vocab", "1", "--max-seq-len", "0"], "at least 1"),
        (["verify", "lib:make_hist", "--vocab", "1", "--max-seq-len", "0"], "at least 1"),
        (["compile", "lib:make_hist", "--vocab", "1", "--max-length", "4"], "not for RASP"),
        (["verify", "lib:make_hist", "--vocab", "1", "--lengths", "1-2"], "not for RASP"),
        (["run", "parity_sequential_relative", "--vocab", "0 1", "--input", "1"], "only for RASP"),
        (["compile", "parity_sequential_relative", "--max-seq-len", "4"], "only for RASP"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(capsys, tmp_path, args, message):
    out_dir = tmp_path / "o"
    extra = ["--out", str(out_dir)] if args[0] == "compile" else []
    code, out, err = cli(capsys, *args, *extra)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert not out_dir.exists()


def test_an_alta_program_file_still_runs(capsys, tmp_path):
    path = tmp_path / "alta.py"
    path.write_text(
        textwrap.dedent(
            """
            from rasplab.lang import input_var, program
            def prog():
                return program({"tok": input_var(4)}, {}, [], "tok", 4, max_layers=1)
            """
        )
    )
    code, out, _ = cli(capsys, "run", f"{path}:prog", "--tokens", "3 1 0")
    assert code == 0 and out.startswith("output: 3 1 0")
