"""Verdicts judge generalization only for settings whose seeds fitted the training lengths."""

from __future__ import annotations

import pytest

from rasplab.reports.aggregate import GroupSummary, Spread
from rasplab.reports.verdicts import verdict, verdict_markdown


def _group(fitted: int, finished: int, accs: dict) -> GroupSummary:
    spreads = {b: Spread(a, 0.0, a, a, fitted) for b, a in accs.items()}
    return GroupSummary(
        "copy_unique", "nope", "nope", "h", tuple(accs), tuple(range(finished)),
        tuple(range(fitted)), spreads, spreads, None, {}, 0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("fitted", "accs", "word"),
    [
        (5, {"1-50": 1.0, "51-100": 0.95, "101-150": 0.91}, "generalizes"),
        (3, {"1-50": 1.0, "51-100": 0.95, "101-150": 0.40}, "partly"),
        (3, {"1-50": 1.0, "51-100": 0.05, "101-150": 0.0}, "fails"),
        (2, {"1-50": 1.0, "51-100": 0.0, "101-150": 0.0}, "not fitted"),
        (0, {"1-50": 0.3, "51-100": 0.0, "101-150": 0.0}, "not fitted"),
    ],
)
def test_verdict_words(fitted, accs, word):
    assert verdict(_group(fitted, 5, accs)).word == word


def test_a_failure_to_learn_is_never_called_a_failure_to_generalize():
    v = verdict(_group(1, 3, {"1-50": 0.9, "51-100": 0.0}))
    assert v.word == "not fitted" and "1/3 seeds fitted" in v.reason
    assert verdict(_group(2, 3, {"1-50": 1.0, "51-100": 0.0})).word == "fails"  # 2 of 3 is 60%+


def test_a_setting_without_finished_seeds_is_not_run():
    assert verdict(_group(0, 0, {})).word == "not run"


def test_verdict_table_has_a_row_per_setting():
    rows = verdict_markdown([_group(5, 5, {"1-50": 1.0, "51-100": 1.0})] * 2)
    assert sum(line.startswith("| copy_unique | nope |") for line in rows) == 2
