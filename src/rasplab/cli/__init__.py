"""The ``rasplab`` command line: thin subcommands over library functions.

User errors (:class:`rasplab.errors.RasplabError`, bad arguments) print one line to stderr
and exit 2; a failed check exits 1; success exits 0. See ``docs/cli.md``.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

import typer

from rasplab.errors import RasplabError

app = typer.Typer(
    name="rasplab",
    help="A laboratory for what transformers can and cannot compute.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
)


def _register_commands() -> None:
    """Attach each stage's subcommands (one module per stage)."""
    from rasplab.cli import analysis as analysis_cmds
    from rasplab.cli import bounds as bounds_cmds
    from rasplab.cli import compile as compile_cmds
    from rasplab.cli import crasp as crasp_cmds
    from rasplab.cli import data as data_cmds
    from rasplab.cli import explore as explore_cmds
    from rasplab.cli import export as export_cmds
    from rasplab.cli import learned as learned_cmds
    from rasplab.cli import programs as program_cmds
    from rasplab.cli import trace_supervise as trace_cmds
    from rasplab.cli import train as train_cmds

    for module in (
        program_cmds,
        analysis_cmds,
        compile_cmds,
        data_cmds,
        train_cmds,
        crasp_cmds,
        explore_cmds,
        export_cmds,
        trace_cmds,
        learned_cmds,
        bounds_cmds,
    ):
        module.register(app)


@app.callback()
def _root() -> None:
    """A laboratory for what transformers can and cannot compute."""


@app.command("version")
def version() -> None:
    """Print rasplab's version."""
    from rasplab import __version__

    print(__version__)


_register_commands()


def fail(message: str) -> typer.Exit:
    """Print a one-line user error and return the exit to raise (code 2)."""
    print(f"rasplab: error: {message}", file=sys.stderr)
    return typer.Exit(2)


def quiet_broken_pipe(run: Callable[[], None]) -> None:
    """Run ``run``; when the reader of stdout goes away (``rasplab data ... | head``), exit 0
    quietly (stdout is pointed at /dev/null, so that the final flush cannot complain); any other
    failure to write stdout (a full disk) is one line and exit 2."""
    try:
        run()
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(0)
    except SystemExit as done:
        # typer turns EPIPE into exit 1 after wrapping stdout in click's PacifyFlushWrapper
        if done.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _silence_stdout()
            sys.exit(0)
        raise
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG):
            raise
        _silence_stdout()
        print(f"rasplab: error: cannot write the output: {err.strerror}", file=sys.stderr)
        sys.exit(2)


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null (nothing more can be written to the real one)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, mapping user errors to one line and exit 2."""
    quiet_broken_pipe(lambda: _main(argv))


def _main(argv: list[str] | None) -> None:
    """Run the app; user errors become one line and exit 2."""
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="rasplab")
    except RasplabError as err:
        print(f"rasplab: error: {err}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        print("rasplab: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as err:  # usage errors from the argument parser
        message = err.format_message() if hasattr(err, "format_message") else str(err)
        print(f"rasplab: error: {message}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:
        raise
    code = rv if isinstance(rv, int) else 0
    sys.stdout.flush()
    sys.exit(code)
