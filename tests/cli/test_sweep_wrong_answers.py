"""Issue #39's bad-input sweep, item 1: no wrong answer with exit 0. Token ids beyond a
program's length limit are refused as natural inputs are (``run --tokens``, also
``--compiled``), and ``explore`` refuses an input ``run`` refuses (no page written)."""

from __future__ import annotations

import pytest

from rasplab.cli import main


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("compiled", [(), ("--compiled",)])
@pytest.mark.parametrize(
    "name, tokens, message",
    [
        ("parity_sum_mod_2", "2 " + "1 " * 129, "take at most 129 tokens; these token ids are 130"),
        ("majority", "1 " * 300, "these token ids are 300"),
    ],
)
def test_run_tokens_beyond_the_limit_are_refused(capsys, compiled, name, tokens, message):
    code, out, err = cli(capsys, "run", name, "--tokens", tokens, *compiled)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_run_tokens_within_the_limit_still_run(capsys):
    code, out, _ = cli(capsys, "run", "parity_sum_mod_2", "--tokens", "2 " + "1 " * 127)
    assert code == 0 and out.startswith("output: 1")


def test_explore_refuses_an_input_beyond_the_limit(capsys, tmp_path):
    page = tmp_path / "page.html"
    code, out, err = cli(
        capsys, "explore", "parity_sum_mod_2", "--input", "1 " * 129, "--out", str(page)
    )
    assert code == 2 and "handles lengths <= 128 (bits); this input has 129" in err
    assert not page.exists()


USER = """
from rasplab.lang import input_var, program, v_relative, var
def step(x):
    if x["tok"] != 0:
        x["out"] = x["left"]
P = program({"tok": input_var(3), "out": var(3)}, {"left": v_relative("tok", -1)}, step, "out",
            3, max_layers=1)
def always(x):
    x["out"] = x["left"]
NOWHERE = program({"tok": input_var(3), "out": var(3)}, {"left": v_relative("tok", -1)}, always,
                  "out", 3, max_layers=1)
"""


def test_verify_reports_inputs_the_program_is_undefined_on_apart(capsys, tmp_path):
    (tmp_path / "u.py").write_text(USER)
    ref = f"{tmp_path / 'u.py'}:P"
    code, out, err = cli(capsys, "verify", ref, "--lengths", "1-3", "--samples", "100")
    # 39 inputs: the 13 starting with token 0 agree; the 26 others read 'left' at position 0
    assert code == 0 and out == "13 of 13 inputs agree on every variable at every layer\n"
    assert "the program is undefined on 26 input(s), not counted" in err
    assert "the program is undefined on this input: '1': rule" in err and err.count("\n") == 1
    nowhere = f"{tmp_path / 'u.py'}:NOWHERE"  # reads left of position 0 on every input
    code, out, err = cli(capsys, "verify", nowhere, "--lengths", "1-3", "--samples", "5")
    assert code == 1 and out.startswith("0 of 0 inputs agree")  # nothing was compared
    assert "the program is undefined on 5 input(s)" in err
