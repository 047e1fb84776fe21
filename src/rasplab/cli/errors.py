"""How the ``rasplab`` command line ends: exit codes, one-line user errors, closed pipes.

User errors (:class:`rasplab.errors.RasplabError`, bad arguments) print one line to stderr and
exit 2; a failed check exits 1 (the command raises ``typer.Exit(1)``); an interrupt (Ctrl-C)
exits 130; success exits 0. When the reader of stdout goes away (``rasplab data ... | head``)
the command exits 0 quietly; a full disk under stdout is one line and exit 2.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

import typer

from rasplab.errors import RasplabError


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


def run_app(app: typer.Typer, argv: list[str] | None) -> None:
    """Run ``app`` on ``argv`` (default: ``sys.argv[1:]``) and exit with its code; user errors
    become one line and exit 2, an interrupt exit 130. (With ``standalone_mode=False`` the app
    returns the code of a ``typer.Exit`` and turns a closed stdout into ``SystemExit(1)``, which
    :func:`quiet_broken_pipe` handles.)"""
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="rasplab")
    except RasplabError as err:
        print(f"rasplab: error: {err}", file=sys.stderr)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        print("rasplab: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as err:  # usage errors from the argument parser
        message = err.format_message() if hasattr(err, "format_message") else str(err)
        print(f"rasplab: error: {message}", file=sys.stderr)
        sys.exit(2)
    code = rv if isinstance(rv, int) else 0
    if code == 130:  # typer turns Ctrl-C into Exit(130), which click returns as the result
        print("rasplab: interrupted", file=sys.stderr)
    sys.stdout.flush()
    sys.exit(code)
