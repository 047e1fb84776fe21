"""The ``rasplab`` command line: thin subcommands over library functions.

User errors (:class:`rasplab.errors.RasplabError`, bad arguments) print one line to stderr
and exit 2; a failed check exits 1; success exits 0. See ``docs/cli.md``.
"""

from __future__ import annotations

import sys

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
    from rasplab.cli import compile as compile_cmds
    from rasplab.cli import crasp as crasp_cmds
    from rasplab.cli import data as data_cmds
    from rasplab.cli import explore as explore_cmds
    from rasplab.cli import export as export_cmds
    from rasplab.cli import programs as program_cmds
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


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, mapping user errors to one line and exit 2."""
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
        sys.exit(0)
    sys.exit(rv if isinstance(rv, int) else 0)
