"""Seed 004's figures drawn from the experiment summaries (PNG via rasplab.plotting).

Figures 1 and 2 have three panes: test loss against test length per training length N
(left, the smallest x), the limiting loss against N per x (middle), and the right pane: for
Figure 1 the smallest N reaching ε against ω with the fitted line, for Figure 2 the limiting
loss against N/p per p (overlapping curves mean N ∝ Δ). Figure 3: mean ± std of the last
query's attention on positions ≡ k (mod p) and on the others, with the 1/16 line.
"""

from __future__ import annotations

import math

from rasplab.plotting import plt, save_figure  # noqa: F401  (save_figure re-exported)


def loss_figure(figure: int, curves, needed: dict, line: tuple, label: str, epsilon: float):
    """Figures 1 and 2 (see the module docstring)."""
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 3.6))
    xs = sorted({c.x for c in curves})
    shown = xs[0]  # the smallest x: the setting a short run fits best
    for c in (c for c in curves if c.x == shown):
        left.plot(c.test_lengths, c.mse, marker="o", label=f"N = {c.N}")
    left.set(xlabel="test length", ylabel="test MSE", yscale="log", title=f"{label} = {shown:g}")
    left.legend(fontsize=7)
    for x in xs:
        mine = [c for c in curves if c.x == x]
        middle.plot(
            [c.N for c in mine], [c.limit for c in mine], marker="o", label=f"{label} = {x:g}"
        )
        if figure == 2:
            right.plot(
                [c.N / x for c in mine], [c.limit for c in mine], marker="o", label=f"p = {x:g}"
            )
    middle.set(xlabel="training length N", ylabel="limiting test MSE", yscale="log")
    middle.axhline(epsilon, color="k", ls=":", lw=0.8)
    middle.legend(fontsize=7)
    if figure == 1:
        hit = [(x, N) for x, N in needed.items() if N is not None]
        right.plot([x for x, _ in hit], [N for _, N in hit], "o", color="C3")
        slope, intercept = line
        if slope is not None:
            right.plot(
                xs,
                [slope * x + intercept for x in xs],
                "k--",
                lw=1,
                label=f"fit: {slope:.2f} ω + {intercept:.1f}",
            )
            right.legend(fontsize=7)
        if not hit:
            right.text(
                0.5, 0.5, f"no ω reached loss ≤ {epsilon:g}", ha="center", transform=right.transAxes
            )
        right.set(xlabel="ω", ylabel=f"smallest N with loss ≤ {epsilon:g}")
    else:
        right.set(xlabel="N / p", ylabel="limiting test MSE", yscale="log")
        right.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure3(rows: list[dict]):
    """Figure 3: attention on positions ≡ k (mod p) vs the others, by training length."""
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    Ns = [r["N"] for r in rows]
    ax.errorbar(
        Ns,
        [r["on_mean"] for r in rows],
        [r["on_std"] for r in rows],
        marker="o",
        capsize=3,
        label="≡ k (mod p)",
    )
    ax.errorbar(
        Ns,
        [r["off_mean"] for r in rows],
        [r["off_std"] for r in rows],
        marker="s",
        capsize=3,
        label="other positions",
    )
    ax.axhline(
        rows[0]["uniform"], color="k", ls="--", lw=1, label=f"1/{round(1 / rows[0]['uniform'])}"
    )
    ax.set(xlabel="training length N", ylabel="attention probability")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _num(v) -> str:
    """A table cell: 3 significant digits, ∞ for None/inf, – for missing."""
    if v is None:
        return "–"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def loss_markdown(summary: dict, option: str, label: str) -> str:
    """The markdown table of Figures 1 and 2: one row per (x, N) with the bound's numbers."""
    eps = summary["epsilon"]
    lines = [
        f"# Seed 004 Figure {summary['figure']} ({summary['sweep']})",
        "",
        f"Smallest N with limiting test MSE ≤ {eps:g}: "
        + ", ".join(f"{label} = {p[option]:g}: {_num(p['N'])}" for p in summary["points"]),
        f"Fit N(ε) = slope · {label} + intercept: slope {_num(summary['slope'])}, "
        f"intercept {_num(summary['intercept'])}, R² {_num(summary['r2'])}",
        "",
        f"| {label} | N | seeds | limiting MSE | γ | L | Δ | log2 predicted N (C = 1) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in summary["curves"]:
        lines.append(
            f"| {c['x']:g} | {c['N']} | {c['seeds']} | {_num(c['limit'])} | {_num(c['gamma'])} "
            f"| {_num(c['L'])} | {c['delta']} | {_num(c['log2_predicted_N'])} |"
        )
    return "\n".join(lines) + "\n"


def figure3_markdown(rows: list[dict]) -> str:
    """The markdown table of Figure 3."""
    lines = [
        "# Seed 004 Figure 3: last-query attention at test length 80 (ModPTask, p = 5)",
        "",
        "| N | ≡ k mean | ≡ k std | other mean | other std | uniform |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['N']} | {r['on_mean']:.4f} | {r['on_std']:.4f} | {r['off_mean']:.4f} "
            f"| {r['off_std']:.4f} | {r['uniform']:.4f} |"
        )
    return "\n".join(lines) + "\n"
