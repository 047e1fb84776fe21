"""The C-RASP table as JSON records, Markdown and CSV.

>>> from rasplab.reports.crasp_table.table import build_table
>>> rec = records(build_table(tasks=["aa_star"]))[0]
>>> {k: rec[k] for k in ("task", "crasp", "crasp_periodic_local", "star_free", "ac0")}
{'task': 'aa_star', 'crasp': 'no', 'crasp_periodic_local': 'yes', 'star_free': 'no', 'ac0': 'yes'}
>>> rec["dot_depth"], rec["prediction"]
(None, 'guaranteed (APE)')
"""

from __future__ import annotations

import csv
import io

from rasplab.reports.crasp_table.measure import REGULARIZED
from rasplab.reports.crasp_table.table import CraspTable, TableRow


def yes_no(value: bool | None) -> str | None:
    """True -> "yes", False -> "no", None -> None (does not apply)."""
    return None if value is None else ("yes" if value else "no")


def _measurement_record(r: TableRow, encoding: str) -> dict | None:
    m = r.measurement(encoding)
    if m is None:
        return None
    return {
        "status": m.status,
        "agree": r.agreement(encoding),
        "seeds": list(m.seeds),
        "fitted_seeds": list(m.fitted_seeds),
        "unfinished": m.unfinished,
        "bins": list(m.bins),
        "in_distribution_bins": list(m.id_bins),
        "counts": m.counts,
        "accuracy_all_seeds": m.all,
        "accuracy_fitted_seeds": m.fitted,
    }


def record(r: TableRow, measured: bool, ladder: bool = False) -> dict:
    """One row as a JSON-ready dict (keys task, crasp, crasp_periodic_local, star_free, ac0,
    dot_depth, prediction, ...; with a store also measured and agree; with a ladder store
    also trend, per encoding)."""
    x = r.row
    out = {
        "task": x.task,
        "label": x.info.label,
        "kind": x.info.kind,
        "crasp": x.crasp.answer,
        "crasp_program": x.crasp.program,
        "crasp_reason": x.crasp.reason,
        "crasp_periodic_local": x.crasp_periodic_local.answer,
        "crasp_periodic_local_program": x.crasp_periodic_local.program,
        "crasp_periodic_local_reason": x.crasp_periodic_local.reason,
        "star_free": yes_no(x.star_free),
        "ac0": yes_no(x.ac0),
        "ac0_source": x.ac0_source,
        "dot_depth": x.dot_depth,
        "syntactic_monoid_size": x.monoid_size,
        "prediction": x.prediction,
    }
    if measured:
        out["measured_task"] = x.info.measured_task
        out["measured"] = {e: _measurement_record(r, e) for e in r.encodings}
        out["agree"] = r.agree
    if ladder:
        out["trend"] = {e: r.trend(e) for e in r.encodings}
    return out


def records(table: CraspTable) -> list[dict]:
    """Every row as a JSON-ready dict, in table order."""
    return [record(r, table.measured, table.ladder is not None) for r in table.rows]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _accuracies(m, which: dict) -> str:
    return " / ".join(_pct(which.get(b)) for b in m.bins) if which else "–"


def _status(r: TableRow, encoding: str) -> str:
    m = r.measurement(encoding)
    if m is None or not m.seeds:
        return "not measured" + (f" ({m.unfinished} unfinished)" if m and m.unfinished else "")
    return f"{m.status} ({len(m.fitted_seeds)}/{len(m.seeds)} fitted)"


def definitions(table: CraspTable) -> list[str]:
    """The sentences that say what the columns mean (printed under the Markdown table)."""
    t = f"{100 * table.threshold:g}%"
    lines = [
        "C-RASP columns: a verified library program (`rasplab crasp programs`), or the paper's "
        "verdict with its citation (Huang et al., Tables 2-3, Appendix E). "
        "Star-free and AC0 are computed from each language's minimal DFA (aperiodic syntactic "
        "monoid; quasi-aperiodic syntactic morphism, Barrington et al. 1992); for the "
        "algorithmic tasks AC0 is cited from Table 3 and star-free does not apply (–). "
        "Dot-depth is cited from Table 2.",
        "Prediction (Huang et al. Theorems 7 and 9): guaranteed (NoPE) when a C-RASP[] "
        "program exists (length generalization guaranteed with NoPE, and with APE); "
        "guaranteed (APE) when only a C-RASP[periodic,local] program exists (guaranteed with "
        "APE; no guarantee for NoPE); not guaranteed when neither exists: the theorems do not "
        "rule out length generalization there (the paper leaves it open), so it is no "
        "prediction of failure.",
    ]
    if table.measured:
        lines += [
            f"Measured (`{table.db}`"
            + (f", runs of `{table.config}`" if table.config else "")
            + f"): a seed is fitted when its accuracy is >= {t} on every in-distribution "
            f"bin; an encoding generalizes when at least one seed fitted and the mean over "
            f"fitted seeds is >= {t} on every longer bin. With no fitted seed the comparison "
            "is inconclusive. Accuracy is whole-sequence accuracy (every scored position).",
            "Agreement is scored only where length generalization is guaranteed: yes / no. "
            "Where it is not guaranteed, a failure is consistent with the theory "
            "(consistent) and a success is not against it (no prediction); neither is counted "
            "as agreement. A row is consistent when nothing is guaranteed and every measured "
            "encoding failed.",
        ]
    if table.ladder is not None:
        lines += [
            f"Trend (budget ladder `{table.ladder}`): per rung (x1, x2, x4: the grid's steps "
            "times 1, 2, 4; w2: twice the width at x1 steps) the mean over the seeds every rung "
            "finished of the mean longer-bin accuracy; rising / falling when x4 (or the largest "
            "step rung run) is at least 5 points above / below x1, flat otherwise; not measured "
            'without two step rungs. "generalizes at" names the rungs at which the encoding '
            f"generalizes: a seed fitted (>= {t} on every training-length bin) and the fitted "
            f"seeds' mean is >= {t} on every longer bin.",
        ]
    if REGULARIZED in table.encodings:
        lines += [
            f"{REGULARIZED}: the runs with `model.pe=ape` and `train.pe_penalty` > 0 (APE "
            "trained with the paper's regularizer), predicted as APE (Theorem 7 idealizes "
            "training with that regularizer); APE is the ape runs without it. A row agrees "
            "when all three encodings agree and disagrees when any disagrees.",
        ]
    return lines


