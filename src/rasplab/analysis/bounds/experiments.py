"""Seed 004 Figures 1-3 as experiments: run (or resume) a sweep, read the store, fit N(ε).

The steps of :func:`make_figure`, in order: pick the figure's sweep config
(``configs/bounds_fig{n}[_quick].yaml``), run every unfinished run through the sweep
machinery (resumable, results in the SQLite store), average each setting's test MSE per
test length over seeds (a :class:`Curve` per (x, N), x = ω or p, N = longest training
length), take the smallest N whose limiting loss (MSE at the longest test length) is at most
ε for each x, fit N(ε) = slope * x + intercept, compute γ, L, Δ and the predicted N of
each setting's first-seed model, and write the PNG, a markdown table and the JSON summary.
Figure 3 reads the attention of the p = 5 models at test length 80 instead.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from rasplab.analysis.bounds import bound_quantities
from rasplab.analysis.bounds.logits import attention_weights
from rasplab.bins import Bin
from rasplab.errors import RasplabError
from rasplab.files import atomic_write_text, check_output_folder, make_output_folder
from rasplab.harness.setup import load_run
from rasplab.harness.store import ResultsStore
from rasplab.harness.sweep import run_sweep
from rasplab.harness.sweepconfig import load_sweep
from rasplab.harness.validation import check_batch_runs
from rasplab.seeding import generator

#: figure -> (task, the x option of the task, its axis label)
FIGURES = {1: ("simple_task", "omega", "ω"), 2: ("modp_task", "p", "p"), 3: ("modp_task", "p", "p")}
FIG3_LENGTH = 80  # seed 004 Figure 3: test sequences of length 80
FIG3_P = 5  # ... of ModPTask with p = 5


@dataclass(frozen=True)
class Curve:
    """Test MSE by test length for one setting (x, training length N), averaged over seeds."""

    x: float
    N: int
    seeds: int
    test_lengths: tuple[int, ...]
    mse: tuple[float, ...]
    run_dir: str

    @property
    def limit(self) -> float:
        """The limiting test loss: the MSE at the longest test length."""
        return self.mse[-1]


def check_figure(figure: int) -> tuple[str, str, str]:
    """(task, x option, label) of a figure number; 1, 2 or 3, else a RasplabError."""
    if figure not in FIGURES:
        raise RasplabError(f"unknown figure {figure!r}; seed 004 has figures 1, 2 and 3")
    return FIGURES[figure]


def config_path(figure: int, quick: bool, root: str | Path | None = None) -> Path:
    """``configs/bounds_fig{n}[_quick].yaml`` under ``root`` (default: the working folder,
    then the source checkout)."""
    check_figure(figure)
    name = f"bounds_fig{figure}{'_quick' if quick else ''}.yaml"
    roots = [Path(root)] if root is not None else [Path.cwd(), Path(__file__).parents[4]]
    for base in roots:
        if (base / "configs" / name).is_file():
            return base / "configs" / name
    raise RasplabError(f"sweep config configs/{name} not found (run from the rasplab checkout)")


def fit_line(xs: list[float], ys: list[float]) -> tuple[float | None, float | None, float | None]:
    """Least-squares slope, intercept and R² of ys on xs (None with fewer than 2 points).

    >>> [round(v, 4) for v in fit_line([1, 2, 3], [2, 4, 6.5])]
    [2.25, -0.3333, 0.9959]
    """
    if len(xs) < 2 or len(set(xs)) < 2:
        return None, None, None
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(((y - (slope * x + intercept)) ** 2).sum())
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - residual / total if total > 0 else None  # all N equal: R² undefined
    return float(slope), float(intercept), r2


def fit_text(summary: dict) -> str:
    """One line on the fit of a Figure 1/2 summary: the line N(ε) = slope · x + intercept and
    its R², or why there is none (fewer than two x values with an N(ε)).

    >>> pts = [{"p": 2, "N": 4}, {"p": 3, "N": None}, {"p": 5, "N": 10}]
    >>> fit_text({"figure": 2, "epsilon": 0.01, "points": pts, "slope": 2.0, "intercept": 0.0,
    ...           "r2": 1.0})
    'figure 2: N(ε = 0.01) = 2 · p + 0, R² 1.000, from 2 of 3 p values'
    >>> fit_text({"figure": 2, "epsilon": 0.01, "points": pts[1:2], "slope": None,
    ...           "intercept": None, "r2": None})
    'figure 2: no fitted line: N(ε = 0.01) found for 0 of 1 p values (a line needs 2)'
    """
    figure, points = summary["figure"], summary["points"]
    label = FIGURES[figure][2]
    found = sum(1 for point in points if point["N"] is not None)
    head = f"figure {figure}: "
    if summary["slope"] is None:
        return (
            f"{head}no fitted line: N(ε = {summary['epsilon']:g}) found for {found} of "
            f"{len(points)} {label} values (a line needs 2)"
        )

    def num(v: float) -> str:  # 3 significant digits; float noise below 1e-6 shows as 0
        return f"{round(v, 6) + 0.0:.3g}"

    r2 = summary["r2"]
    r2_text = "undefined (every N equal)" if r2 is None else f"{r2:.3f}"
    return (
        f"{head}N(ε = {summary['epsilon']:g}) = {num(summary['slope'])} · {label} + "
        f"{num(summary['intercept'])}, R² {r2_text}, from {found} of {len(points)} {label} values"
    )


def n_for_epsilon(curves: list[Curve], epsilon: float) -> dict[float, int | None]:
    """For each x: the smallest training length N whose limiting loss is <= ε (None: none)."""
    out: dict[float, int | None] = {}
    for x in sorted({c.x for c in curves}):
        hits = [c.N for c in curves if c.x == x and c.limit <= epsilon]
        out[x] = min(hits) if hits else None
    return out


def collect_curves(experiments, db: str | Path, option: str) -> list[Curve]:
    """One :class:`Curve` per (x, N) from the finished runs of ``experiments`` in ``db``."""
    groups: dict[tuple[float, int], list] = {}
    with ResultsStore(db, create=False) as store:
        for exp in experiments:
            record = store.get(exp.hash())
            if record is None or record.status != "done" or not record.metrics.get("mse"):
                continue
            key = (float(exp.task_options[option]), Bin.parse(exp.train.bin).hi)
            groups.setdefault(key, []).append(record)
    curves = []
    for (x, N), records in sorted(groups.items()):
        bins = sorted(records[0].metrics["mse"], key=lambda b: Bin.parse(b).hi)
        mse = tuple(float(np.mean([r.metrics["mse"][b] for r in records])) for b in bins)
        first = min(records, key=lambda r: r.seed)
        lengths = tuple(Bin.parse(b).hi for b in bins)
        curves.append(Curve(x, N, len(records), lengths, mse, first.run_dir or ""))
    return curves


def run_bound(
    run_dir: str | Path, epsilon: float, precision_bits: float = 24, constant: float = 1.0
) -> dict:
    """γ, L, Δ, τ and the predicted N of a finished one-layer run (its whole position table)."""
    _, setup = load_run(run_dir)
    vocabulary = range(len(setup.task.vocab))
    positions = range(setup.model.max_positions)
    return bound_quantities(setup.model, vocabulary, positions, epsilon, precision_bits, constant)


def attention_split(
    run_dir: str | Path, length: int = FIG3_LENGTH, n: int = 64, seed: int = 0
) -> dict:
    """Figure 3 for one ModPTask run: the last query's attention probabilities at ``length``,
    mean and standard deviation over positions ≡ k (mod p) and over the others."""
    config, setup = load_run(run_dir)
    task = setup.task
    examples = task.sample_many(generator(seed, "bounds", "figure3"), [length] * n)
    ids = torch.tensor([[setup.encoder.token_ids[t] for t in ex.tokens] for ex in examples])
    w = attention_weights(setup.model, ids)[:, 0, -1]  # head 0, last query: [n, T]
    on = (torch.arange(1, length + 1) % task.p) == task.k
    return {
        "N": Bin.parse(config.train.bin).hi,
        "on_mean": float(w[:, on].mean()),
        "on_std": float(w[:, on].std()),
        "off_mean": float(w[:, ~on].mean()),
        "off_std": float(w[:, ~on].std()),
        "uniform": 1.0 / int(on.sum()),
    }


def make_figure(
    figure: int,
    quick: bool,
    db: str | Path,
    out: str | Path,
    epsilon: float = 1e-2,
    workers: int | None = None,
    progress: bool = True,
    config: str | Path | None = None,
    batch_runs: int | None = None,
) -> dict:
    """Run (or resume) the figure's sweep and write ``fig{n}.png``, ``fig{n}.md``, ``fig{n}.json``
    under ``out``; returns the JSON summary.

    ``batch_runs``: up to that many runs train as one stacked group (:mod:`rasplab.harness.group`;
    the same runs as separately, up to float rounding, several times fewer CPU seconds per
    step: ``benchmarks/bench_bounds.py``). Default :func:`default_batch_runs`."""
    # start-up time: matplotlib loads only to draw the figure
    from rasplab.analysis.bounds import plots

    task, option, label = check_figure(figure)
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise RasplabError(f"--epsilon must be a finite number > 0; got {epsilon!r}")
    if batch_runs is not None:
        check_batch_runs(batch_runs)
    # every input checked before any run trains or any output is made
    names = tuple(f"fig{figure}.{ext}" for ext in ("png", "md", "json"))
    out = check_output_folder(out, names)
    sweep = load_sweep(config if config is not None else config_path(figure, quick))
    unfit = [e for e in sweep.expand() if option not in e.task_options]
    if unfit:
        raise RasplabError(
            f"figure {figure} plots {task}'s option {option!r} against N, and the sweep's "
            f"{unfit[0].task} runs do not set task_options.{option}; give a {task} config "
            f"whose grid sets it (e.g. configs/bounds_fig{figure}_quick.yaml)"
        )
    _check_store(db)
    if batch_runs is None:
        batch_runs = default_batch_runs(sweep.grid)
    make_output_folder(out)
    run_sweep(sweep, db, workers=workers, progress=progress, batch_runs=batch_runs)
    experiments = sweep.expand()
    curves = collect_curves(experiments, db, option)
    if not curves:
        raise RasplabError(f"no finished runs for figure {figure} in {str(db)!r}")
    if figure == 3:
        runs = [c.run_dir for c in curves if c.x == FIG3_P]
        if not runs:
            raise RasplabError(
                f"figure 3 needs ModPTask runs with p = {FIG3_P}; the sweep has none"
            )
        rows = sorted((attention_split(run) for run in runs), key=lambda r: r["N"])
        summary = {"figure": 3, "sweep": sweep.name, "length": FIG3_LENGTH, "points": rows}
        plots.save_figure(plots.figure3(rows), out / "fig3.png")
        _write(out, 3, summary, plots.figure3_markdown(rows))
        return summary
    needed = n_for_epsilon(curves, epsilon)
    fitted = [(x, N) for x, N in needed.items() if N is not None]
    slope, intercept, r2 = fit_line([x for x, _ in fitted], [N for _, N in fitted])
    bounds = {(c.x, c.N): run_bound(c.run_dir, epsilon) for c in curves}
    summary = {
        "figure": figure,
        "slope": slope,
        "intercept": intercept,
        "r2": r2,
        "points": [{option: x, "N": N} for x, N in needed.items()],
        "epsilon": epsilon,
        "sweep": sweep.name,
        "curves": [
            asdict(c) | {"limit": c.limit, **_bound_columns(bounds[(c.x, c.N)])} for c in curves
        ],
    }
    plots.save_figure(
        plots.loss_figure(figure, curves, needed, (slope, intercept), label, epsilon),
        out / f"fig{figure}.png",
    )
    _write(out, figure, summary, plots.loss_markdown(summary, option, label))
    return summary


def _check_store(db: str | Path) -> None:
    """An existing ``db`` must open as a results store (garbage, a foreign database or a
    folder is one RasplabError here, before any output folder is made)."""
    if Path(db).exists() or Path(db).is_symlink():
        with ResultsStore(db, create=False):
            pass


def default_batch_runs(grid: dict) -> int:
    """Runs per stacked group. When the grid's first axis is ``train.bin`` (the ``--quick``
    configs), every run of one training length: one group per N, no padding of short runs to
    a longer run's rows. Otherwise the seeds of one setting when the grid has several (the
    seeds come last in the bounds configs' grids, so a group is one setting), else 8 settings
    of one seed.

    >>> default_batch_runs({"task_options.p": [2, 3], "seed": [0, 1, 2, 3]})
    4
    >>> default_batch_runs({"task_options.p": [2, 3], "seed": [0]})
    8
    >>> default_batch_runs({"train.bin": ["1-4", "1-8"], "task_options.p": [2, 3, 4], "seed": [0]})
    3
    """
    keys = list(grid)
    if keys and keys[0] == "train.bin" and len(keys) > 1:
        return max(1, math.prod(len(grid[k]) for k in keys[1:]))
    seeds = len(grid.get("seed", []))
    return seeds if seeds > 1 else 8


def _bound_columns(q: dict) -> dict:
    """The bound's numbers for one curve's model, for the summary."""
    return {k: q[k] for k in ("gamma", "L", "delta", "tau", "predicted_N", "log2_predicted_N")}


def _write(out: Path, figure: int, summary: dict, markdown: str) -> None:
    """The JSON summary and the markdown table, written atomically."""
    atomic_write_text(out / f"fig{figure}.json", json.dumps(summary, indent=1))
    atomic_write_text(out / f"fig{figure}.md", markdown)
