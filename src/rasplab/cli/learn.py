"""``rasplab learn``: learned transformer programs (train, discretise, decompile, verify).

* ``rasplab learn TASK [key=value ...] --out DIR [--json]`` trains, discretises, decompiles
  and verifies one run (keys: the fields of :class:`rasplab.learned.LearnConfig`, task
  options as ``task_options.k=6``); ``--json`` prints ``{"test_accuracy",
  "program_accuracy", "agreement", "seconds", ...}``.
* ``rasplab learn --verify DIR`` re-derives ``program.py`` from the saved weights, checks it
  is the file on disk, and re-runs every program == model check.
* ``rasplab learn --lang DIR [--out FILE] [--json]`` exports a saved run to a
  ``rasplab.lang`` program for inputs of up to twice the training length and checks it
  (interpreter == model, compiled == interpreter; a disagreement exits 1); ``--out``
  writes the program's listing.
* ``rasplab learn --sweep CONFIG --out DIR [--plot PNG]`` runs a grid (resumable), prints
  one summary row per setting and, with ``--plot``, draws accuracy by length past training.

A disagreement between program and model exits 1; user errors exit 2.
"""

from __future__ import annotations

import json

import typer

from rasplab.cli.output import say
from rasplab.errors import RasplabError
from rasplab.files import write_file


def parse_args(args: list[str]) -> dict:
    """``TASK key=value ...`` -> config data (values parsed as YAML scalars)."""
    # start-up time: torch
    from rasplab.harness.config import parse_override, set_dotted

    if not args or "=" in args[0]:
        raise RasplabError("give a task first, e.g. rasplab learn rasp_hist epochs=20 --out DIR")
    data: dict = {"task": args[0]}
    for arg in args[1:]:
        key, value = parse_override(arg)
        if "." in key and not key.startswith("task_options."):
            raise RasplabError(f"unknown learn key {key!r}; only task_options.* may be dotted")
        set_dotted(data, key, value)
    return data


def _verify_run(path: str, as_json: bool) -> None:
    # start-up time: torch
    from rasplab.learned.learn import verify_run

    checked = verify_run(path)
    record = {"run": path, "agreement": 1.0, "positions_checked": checked}
    print(
        json.dumps(record) if as_json else f"program == model on {sum(checked.values())} positions"
    )


def _lang_run(path: str, out: str | None, as_json: bool) -> None:
    # start-up time: torch
    from rasplab.learned.learn import lang_run

    record, listing = lang_run(path)
    if out is not None:
        write_file(out, listing.encode(), what="--out")
    if as_json:
        print(json.dumps({"run": path, **record}))
    else:
        heads = ", ".join(f"{h} ({kind})" for h, kind in record["heads"].items()) or "none"
        print(
            f"rasplab.lang export of {path}: {record['rules']} rules, {record['layers']} layers, "
            f"heads {heads}; interpreter == model on "
            f"{sum(record['positions_checked'].values())} positions, compiled == interpreter "
            f"on {record['compiled_inputs_checked']} inputs"
            + (
                f" ({record['inputs_too_long']} inputs longer than {record['position_range']} "
                "tokens left out: the program accepts no longer ones)"
                if record["inputs_too_long"]
                else ""
            )
        )


_ARGS = typer.Argument(None, metavar="TASK [KEY=VALUE]...")

KEYS = (
    ("task_options.k", "6", "symbols (5 for rasp_reverse and rasp_sort)"),
    ("task_options.max_len", "8", "tokens per input, start token included (16 for Dyck)"),
    ("task_options.max_digits", "5", "rasp_addition only: digits per input"),
    ("layers", "1", "layers"),
    ("cat_heads", "2", "categorical heads per layer"),
    ("count_heads", "2", "counting heads per layer"),
    ("mlps", "2", "lookup-table MLPs per layer"),
    ("reads", "2", "variables each MLP reads (must be 2)"),
    ("width", "0", "values per variable (0: the task's vocabulary or positions)"),
    ("epochs", "40", "epochs"),
    ("batch_size", "256", "examples per step"),
    ("lr", "0.05", "Adam's learning rate (finite, > 0)"),
    ("tau_start", "3.0", "Gumbel temperature at the start (finite, > 0)"),
    ("tau_end", "0.02", "Gumbel temperature at the end (<= tau_start)"),
    ("seed", "0", "initial weights and training noise"),
    ("data_seed", "0", "the datasets"),
    ("train_n", "16000", "training examples (>= 1)"),
    ("val_n", "2000", "validation examples (>= 1)"),
    ("test_n", "2000", "test examples (>= 1)"),
    ("verify_length", "4", "program == model on every input up to this many symbols"),
    ("random_checks", "500", "random inputs up to twice the training length"),
    ("test_beyond", "0", "lengths past training to score"),
    ("test_per_length", "200", "examples per length with test_beyond"),
)
"""Every ``KEY=VALUE`` of ``rasplab learn``, its default and meaning (``--help`` lists them;
a test checks them against :class:`rasplab.learned.LearnConfig`)."""


