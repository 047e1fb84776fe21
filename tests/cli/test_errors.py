"""How a command ends (:mod:`rasplab.cli.errors`): a command's exit code, an abort, a reader of
stdout that went away, and other output errors, each with the exit code the docs promise."""

from __future__ import annotations

import errno
import sys

import pytest
import typer

from rasplab.cli import errors
from rasplab.cli.errors import quiet_broken_pipe, run_app


def _app(action) -> typer.Typer:
    """An app whose command ``go`` runs ``action``."""
    app = typer.Typer()
    app.command("go")(action)
    app.command("other")(lambda: None)
    return app


def _exit_code(run) -> int:
    with pytest.raises(SystemExit) as done:
        run()
    return done.value.code


def test_a_commands_exit_code_and_an_abort_are_the_process_exit_code(capsys):
    def checks_and_fails():
        raise typer.Exit(1)

    def aborts():
        raise typer.Abort()

    assert _exit_code(lambda: run_app(_app(checks_and_fails), ["go"])) == 1
    assert capsys.readouterr().err == ""
    assert _exit_code(lambda: run_app(_app(aborts), ["go"])) == 130
    assert capsys.readouterr().err == "rasplab: interrupted\n"


@pytest.fixture
def silenced(monkeypatch):
    """Record the calls that would point this process's stdout at /dev/null."""
    calls = []
    monkeypatch.setattr(errors, "_silence_stdout", lambda: calls.append(True))
    return calls


def test_a_reader_that_went_away_is_a_quiet_exit_0(silenced, capsys):
    def write_to_a_closed_pipe():
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    assert _exit_code(lambda: quiet_broken_pipe(write_to_a_closed_pipe)) == 0
    assert silenced == [True] and capsys.readouterr().err == ""


def test_a_full_disk_is_one_line_and_exit_2_other_errors_propagate(silenced, capsys):
    def full():
        raise OSError(errno.ENOSPC, "No space left on device")

    def denied():
        raise OSError(errno.EACCES, "Permission denied")

    assert _exit_code(lambda: quiet_broken_pipe(full)) == 2
    err = capsys.readouterr().err
    assert err == "rasplab: error: cannot write the output: No space left on device\n"
    with pytest.raises(PermissionError):
        quiet_broken_pipe(denied)
    assert silenced == [True]


def test_a_run_that_returns_flushes_stdout(silenced, capsys):
    quiet_broken_pipe(lambda: sys.stdout.write("done\n"))
    assert capsys.readouterr().out == "done\n" and silenced == []
