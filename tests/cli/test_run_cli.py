"""`rasplab programs` and `rasplab run`: outputs, batches, traces and one-line errors."""

from __future__ import annotations

import json

import pytest

from rasplab.cli import main
from rasplab.lang import input_var, program, v_relative, var
from rasplab.lang.trace import Trace
from rasplab.programs import base
from rasplab.programs.base import LibraryProgram, parse_tokens

START = 2


def _build(max_layers: int = 64):
    """Sequential parity with relative heads: position i becomes done at layer i."""
    variables = {
        "parity": input_var(2, lambda t: t % 2),
        "done": input_var(2, lambda t: int(t == START)),
    }
    heads = {"parity_left": v_relative("parity", -1), "done_left": v_relative("done", -1)}

    def mlp(z):
        if not z["done"] and z["done_left"]:
            z["parity"] = z["parity_left"] ^ z["parity"]
            z["done"] = 1

    return program(
        {**variables, "spare": var(1)},
        heads,
        mlp,
        output="parity",
        input_range=3,
        halt=("done", 1),
        max_layers=max_layers,
        name="tiny_parity",
    )


def _encode(text: str) -> list[int]:
    return [START] + [int(s) for s in parse_tokens(text, ["0", "1"], "tiny parity input")]


def _reference(text: str) -> list[str]:
    return [str(sum(_encode(text)[1:]) % 2)]


TINY = LibraryProgram(
    name="tiny_parity",
    description="parity of bits (test program)",
    build=_build,
    encode=_encode,
    decode=lambda ids, out: [str(out[-1])],
    reference=_reference,
    random_input=lambda rng, n: " ".join(str(b) for b in rng.integers(0, 2, n)),
)


@pytest.fixture
def tiny():
    """Register the tiny program for one test, then remove it from the registry."""
    base.program_names()  # load the real library first so that it cannot overwrite ours
    base._LIBRARY[TINY.name] = TINY
    yield TINY
    del base._LIBRARY[TINY.name]


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_programs_lists_name_and_description(tiny, capsys):
    code, out, err = cli(capsys, "programs")
    assert code == 0
    lines = out.splitlines()
    assert any(
        line.split(None, 1) == ["tiny_parity", "parity of bits (test program)"] for line in lines
    )
    assert len(lines) == len(base.program_names())


def test_run_json(tiny, capsys):
    code, out, _ = cli(capsys, "run", "tiny_parity", "--input", "1 0 1 1", "--json")
    assert code == 0
    assert json.loads(out) == {"output": ["1"], "layers": 4}
    code, out, _ = cli(capsys, "run", "tiny_parity", "--input", "0110", "--json")
    assert json.loads(out) == {"output": ["0"], "layers": 4}


def test_run_inputs_file_is_one_batch_in_order(tiny, capsys, tmp_path):
    texts = ["1", "1 1 1", "0 0 0 0 0 1", "", "1 0"]
    path = tmp_path / "inputs.txt"
    path.write_text("\n".join(texts) + "\n")
    code, out, _ = cli(capsys, "run", "tiny_parity", "--inputs", str(path), "--json")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert records == [
        {"output": _reference(t), "layers": max(1, len(t.split()))} for t in texts
    ]  # the blank line is an empty input: output n still answers line n


def test_run_text_and_trace(tiny, capsys):
    code, out, _ = cli(capsys, "run", "tiny_parity", "--input", "1 1", "--trace")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "output: 0  (layers: 2)"
    assert lines[1].split() == ["position", "0", "1", "2"]
    assert "layer 2: after MLP" in lines
    code, out, _ = cli(capsys, "run", "tiny_parity", "--input", "1 1", "--trace", "--json")
    record = json.loads(out)
    trace = Trace.from_json(record["trace"])
    assert record["layers"] == len(trace.layers) == 2
    assert trace.layers[-1].after_mlp["parity"] == [0, 1, 0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no_such_program", "--input", "1"], "unknown program 'no_such_program'"),
        (["run", "tiny_parity", "--input", "1 2"], "outside its alphabet"),
        (
            ["run", "tiny_parity", "--input", "1 1 1", "--max-layers", "2"],
            "did not halt within 2 layers",
        ),
        (["run", "tiny_parity", "--inputs", "/no/such/file.txt"], "cannot read inputs file"),
        (["run", "tiny_parity"], "exactly one of --input"),
        (["run", "--input", "1"], "give a program NAME"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tiny, capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_bad_line_in_inputs_file_names_the_input(tiny, capsys, tmp_path):
    path = tmp_path / "inputs.txt"
    path.write_text("1 0\n1 x\n")
    code, out, err = cli(capsys, "run", "tiny_parity", "--inputs", str(path), "--json")
    assert code == 2 and out == "" and "input 2 ('1 x')" in err


@pytest.mark.parametrize(
    "name", ["parity_sequential_absolute", "parity_sequential_relative", "parity_sum_mod_2"]
)
def test_library_parity_programs_answer_correctly(name, capsys):
    if name not in base.program_names():
        pytest.skip(f"{name} is not in the library yet")
    code, out, _ = cli(capsys, "run", name, "--input", "1 0 1 1 1", "--json")
    assert code == 0 and json.loads(out)["output"] == ["0"]


def test_help_lists_every_command_with_a_whole_summary(capsys):
    """`rasplab --help` shows each spec command with a complete one-line summary (the minimal
    command's used to be cut at the abbreviation 'w.r.t.')."""
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    summaries = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if line.startswith("  ") and len(parts) == 2:
            summaries[parts[0]] = parts[1]
    commands = ["programs", "run", "minimal", "compile", "verify", "tasks", "data"]
    commands += ["train", "sweep", "report"]
    assert set(commands) <= set(summaries)
    assert summaries["minimal"] == "Minimal program for training inputs, scored on test inputs."
    code, out, _ = cli(capsys, "run", "--help")
    assert code == 0 and "--inputs FILE" in out and "--model DIR" in out
