"""The ``rasplab`` command line: thin subcommands over library functions.

One module per command (``rasplab sweep`` is :mod:`rasplab.cli.sweep`, ``rasplab crasp verify``
is :mod:`rasplab.cli.crasp.verify`), all registered in one table, :mod:`rasplab.cli.commands`;
helpers several commands share live in :mod:`rasplab.cli.options` (arguments) and
:mod:`rasplab.cli.output` (printing); exit codes and one-line errors in
:mod:`rasplab.cli.errors`. See ``docs/cli.md``.
"""

from __future__ import annotations

from rasplab.cli.commands import app
from rasplab.cli.errors import quiet_broken_pipe, run_app

__all__ = ["app", "main", "quiet_broken_pipe"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, mapping user errors to one line and exit 2."""
    quiet_broken_pipe(lambda: run_app(app, argv))
