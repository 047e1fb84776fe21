"""A user's own program through every command: run, compile (and save), run --model, verify,
minimal; plus the loader's one-line errors and verify for any Program."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from rasplab.cli import main
from rasplab.compiler.verify import verify
from rasplab.programs.loading import load_program, resolve_program

USER_FILE = textwrap.dedent(
    '''
    from rasplab.lang import input_var, program, v_relative, var

    def shift_right():
        """out[i] = tok[i-1] (0 at position 0): token ids 0..2."""
        def step(x):
            if x["first"] == 0:
                x["out"] = x["left"]
        return program(
            {"tok": input_var(3), "first": input_var(2, lambda t: 0), "out": var(3)},
            {"left": v_relative("tok", -1)},
            step, output="out", input_range=3, max_layers=1, name="shift_right",
            undefined="no_match",
        )

    SHIFT = shift_right()
    NOT_A_PROGRAM = 3

    def needs_an_argument(n):
        return shift_right()
    '''
)


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(USER_FILE)
    return str(path)


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_run_compile_save_and_run_the_saved_model(user_file, tmp_path, capsys):
    for ref in (f"{user_file}:SHIFT", f"{user_file}:shift_right"):
        code, out, _ = cli(capsys, "run", ref, "--input", "2 1 0 2", "--json")
        assert code == 0 and json.loads(out)["output"] == ["0", "2", "1", "0"]
    code, out, _ = cli(capsys, "run", f"{user_file}:SHIFT", "--tokens", "1 2", "--compiled")
    assert code == 0 and out.startswith("output: 0 1")
    model_dir = tmp_path / "model"
    code, out, err = cli(capsys, "compile", f"{user_file}:SHIFT", "--out", str(model_dir))
    assert code == 0 and "saved compiled model" in err
    code, out, _ = cli(capsys, "run", "--model", str(model_dir), "--tokens", "2 2 1", "--json")
    assert code == 0 and json.loads(out)["output"] == ["0", "2", "2"]


def test_verify_and_minimal_take_a_user_program(user_file, capsys):
    code, out, _ = cli(
        capsys, "verify", f"{user_file}:SHIFT", "--lengths", "0-4", "--samples", "500", "--json"
    )
    report = json.loads(out)
    assert code == 0 and report["total"] == 121 and report["agree"] == 121  # 3^0 + ... + 3^4
    code, out, _ = cli(
        capsys,
        "minimal",
        f"{user_file}:SHIFT",
        "--train-lengths",
        "1-2",
        "--test-lengths",
        "3-3",
        "--json",
    )
    assert code == 0 and json.loads(out)["test_accuracy"] == 1.0


@pytest.mark.parametrize(
    "suffix, message",
    [
        (":NOT_A_PROGRAM", "is int, not a Program"),
        (":missing", "defines no 'missing'; it defines the programs: SHIFT"),
        (":needs_an_argument", "cannot be called without arguments"),
        ("", "name the object in the file, as FILE.py:NAME"),
    ],
)
def test_loader_errors_are_one_line(user_file, capsys, suffix, message):
    code, out, err = cli(capsys, "run", user_file + suffix, "--tokens", "1")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_token_ids_are_checked(user_file, capsys):
    code, _, err = cli(capsys, "run", f"{user_file}:SHIFT", "--tokens", "1 7")
    assert code == 2 and "token id 7 is outside the input range [0, 3)" in err
    code, _, err = cli(capsys, "run", f"{user_file}:SHIFT", "--tokens", "1 x")
    assert code == 2 and "not a token id" in err


def test_verify_works_for_any_program(user_file):
    p = load_program(f"{user_file}:SHIFT")
    assert verify(p, "0-3", samples=1000).to_json() == {
        "total": 40,
        "agree": 40,
        "first_divergence": None,
    }
    sampled = verify(p, "5-6", samples=20, sampler=lambda rng, n: [2] * n)
    assert sampled.total == 20 and sampled.ok
    assert resolve_program(f"{user_file}:SHIFT").encode("0 1") == [0, 1]


def test_the_compiler_does_not_import_the_program_library():
    code = "import sys, rasplab.compiler, rasplab.compiler.verify; print('rasplab.programs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
