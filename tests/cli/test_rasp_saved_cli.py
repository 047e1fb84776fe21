"""``rasplab run --model DIR`` runs a RASP model saved by ``rasplab compile ... --out DIR``
(or ``rasplab rasp compile --out``) as ``rasplab run lib:NAME --compiled`` runs the fresh
compile; a tampered folder, a program NAME or ALTA-only flags beside it are one line, exit 2."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main

ARGS = ["lib:make_sort_unique", "--vocab", "1 2 3", "--max-seq-len", "4"]


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture
def saved(capsys, tmp_path):
    folder = tmp_path / "sort"
    code, _, _ = cli(capsys, "compile", *ARGS, "--out", str(folder))
    assert code == 0
    return folder


def test_run_model_prints_what_the_fresh_compile_prints(capsys, saved, tmp_path):
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("3 1 2\nBOS 2 1\n1\n")
    code, out, err = cli(capsys, "run", "--model", str(saved), "--inputs", str(inputs))
    assert code == 0, err
    code, fresh, _ = cli(capsys, "run", *ARGS, "--inputs", str(inputs), "--compiled")
    assert code == 0 and out == fresh
    assert [json.loads(x) for x in out.splitlines()] == [
        ["BOS", 1, 2, 3],
        ["BOS", 1, 2],
        ["BOS", 1],
    ]
    code, one, _ = cli(capsys, "run", "--model", str(saved), "--input", "2 3")
    assert code == 0 and json.loads(one) == ["BOS", 2, 3]


def test_a_model_saved_by_rasp_compile_runs_too(capsys, tmp_path):
    folder = tmp_path / "hist"
    code, _, _ = cli(
        capsys, "rasp", "compile", "lib:make_hist", "--vocab", "a b", "--out", str(folder)
    )
    assert code == 0
    code, out, _ = cli(capsys, "run", "--model", str(folder), "--input", "a b a")
    assert code == 0 and json.loads(out) == ["BOS", 2, 1, 2]


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--input", "1 4"], "not in the vocabulary"),
        (["--input", "1 2 3 1 2"], "compiled for at most 4"),
        (["--input", "1", "--tokens", "1"], "not for RASP programs"),
        (["lib:make_sort_unique", "--input", "1"], "without a program NAME"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, saved, extra, message):
    code, out, err = cli(capsys, "run", "--model", str(saved), *extra)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_a_tampered_model_json_is_refused_in_one_line(capsys, saved):
    spec = json.loads((saved / "model.json").read_text())
    spec["max_seq_len"] = 9
    (saved / "model.json").write_text(json.dumps(spec))
    code, out, err = cli(capsys, "run", "--model", str(saved), "--input", "1 2")
    assert code == 2 and out == "" and "digest mismatch" in err
    assert len(err.strip().splitlines()) == 1
