"""Every ``rasplab`` command, registered in one table: name, function, module.

A command ``rasplab X`` lives in ``rasplab/cli/X.py`` (dashes become underscores), a subcommand
``rasplab crasp X`` in ``rasplab/cli/crasp/X.py``; the groups ``bounds`` (two subcommands)
and ``crasp`` are listed in :data:`GROUPS`. To add a command, write its module (a plain
function whose typer arguments are its options and whose docstring is its help) and add one
line to :data:`COMMANDS`. ``--help`` imports every command module, so they import heavy
libraries (torch, the harness) inside their functions, never at the top.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import typer

from rasplab.cli import (
    bounds,
    check_optimum,
    compile,
    data,
    explore,
    export,
    learn,
    minimal,
    programs,
    report,
    run,
    sweep,
    tasks,
    trace_figure,
    trace_grid,
    trace_supervise,
    train,
    verify,
    version,
)
from rasplab.cli.crasp import check as crasp_check
from rasplab.cli.crasp import compile as crasp_compile
from rasplab.cli.crasp import programs as crasp_programs
from rasplab.cli.crasp import run as crasp_run
from rasplab.cli.crasp import show as crasp_show
from rasplab.cli.crasp import table as crasp_table
from rasplab.cli.crasp import verify as crasp_verify
from rasplab.cli.rasp import compile as rasp_compile
from rasplab.cli.rasp import programs as rasp_programs
from rasplab.cli.rasp import run as rasp_run
from rasplab.cli.rasp import verify as rasp_verify

HELP = "A laboratory for what transformers can and cannot compute."


@dataclass(frozen=True)
class Command:
    """One command: its words (``"run"``, ``"crasp verify"``), its function, its short help
    in the command list (default: the docstring's first sentence)."""

    path: str
    function: Callable[..., None]
    short_help: str | None = None


GROUPS: dict[str, str] = {
    "crasp": "C-RASP counting programs: library, interpreter, checks against tasks.",
    "rasp": "RASP as Tracr users write it: Tracr's library, exact compiler, verifier.",
    "bounds": "Quantitative length-generalization bounds (seed 004): margins and Figures 1-3.",
}
"""The command groups and their help, in the order ``rasplab --help`` lists them."""

COMMANDS: tuple[Command, ...] = (
    Command("version", version.version_command),
    Command("programs", programs.programs_command),
    Command("run", run.run_command),
    Command(
        "minimal",
        minimal.minimal_command,
        "Minimal program for training inputs, scored on test inputs.",
    ),
    Command("compile", compile.compile_command),
    Command("verify", verify.verify_command),
    Command("tasks", tasks.tasks_command),
    Command("data", data.data_command),
    Command("train", train.train_command),
    Command("sweep", sweep.sweep_command),
    Command("report", report.report_command),
    Command("explore", explore.explore_command),
    Command("export", export.export_command),
    Command(
        "trace-supervise",
        trace_supervise.trace_supervise_command,
        "Learn a program's MLP from its traces (ALTA C.1).",
    ),
    Command(
        "trace-figure",
        trace_figure.trace_figure_command,
        "Accuracy by length and ones: trace vs standard runs.",
    ),
    Command(
        "trace-grid",
        trace_grid.trace_grid_command,
        "Trace-supervision runs from a grid file, resumable.",
    ),
    Command(
        "check-optimum",
        check_optimum.check_optimum_command,
        "Theorems 1-2: minimal rule set vs local optimum.",
    ),
    Command("learn", learn.learn_command),
    Command("crasp programs", crasp_programs.programs_command),
    Command("crasp show", crasp_show.show_command),
    Command("crasp run", crasp_run.run_command),
    Command("crasp check", crasp_check.check_command),
    Command("crasp compile", crasp_compile.compile_command),
    Command("crasp verify", crasp_verify.verify_command),
    Command("crasp table", crasp_table.table_command),
    Command("rasp programs", rasp_programs.programs_command),
    Command("rasp run", rasp_run.run_command),
    Command("rasp compile", rasp_compile.compile_command),
    Command("rasp verify", rasp_verify.verify_command),
    Command(
        "bounds figure",
        bounds.figure_command,
        "Run (or resume) the runs of Figure 1, 2 or 3 and draw it.",
    ),
    Command(
        "bounds margin",
        bounds.margin_command,
        "γ, L, Δ, τ and the predicted N of a trained one-layer run.",
    ),
)
"""Every command, in the order ``--help`` lists them (groups after the plain commands)."""


def _typer(name: str, help: str, **extra) -> typer.Typer:
    """The app or a group, as every rasplab one is set up (plain help, no shell completion)."""
    return typer.Typer(
        name=name,
        help=help,
        add_completion=False,
        rich_markup_mode=None,
        no_args_is_help=True,
        **extra,
    )


def _root() -> None:
    """A laboratory for what transformers can and cannot compute."""


def build_app() -> typer.Typer:
    """The ``rasplab`` app: every entry of :data:`COMMANDS` attached to its group.

    >>> [group.name for group in build_app().registered_groups] == list(GROUPS)
    True
    """
    app = _typer("rasplab", HELP, pretty_exceptions_enable=False)
    app.callback()(_root)
    groups = {name: _typer(name, help) for name, help in GROUPS.items()}
    for command in COMMANDS:
        *group, name = command.path.split()
        target = groups[group[0]] if group else app
        target.command(name, short_help=command.short_help)(command.function)
    for name, group in groups.items():
        app.add_typer(group, name=name)
    return app


app = build_app()
"""The ``rasplab`` app (run it with :func:`rasplab.cli.main`)."""
