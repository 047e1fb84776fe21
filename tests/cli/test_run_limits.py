"""`rasplab run` never prints a wrong answer with exit 0: inputs beyond a program's limit are
refused (with the limit), and `--inputs FILE` keeps one output per line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rasplab.cli import main
from rasplab.programs import get_program, program_names


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(
    "name, text",
    [
        ("majority", "a" * 129 + "b" * 130),
        ("parity_sum_mod_2", "1" * 129),
        ("parity_sum_mod_2", "1" * 1001),
    ],
)
def test_inputs_beyond_the_limit_are_refused_with_the_limit(capsys, name, text, compiled):
    args = ["run", name, "--input", text] + (["--compiled"] if compiled else [])
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "<= 128" in err


def test_inputs_at_the_limit_still_run(capsys):
    code, out, _ = cli(capsys, "run", "majority", "--input", "a" * 60 + "b" * 68, "--json")
    assert code == 0 and json.loads(out)["output"] == ["b"]


@pytest.mark.parametrize(
    "name", [n for n in program_names() if get_program(n).max_length is not None]
)
def test_one_past_the_limit_is_refused_or_right(capsys, name):
    """Every library program, one unit past its documented limit: exit 2, or the reference."""
    entry = get_program(name)
    rng = np.random.default_rng(0)
    try:
        text = entry.random_input(rng, entry.max_length + 1)
    except ValueError:  # the generator refuses the length (a RasplabError): a user may not;
        # one more word on an input at the limit (sort_unique: a repeated symbol, which is all
        # 151 symbols out of 150 can be; subleq: a 17th memory word) must be refused
        words = entry.random_input(rng, entry.max_length).split()
        code, out, err = cli(capsys, "run", name, "--input", " ".join(words + words[:1]))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        return
    code, out, err = cli(capsys, "run", name, "--input", text, "--json")
    assert code in (0, 2), err
    if code == 0:
        assert json.loads(out)["output"] == entry.reference(text)
    else:
        assert out == "" and len(err.strip().splitlines()) == 1


def test_inputs_file_keeps_blank_lines_and_drops_a_bom(capsys, tmp_path):
    path = tmp_path / "inputs.txt"
    path.write_bytes("\ufeff1 1 0\n\n1\n".encode())
    code, out, err = cli(capsys, "run", "parity_sum_mod_2", "--inputs", str(path), "--json")
    assert code == 0, err
    outputs = [json.loads(line)["output"] for line in out.splitlines()]
    assert outputs == [["0"], ["0"], ["1"]]


def test_a_blank_line_a_program_cannot_take_names_its_line(capsys, tmp_path):
    path = tmp_path / "inputs.txt"
    path.write_text("ab\n\nbb\n")
    code, out, err = cli(capsys, "run", "majority", "--inputs", str(path))
    assert code == 2 and out == "" and "input 2 ('')" in err
