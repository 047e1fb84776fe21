"""Issue #39's bad-input sweep, item 9: a user file that calls ``sys.exit(0)`` while being
imported (it ended rasplab with exit 0 and no output) and a C-RASP program given to an ALTA
command ("is Program, not a Program") each get one line naming the cause, exit 2; item 5:
``compile --max-length`` beyond the bins' limit is refused at once."""

from __future__ import annotations

import pytest

from rasplab.cli import main


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_a_user_file_that_exits_is_one_line(tmp_path, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(0)\n")
    code, out, err = cli(capsys, "run", f"{path}:P", "--tokens", "1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "the file called sys.exit(0) while being imported" in err


def test_a_crasp_program_in_an_alta_command_says_which_command_takes_it(tmp_path, capsys):
    path = tmp_path / "c.py"
    path.write_text('from rasplab.crasp.library import program\nP = program("majority")\n')
    code, out, err = cli(capsys, "run", f"{path}:P", "--tokens", "1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "is a C-RASP program (CraspProgram); run it with `rasplab crasp run" in err


def test_compile_refuses_a_max_length_beyond_the_bins_limit(capsys):
    # item 5: 10^9 ran for minutes (the tables grow linearly with it)
    code, out, err = cli(capsys, "compile", "parity_sum_mod_2", "--max-length", "1000000000")
    assert code == 2 and out == "" and "beyond the longest length rasplab handles" in err


@pytest.mark.parametrize(
    "setting, message",
    [
        ("noise_std=.nan", "trace.noise_std must be a finite number; got nan"),
        ("learning_rate=1e400", "trace.learning_rate must be a finite number"),
    ],
)
def test_trace_supervise_refuses_non_finite_numbers(capsys, tmp_path, setting, message):
    # item 2: these exited 0 with NaN in the JSON
    out = tmp_path / "ts"
    code, stdout, err = cli(
        capsys, "trace-supervise", "parity_sequential_relative", "--set", setting, "--out", str(out)
    )
    assert code == 2 and stdout == "" and message in err and not out.exists()


def test_an_empty_trace_config_is_refused(capsys, tmp_path):
    # item 8: it silently meant the defaults
    config = tmp_path / "empty.yaml"
    config.write_text("")
    code, _, err = cli(
        capsys, "trace-supervise", "parity_sequential_relative", "--config", str(config)
    )
    assert code == 2 and "is empty; give key: value lines" in err


def test_repeated_and_ignored_task_options_are_refused(capsys):
    # item 8: the last of a repeated -o silently won; split_seed was accepted and ignored
    code, out, err = cli(
        capsys, "data", "scan", "-o", "split=mcd1", "-o", "split=length", "--split", "train"
    )
    assert code == 2 and out == "" and "task option 'split' is given twice" in err
    code, out, err = cli(capsys, "minimal", "scan", "-o", "split=add_jump", "-o", "split_seed=3")
    assert code == 2 and out == "" and "split_seed applies to the simple split only" in err


def test_ctrl_c_in_a_command_says_interrupted(capsys):
    # item 9: typer turns KeyboardInterrupt into Exit(130), which click returns: exit 130, silent
    import typer

    from rasplab.cli.errors import run_app

    app = typer.Typer()

    @app.command()
    def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as done:
        run_app(app, [])
    assert done.value.code == 130 and "rasplab: interrupted" in capsys.readouterr().err


def test_compile_out_says_which_length_it_chose(capsys, tmp_path):
    # issue #39: a saved model of a program with position variables took 512 positions, which
    # run --compiled (compiling for each batch) did not show; the note says so, and how to change it
    program = tmp_path / "pos.py"
    program.write_text(
        "from rasplab.lang import input_var, position_var, program, var\n"
        "def step(x):\n"
        "    if x['first'] == 1:\n"
        "        x['out'] = 1\n"
        "P = program({'tok': input_var(2), 'first': position_var(2, lambda i: int(i == 0)),\n"
        "             'out': var(2)}, {}, step, 'out', 2, max_layers=1)\n"
    )
    out = tmp_path / "m"
    code, _, err = cli(capsys, "compile", f"{program}:P", "--out", str(out))
    assert code == 0 and "takes inputs of at most 512 positions" in err and "--max-length N" in err
    code, _, err = cli(capsys, "compile", f"{program}:P", "--out", str(out), "--max-length", "800")
    assert code == 0 and "note:" not in err
    code, out_text, _ = cli(capsys, "run", "--model", str(out), "--tokens", "1 " * 700)
    assert code == 0 and out_text.startswith("output: 1 0")
