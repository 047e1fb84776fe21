"""Tables rebuilt from the results store: ``runs.csv``, ``summary.csv`` and ``summary.md``.

``runs.csv`` has one row per run (run id, config hash, task, variant, seed, status, fitted,
steps, wall time, one ``acc_<name>`` column per bin and then per named split (``eval.splits``),
``mse_<name>`` for regression tasks);
``summary.*`` has one row per task and variant setting with the mean and spread over all
seeds and over the fitted seeds.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from rasplab.bins import bin_order
from rasplab.harness.select import selection_path
from rasplab.reports.aggregate import GroupSummary
from rasplab.reports.slices import slice_markdown
from rasplab.reports.verdicts import crasp_summary, verdict_markdown


def _fmt(value, digits: int = 4) -> str:
    """A number for CSV (empty for None)."""
    if value is None:
        return ""
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def runs_csv(records) -> str:
    """CSV text with one row per stored run."""
    bins = bin_order(b for r in records if r.metrics for b in r.metrics["bins"])
    mse_bins = bin_order(
        b for r in records if r.metrics and r.metrics.get("mse") for b in r.metrics["mse"]
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "run_id",
            "config_hash",
            "task",
            "variant",
            "seed",
            "status",
            "fitted",
            "steps",
            "wall_time_s",
            *[f"acc_{b}" for b in bins],
            *[f"mse_{b}" for b in mse_bins],
            "attempts",
            "code_version",
            "error",
        ]
    )
    for r in records:
        accs = r.metrics["bins"] if r.metrics else {}
        mses = (r.metrics.get("mse") or {}) if r.metrics else {}
        writer.writerow(
            [
                r.run_id,
                r.config_hash,
                r.task,
                r.variant,
                r.seed,
                r.status,
                "" if r.fitted is None else int(r.fitted),
                _fmt(r.steps),
                _fmt(r.wall_time, 2),
                *[_fmt(accs.get(b)) for b in bins],
                *[_fmt(mses.get(b), 6) for b in mse_bins],
                r.attempts,
                r.code_version or "",
                r.error or "",
            ]
        )
    return out.getvalue()


def summary_csv(groups: list[GroupSummary]) -> str:
    """CSV text: one row per (task, setting, bin) with both aggregates."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "task",
            "variant",
            "setting_hash",
            "bin",
            "test_examples",
            "seeds",
            "mean_all",
            "std_all",
            "min_all",
            "max_all",
            "fitted_seeds",
            "mean_fitted",
            "std_fitted",
            "min_fitted",
            "max_fitted",
            "mse_mean_all",
        ]
    )
    for g in groups:
        for b in g.bins:
            a, f = g.all[b], g.fitted[b]
            m = g.mse[b] if g.mse else None
            writer.writerow(
                [
                    g.task,
                    g.label,
                    g.setting_hash,
                    b,
                    g.counts.get(b, ""),
                    len(g.seeds),
                    _fmt(a.mean),
                    _fmt(a.std),
                    _fmt(a.min),
                    _fmt(a.max),
                    len(g.fitted_seeds),
                    *(
                        [_fmt(f.mean), _fmt(f.std), _fmt(f.min), _fmt(f.max)]
                        if f
                        else ["", "", "", ""]
                    ),
                    _fmt(m.mean, 6) if m else "",
                ]
            )
    return out.getvalue()


def _cell(s) -> str:
    """A Markdown cell: ``mean ± std`` in percent, or a dash."""
    if s is None:
        return "–"
    if s.n == 1:
        return f"{100 * s.mean:.1f}"
    return f"{100 * s.mean:.1f} ± {100 * s.std:.1f}"


def selection_markdown(db: str) -> list[str]:
    """Markdown lines: the configurations a selection sweep chose (none without one)."""
    path = selection_path(db)
    if not Path(path).is_file():
        return []
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    lines = [
        "## Selected configurations (seed 003, Appendix E.3)",
        "",
        "| setting | chosen | how | candidates fitted/run |",
        "|---|---|---|---|",
    ]
    for label, r in sorted(record.items()):
        chosen = ", ".join(f"{k}={v}" for k, v in r["chosen"].items())
        fits = f"{r['candidates_fitted']}/{r['candidates_run']}"
        lines.append(f"| {label} | {chosen} | {r['how']} | {fits} |")
    return [*lines, ""]


def summary_markdown(groups: list[GroupSummary], records, db: str, plots: list[str]) -> str:
    """The Markdown summary: the verdicts (beside the C-RASP prediction), then per task (headed
    by its C-RASP prediction when the task is in Huang et al.'s tables) accuracy by bin and
    split, all seeds and fitted seeds."""
    done = sum(r.status == "done" for r in records)
    lines = [
        "# rasplab results summary",
        "",
        f"Results store: `{db}`; {len(records)} runs, {done} finished.",
        "",
        "Accuracy is whole-sequence accuracy in percent (an example counts only if every scored",
        "position is right), as mean ± sample standard deviation over seeds. **All seeds** counts",
        "every finished run; **fitted seeds** only the runs that reached 100% on the",
        "in-distribution test bins (the published numbers report only these). `seeds` is",
        "fitted/finished; test examples per bin (and named split, after the bins) in the header.",
        "",
        *verdict_markdown(groups),
        *selection_markdown(db),
    ]
    for task in sorted({g.task for g in groups}):
        rows = [g for g in groups if g.task == task]
        bins = bin_order(b for g in rows for b in g.bins)
        counts = {b: next((g.counts[b] for g in rows if b in g.counts), "?") for b in bins}
        head = [f"{b} (n={counts[b]})" for b in bins]
        lines += [f"## {task}", ""]
        crasp = crasp_summary(task)
        if crasp is not None:
            lines += [crasp, ""]
        for title, key in (("All seeds", "all"), ("Fitted seeds", "fitted")):
            lines += [
                f"{title}:",
                "",
                "| variant | seeds | " + " | ".join(head) + " |",
                "|---|---|" + "---|" * len(bins),
            ]
            for g in rows:
                cells = [_cell(getattr(g, key).get(b)) for b in bins]
                seeds = f"{len(g.fitted_seeds)}/{len(g.seeds)}"
                extra = f" (+{g.unfinished} failed/unfinished)" if g.unfinished else ""
                lines.append(f"| {g.label} | {seeds}{extra} | " + " | ".join(cells) + " |")
            lines.append("")
        if any(g.mse for g in rows):
            lines += [
                "MSE (all seeds):",
                "",
                "| variant | " + " | ".join(bins) + " |",
                "|---|" + "---|" * len(bins),
            ]
            for g in rows:
                if g.mse:
                    cells = [f"{g.mse[b].mean:.4g}" if g.mse.get(b) else "–" for b in bins]
                    lines.append(f"| {g.label} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += slice_markdown([g for g in groups if g.seeds], records)
    failed = [r for r in records if r.status == "failed"]
    if failed:
        lines += ["## Failed runs", ""]
        lines += [f"- `{r.run_id}` {r.task} {r.variant} seed {r.seed}: {r.error}" for r in failed]
        lines.append("")
    diverged = [r for r in records if r.status == "diverged"]
    if diverged:
        lines += ["## Diverged runs (the loss became NaN or infinite; not in the tables)", ""]
        lines += [
            f"- `{r.run_id}` {r.task} {r.variant} seed {r.seed}: at step {r.steps}"
            for r in diverged
        ]
        lines.append("")
    if plots:
        lines += ["## Plots", ""] + [f"- [{p}]({p})" for p in plots] + [""]
    return "\n".join(lines)