def markdown(table: CraspTable) -> str:
    """The table as Markdown: the expressibility table with the prediction (and, when
    measured, each encoding's status and the agreement), then the accuracies per bin, then
    the definitions and the reasons of every "no"."""
    head = ["paper", "task", "C-RASP[]", "C-RASP[periodic,local]", "star-free", "AC0"]
    head += ["dot-depth"]
    head += ["prediction"] + ([*table.encodings, "agree"] if table.measured else [])
    trends = table.ladder is not None
    head += [f"{e} trend" for e in table.encodings] if trends else []
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in table.rows:
        x = r.row
        cells = [x.paper_row, f"{x.task} ({x.info.label})", x.crasp.text()]
        cells += [x.crasp_periodic_local.text(), yes_no(x.star_free) or "–"]
        ac0 = yes_no(x.ac0) or "not known"
        ac0 += " (Table 3)" if x.ac0_source == "Table 3" else ""
        cells += [ac0, "–" if x.dot_depth is None else str(x.dot_depth), x.prediction]
        if table.measured:
            cells += [_status(r, e) for e in table.encodings] + [r.agree]
        if trends:
            cells += [r.trend(e) for e in table.encodings]
        lines.append("| " + " | ".join(cells) + " |")
    if table.measured:
        lines += [
            "",
            "Accuracy (%) per bin, mean over all finished seeds and over fitted seeds:",
            "",
        ]
        lines += ["| task | encoding | bins | n | fitted | all seeds | fitted seeds | agree |"]
        lines += ["| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in table.rows:
            for e in table.encodings:
                m = r.measurement(e)
                if m is None or not m.seeds:
                    continue
                n = "/".join(str(m.counts.get(b, "?")) for b in m.bins)
                lines.append(
                    f"| {r.row.task} | {e} | {' / '.join(m.bins)} | {n} | "
                    f"{len(m.fitted_seeds)}/{len(m.seeds)} | {_accuracies(m, m.all)} | "
                    f"{_accuracies(m, m.fitted)} | {r.agreement(e)} |"
                )
        lines += ["", "Agreement: " + ", ".join(f"{k}: {v}" for k, v in table.tally().items())]
    lines += [""] + [f"- {d}" for d in definitions(table)]
    lines += [
        "- paper: the row's place in the paper, T2 #k for the k-th of Table 2's 17 numbered "
        "languages (PARITY is listed there without a number: T2), T3 for Table 3."
    ]
    notes = []
    for r in table.rows:
        for cls, v in (("C-RASP[]", r.row.crasp), ("[periodic,local]", r.row.crasp_periodic_local)):
            if v.answer != "yes":
                cite = "" if v.reason in v.detail else f" ({v.reason})"
                notes.append(f"- {r.row.task}, {cls}: {v.answer} — {v.detail}{cite}.")
    if notes:
        lines += ["", "Why not (the paper's arguments):", "", *notes]
    return "\n".join(lines) + "\n"


def csv_text(table: CraspTable) -> str:
    """The table as CSV, one line per task; per encoding (APE, NoPE, and APE+reg when the
    store has such runs; columns ``APE_status``, ..., ``APE+reg_agree``) its status, seed
    counts, the bins and the mean accuracies (space-separated, in bin order)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    head = ["task", "label", "crasp", "crasp_reason", "crasp_periodic_local"]
    head += ["crasp_periodic_local_reason", "star_free", "ac0", "ac0_source", "dot_depth"]
    head += ["prediction"]
    if table.measured:
        for e in table.encodings:
            head += [f"{e}_{k}" for k in ("status", "seeds", "fitted", "bins", "all", "fitted_acc")]
            head += [f"{e}_agree"]
        head += ["agree"]
    if table.ladder is not None:
        head += [f"{e}_trend" for e in table.encodings]
    writer.writerow(head)
    for r in table.rows:
        x = r.row
        row = [x.task, x.info.label, x.crasp.answer, x.crasp.program or x.crasp.reason]
        row += [x.crasp_periodic_local.answer]
        row += [x.crasp_periodic_local.program or x.crasp_periodic_local.reason]
        row += [yes_no(x.star_free) or "", yes_no(x.ac0) or "", x.ac0_source, x.dot_depth or ""]
        row += [x.prediction]
        if table.measured:
            for e in table.encodings:
                m = r.measurement(e)
                if m is None:
                    row += ["not measured", 0, 0, "", "", "", "not measured"]
                    continue
                acc = [
                    " ".join(f"{d[b]:.4f}" if b in d else "nan" for b in m.bins) if d else ""
                    for d in (m.all, m.fitted)
                ]
                row += [m.status, len(m.seeds), len(m.fitted_seeds), " ".join(m.bins), *acc]
                row += [r.agreement(e)]
            row += [r.agree]
        if table.ladder is not None:
            row += [r.trend(e) for e in table.encodings]
        writer.writerow(row)
    return buffer.getvalue()


__all__ = ["csv_text", "definitions", "markdown", "record", "records", "yes_no"]
