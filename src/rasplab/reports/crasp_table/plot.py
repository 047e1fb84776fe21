"""The C-RASP table as one PNG figure (matplotlib, Agg backend).

One row per task. Left: the verdicts (C-RASP[], C-RASP[periodic,local], star-free, AC0) as
coloured cells (yes green, no red, none found orange, does not apply grey) and the
prediction. Right, when a results store was read: for APE, for NoPE, and for APE+reg when the
store has APE runs with the positional penalty, the mean accuracy over all finished seeds in
each test bin (in-distribution first, then the longer bins; the cell colour is the
accuracy) and the fitted/finished seed count; last, whether the row agrees with the
prediction.
"""

from __future__ import annotations

from rasplab.plotting import plt, png_bytes
from rasplab.reports.crasp_table.table import CraspTable

VERDICT_COLORS = {
    "yes": (0.55, 0.80, 0.55),
    "no": (0.93, 0.55, 0.52),
    "none found": (0.98, 0.75, 0.45),
    "not known": (1.0, 1.0, 1.0),
    None: (0.85, 0.85, 0.85),
}
AGREE_COLORS = {
    "yes": VERDICT_COLORS["yes"],
    "no": VERDICT_COLORS["no"],
    "consistent": (0.80, 0.88, 0.95),
    "no prediction": (0.80, 0.88, 0.95),
    "inconclusive": (0.95, 0.90, 0.55),
    "not measured": VERDICT_COLORS[None],
}


def _cells(table: CraspTable) -> tuple[list[str], list[list[tuple[str, tuple]]]]:
    """Column headers and, per row, (text, colour) cells."""
    cmap = plt.get_cmap("RdYlGn")
    n_bins = max((len(m.bins) for r in table.rows for m in r.measurements.values()), default=0)
    head = ["C-RASP[]", "[per.,local]", "star-free", "AC0", "prediction"]
    if table.measured:
        for e in table.encodings:
            head += [f"{e}\nbin {k + 1}" for k in range(n_bins)] + [f"{e}\nfitted"]
        head += ["agree"]
    out = []
    for r in table.rows:
        x = r.row
        star = None if x.star_free is None else ("yes" if x.star_free else "no")
        ac0 = "not known" if x.ac0 is None else ("yes" if x.ac0 else "no")
        cells = [
            (x.crasp.answer, VERDICT_COLORS[x.crasp.answer]),
            (x.crasp_periodic_local.answer, VERDICT_COLORS[x.crasp_periodic_local.answer]),
            (star or "–", VERDICT_COLORS[star]),
            (f"{ac0}*" if x.ac0_source == "Table 3" else ac0, VERDICT_COLORS[ac0]),
            (x.prediction, (1.0, 1.0, 1.0)),
        ]
        if table.measured:
            for e in table.encodings:
                m = r.measurement(e)
                for k in range(n_bins):
                    b = m.bins[k] if m is not None and k < len(m.bins) else None
                    acc = m.all.get(b) if b is not None else None
                    if acc is None:
                        cells.append(("", VERDICT_COLORS[None]))
                    else:
                        cells.append((f"{100 * acc:.0f}", cmap(acc)[:3]))
                seeds = f"{len(m.fitted_seeds)}/{len(m.seeds)}" if m is not None else "–"
                cells.append((seeds, (1.0, 1.0, 1.0)))
            cells.append((r.agree, AGREE_COLORS[r.agree]))
        out.append(cells)
    return head, out


def table_figure(table: CraspTable):
    """The figure (the caller closes it)."""
    head, cells = _cells(table)
    n_rows, n_cols = len(cells), len(head)
    fig, ax = plt.subplots(figsize=(3.0 + 0.95 * n_cols, 0.9 + 0.32 * n_rows))
    for i, row in enumerate(cells):
        for j, (text, color) in enumerate(row):
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=color, edgecolor="white"))
            dark = 0.3 * color[0] + 0.6 * color[1] + 0.1 * color[2] < 0.45
            ax.text(
                j + 0.5,
                i + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    ax.set_xticks([j + 0.5 for j in range(n_cols)], head, fontsize=7)
    ax.xaxis.tick_top()
    labels = [f"{r.row.task} ({r.row.info.label})" for r in table.rows]
    ax.set_yticks([i + 0.5 for i in range(n_rows)], labels, fontsize=7)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    title = "C-RASP expressibility and the predicted length generalization"
    if table.measured:
        title += (
            f"\nmeasured: mean accuracy (%) over all seeds per bin; threshold {table.threshold:g}"
        )
    ax.set_title(title, fontsize=9, pad=28 if table.measured else 14)
    ax.text(
        0,
        n_rows + 0.8,
        "* AC0 cited from Table 3 (algorithmic tasks); star-free and AC0 of the languages "
        "computed from their automata",
        fontsize=6,
        va="top",
    )
    return fig


def table_figure_png(table: CraspTable) -> bytes:
    """The figure rendered to PNG bytes."""
    return png_bytes(table_figure(table))


__all__ = ["table_figure", "table_figure_png"]
