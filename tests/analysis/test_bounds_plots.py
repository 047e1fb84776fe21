"""Figure 1 of the bounds study, drawn from given curves: the smallest N per ω, the fitted line
(or a note that no ω reached the loss), and infinite table cells shown as ∞."""

from __future__ import annotations

import math

from rasplab.analysis.bounds.experiments import Curve
from rasplab.analysis.bounds.plots import loss_figure, loss_markdown
from rasplab.plotting import plt


def _curves():
    return [
        Curve(x, N, 1, (8, 16), (0.5, limit), "run")
        for x, N, limit in [(1.0, 4, 0.2), (1.0, 8, 0.001), (2.0, 4, 0.3), (2.0, 8, 0.002)]
    ]


def _right(fig):
    return fig.axes[2]


def test_figure_1_marks_each_smallest_n_and_the_fitted_line():
    fig = loss_figure(1, _curves(), {1.0: 8, 2.0: 8}, (0.0, 8.0), "ω", 0.01)
    try:
        right = _right(fig)
        points, fit = right.get_lines()
        assert list(points.get_xdata()) == [1.0, 2.0] and list(points.get_ydata()) == [8, 8]
        assert fit.get_label() == "fit: 0.00 ω + 8.0" and list(fit.get_ydata()) == [8.0, 8.0]
        assert right.get_ylabel() == "smallest N with loss ≤ 0.01" and not right.texts
    finally:
        plt.close(fig)


def test_figure_1_says_when_no_omega_reached_the_loss():
    fig = loss_figure(1, _curves(), {1.0: None, 2.0: None}, (None, None), "ω", 1e-9)
    try:
        right = _right(fig)
        assert [t.get_text() for t in right.texts] == ["no ω reached loss ≤ 1e-09"]
        assert [len(line.get_xdata()) for line in right.get_lines()] == [0]
    finally:
        plt.close(fig)


def test_the_table_shows_an_infinite_prediction_as_infinity():
    curve = {"x": 1.0, "N": 4, "seeds": 1, "limit": 0.2, "gamma": 0.5, "L": 2.0, "delta": 1}
    summary = {
        "figure": 1,
        "sweep": "s",
        "epsilon": 0.01,
        "points": [{"omega": 1.0, "N": None}],
        "slope": None,
        "intercept": None,
        "r2": None,
        "curves": [{**curve, "log2_predicted_N": math.inf}],
    }
    text = loss_markdown(summary, "omega", "ω")
    assert "ω = 1: –" in text and text.splitlines()[-1] == "| 1 | 4 | 1 | 0.2 | 0.5 | 2 | 1 | ∞ |"