def learn_command(
    args: list[str] = _ARGS,
    out: str = typer.Option(
        None, "--out", help="run directory (sweep folder; with --lang: listing file)"
    ),
    sweep: str = typer.Option(None, "--sweep", help="YAML grid of runs (resumable)"),
    verify_dir: str = typer.Option(None, "--verify", help="re-check a saved run directory"),
    lang_dir: str = typer.Option(
        None, "--lang", help="export a saved run to rasplab.lang and check it"
    ),
    plot: str = typer.Option(None, "--plot", help="with --sweep: accuracy-by-length PNG"),
    as_json: bool = typer.Option(False, "--json", help="JSON on stdout"),
    quiet: bool = typer.Option(False, "--quiet", help="no per-epoch progress"),
) -> None:
    """Train a discrete transformer on a RASP task, decompile it, verify program == model."""
    # start-up time: torch
    from rasplab.learned.verify import ProgramMismatch

    try:
        if verify_dir is not None:
            return _verify_run(verify_dir, as_json)
        if lang_dir is not None:
            return _lang_run(lang_dir, out, as_json)
        if sweep is not None:
            return _sweep(sweep, out, as_json, quiet, plot)
        # start-up time: torch
        from rasplab.learned import config_from_dict, learn

        config = config_from_dict(parse_args(args or []))
        if out is None:
            raise RasplabError("give --out DIR for the run directory")
        result = learn(config, out=out, log=None if quiet else say).result
    except ProgramMismatch as err:
        say(f"rasplab: check failed: {err}")
        raise typer.Exit(1) from err
    except RasplabError:
        raise
    # start-up time: torch
    from rasplab.learned.coverage import warning

    unseen = warning(result)
    if unseen is not None:
        say(unseen)
    if as_json:
        print(json.dumps(result, allow_nan=False))
    else:
        print(
            f"{config.task}: test accuracy {result['test_accuracy']:.4f}, program accuracy "
            f"{result['program_accuracy']:.4f}, program == model on "
            f"{sum(result['positions_checked'].values())} positions, {result['seconds']} s; "
            f"wrote {out}"
        )


def _sweep(path: str, out: str | None, as_json: bool, quiet: bool, plot: str | None) -> None:
    # start-up time: torch
    from rasplab.learned.sweep import load_sweep, run_sweep, summarize

    if out is None:
        raise RasplabError("give --out DIR for the sweep's run directories")
    rows = run_sweep(load_sweep(path), out, log=None if quiet else say)
    for row in summarize(rows):
        print(json.dumps(row) if as_json else _summary_line(row))
    if plot is not None:
        # start-up time: torch
        from rasplab.learned.plot import plot_by_length

        say(f"wrote {plot_by_length(rows, plot)}")


def _summary_line(row: dict) -> str:
    s = row["setting"]
    return (
        f"{s['task']} L{s['layers']} cat{s['cat_heads']} count{s['count_heads']} mlp{s['mlps']}: "
        f"best-by-val {row['best_val_test_accuracy']:.4f}, mean {row['mean_test_accuracy']:.4f}"
        f" ± {row['sd_test_accuracy']:.4f} over {row['seeds']} seeds, program "
        f"{row['best_program_accuracy']:.4f}, agreement {row['min_agreement']:.4f}, "
        f"rasplab.lang export {row['lang_exported']}/{row['seeds']}"
    )


learn_command.__doc__ = (
    "Train a discrete transformer on a RASP task, decompile it, verify program == model.\n\n"
    "A warning on stderr names the labels the training set never contains (test accuracy "
    "cannot measure them); result.json lists them with the program's answers.\n\n"
    "\b\nKEY=VALUE options (default):\n"
    + "\n".join(f"  {key}={default}  {meaning}" for key, default, meaning in KEYS)
)
