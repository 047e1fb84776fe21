"""`rasplab crasp programs | show | run | check` through the real entry point, errors included."""

from __future__ import annotations

import json
import textwrap

import pytest

from rasplab.cli import main
from rasplab.crasp import library


def cli(capsys, *args):
    """Run the CLI; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_programs_lists_name_class_and_task(capsys):
    code, out, _ = cli(capsys, "crasp", "programs")
    assert code == 0 and len(out.splitlines()) == len(library.names())
    assert out.splitlines()[2].split()[:3] == ["tomita4", "C-RASP[local]", "tomita4"]
    code, out, _ = cli(capsys, "crasp", "programs", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["name"]: r["class"] for r in rows}["aa_star"] == "C-RASP[periodic]"


def test_run_language_json_gives_membership_per_prefix_and_next_sets(capsys):
    code, out, _ = cli(capsys, "crasp", "run", "tomita2", "--input", "1 0 1", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["accept"] is False and rec["outputs"] == [True, False, True, False]
    assert rec["next_sets"] == [["1", "<eos>"], ["0"], ["1", "<eos>"], ["0"]]


def test_run_inputs_file_keeps_one_output_per_line_in_order(capsys, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("1 0\n\n1 1\n")
    code, out, _ = cli(capsys, "crasp", "run", "tomita2", "--inputs", str(path), "--json")
    assert code == 0
    assert [json.loads(x)["accept"] for x in out.splitlines()] == [True, True, False]


def test_run_algorithmic_outputs_are_next_tokens_and_trace_prints(capsys):
    code, out, _ = cli(capsys, "crasp", "run", "sort", "--input", "7 3 <sep> 3 7", "--json")
    assert code == 0 and json.loads(out)["outputs"] == [None, None, None, "3", "7", "<eos>"]
    code, out, _ = cli(capsys, "crasp", "run", "tomita1", "--input", "1 0", "--trace")
    assert code == 0 and "> live" in out and "<bos>" in out


def test_show_prints_the_listing(capsys):
    code, out, _ = cli(capsys, "crasp", "show", "majority_ab")
    assert code == 0 and "M(i)" in out and "C_b(i) <= C_a(i)" in out


USER = textwrap.dedent(
    """
    from rasplab.crasp import Q, count, crasp_program

    def no_three_zeros():
        # wrong for tomita4: counts zeros anywhere, not consecutive ones
        return crasp_program("mine", count(Q("0")) < 3, alphabet="01")

    def tomita1():
        return crasp_program("mine", count(Q("0")) == 0, alphabet="01")

    BROKEN = 3
    """
)


def test_check_a_users_program_from_a_file(capsys, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(USER)
    code, out, _ = cli(capsys, "crasp", "check", "tomita1", f"{path}:tomita1", "--samples", "50",
                       "--lengths", "1-40", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["agree"] == json.loads(out)["total"] == 100
    code, out, _ = cli(capsys, "crasp", "check", "tomita4", f"{path}:no_three_zeros",
                       "--samples", "50", "--lengths", "1-40")  # fmt: skip
    assert code == 1 and "first disagreement" in out and "input '" in out


def test_check_a_library_program_against_another_task_fails(capsys):
    code, out, _ = cli(capsys, "crasp", "check", "tomita4", "tomita7", "--samples", "30")
    assert code == 1 and "strings agree" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "nope", "--input", "a"], "unknown C-RASP program 'nope'"),
        (["run", "tomita1", "--input", "1 2"], "symbol '2' is not in the alphabet"),
        (["run", "tomita1", "--input", "<bos> 1"], "<bos> is added by the interpreter"),
        (["run", "tomita1"], "give exactly one of --input TEXT and --inputs FILE"),
        (["run", "tomita1", "--inputs", "/no/such/file"], "cannot read inputs file"),
        (["check", "nope", "tomita1"], "unknown task 'nope'"),
        (["check", "tomita1", "tomita1", "--lengths", "5-1"], "bin 5-1 is empty"),
        (["check", "tomita1", "tomita1", "--samples", "0"], "--samples must be in"),
        (["check", "sort", "tomita1", "--samples", "5"], "predicts one token per scored position"),
        (["check", "tomita1", "missing.py:prog"], "cannot read program file 'missing.py'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = cli(capsys, "crasp", *args)
    assert code == 2 and out == ""
    assert err.startswith("rasplab: error: ") and message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "source, message",
    [
        ("from rasplab.crasp import Q, count, crasp_program\nP = lambda: crasp_program('x', Q('0') & count(Q('1')), '01')\n",
         "P: AND expects Booleans"),
        ("from rasplab.crasp import Q, count, offset, crasp_program\n"
         "P = lambda: crasp_program('x', count(Q('1'), ~offset(0)) > 1, '01')\n", "is not local"),
        ("from rasplab.crasp import Q, count, crasp_program\nP = lambda: crasp_program('x', count(Q('z')) > 1, '01')\n",
         "reads symbol 'z', which is not in the alphabet"),
        ("P = 3\n", "is int, not a C-RASP Program"),
        ("x = (\n", "SyntaxError"),
        ("Q = 1\n", "defines no 'P'"),
    ],
)  # fmt: skip
def test_malformed_user_programs_exit_2(capsys, tmp_path, source, message):
    path = tmp_path / "user.py"
    path.write_text(source)
    code, out, err = cli(capsys, "crasp", "run", f"{path}:P", "--input", "1")
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_cycles_in_a_json_program_are_named(capsys, tmp_path):
    path = tmp_path / "cycle.json"
    ops = [{"name": "x", "kind": "not", "args": ["y"]}, {"name": "y", "kind": "not", "args": ["x"]}]
    path.write_text(json.dumps({"name": "c", "alphabet": ["a"], "ops": ops}))
    code, _, err = cli(capsys, "crasp", "run", str(path), "--input", "a")
    assert code == 2 and "operations form a cycle: x -> y -> x" in err
