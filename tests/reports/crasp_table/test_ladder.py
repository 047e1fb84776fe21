"""The budget ladder: rungs from variant names, encodings from configs, the trend rule, and
the trend column of the table (hand-filled stores, no training)."""

from __future__ import annotations

import pytest

from rasplab.reports.crasp_table.ladder import (
    generalizing,
    ladder,
    scores_of,
    trend_text,
    trend_word,
)
from rasplab.reports.crasp_table.table import build_table
from rasplab.reports.crasp_table.text import csv_text, markdown, records

APE = {"model.pe": "ape"}
REG = {"model.pe": "ape", "train.pe_penalty": 1e-3}
NOPE = {"model.pe": "nope"}

# tomita4: APE rises with the steps (longer bins 0.5 -> 0.6 -> 0.8, width x2 0.55);
# APE+reg stays flat (0.4, 0.42); every run fitted 1-50
RUNS = [
    ("tomita4", "ape_x1", 0, APE, (1.0, 0.6, 0.4)),
    ("tomita4", "ape_x1", 1, APE, (1.0, 0.2, 0.0)),  # left out: no other rung has seed 1
    ("tomita4", "ape_x2", 0, APE, (1.0, 0.7, 0.5)),
    ("tomita4", "ape_x4", 0, APE, (1.0, 0.9, 0.7)),
    ("tomita4", "ape_w2", 0, APE, (1.0, 0.6, 0.5)),
    ("tomita4", "ape_reg_x1", 0, REG, (1.0, 0.5, 0.3)),
    ("tomita4", "ape_reg_x4", 0, REG, (1.0, 0.52, 0.32)),
    ("tomita4", "ape", 0, APE, (1.0, 0.1, 0.1)),  # no rung in its name: not a ladder run
]


def test_rungs_scores_and_trends_from_a_store(hand_store):
    data = ladder(hand_store(RUNS))
    assert set(data) == {("tomita4", "APE"), ("tomita4", "APE+reg")}
    ape = scores_of(data[("tomita4", "APE")])
    assert ape == pytest.approx({"x1": 0.5, "x2": 0.6, "x4": 0.8, "w2": 0.55})
    # seed 1 has only the x1 rung: every rung is scored on the seeds all rungs have (seed 0)
    assert data[("tomita4", "APE")]["x1"].seeds == (0,)
    assert trend_word(ape) == "rising"
    reg = scores_of(data[("tomita4", "APE+reg")])
    assert reg == pytest.approx({"x1": 0.4, "x4": 0.42})
    assert trend_text(reg) == "flat (x1 40.0, x4 42.0)"


def test_trend_rule_at_the_margins():
    assert trend_word({"x1": 0.5, "x2": 0.4}) == "falling"
    assert trend_word({"x1": 0.5, "x4": 0.54}) == "flat"
    assert trend_word({"x1": 0.5, "x4": 0.55}) == "rising"
    assert trend_word({"x1": 0.5, "w2": 0.9}) == "not measured"  # one step rung only
    assert trend_text({}) == "not measured"


def test_the_table_gains_a_trend_column_per_encoding(hand_store):
    table = build_table(tasks=["tomita4", "tomita1"], ladder_db=hand_store(RUNS))
    assert table.encodings == ("APE", "NoPE", "APE+reg")
    text = markdown(table)
    assert "| APE trend | NoPE trend | APE+reg trend |" in text
    assert (
        "| rising (x1 50.0, x2 60.0, x4 80.0; w2 55.0) | not measured | flat (x1 40.0, x4 42.0) |"
        in text
    )
    recs = {r["task"]: r for r in records(table)}
    assert recs["tomita1"]["trend"] == {e: "not measured" for e in table.encodings}
    assert recs["tomita4"]["trend"]["APE"].startswith("rising")
    assert csv_text(table).splitlines()[0].endswith("APE_trend,NoPE_trend,APE+reg_trend")
    # without a ladder store the table has no trend column
    assert "trend" not in markdown(build_table(tasks=["tomita4"]))


# d3 with NoPE: generalizes at x1 and x4 (every longer bin >= 90%), not at x2 (101-150 at
# 60%); the w2 seed did not fit its training lengths, so w2 is not a generalizing rung
# although its longer bins are high
HELD = [
    ("d3", "nope_x1", 0, NOPE, (1.0, 1.0, 0.95)),
    ("d3", "nope_x2", 0, NOPE, (1.0, 1.0, 0.6)),
    ("d3", "nope_x4", 0, NOPE, (1.0, 0.99, 1.0)),
    ("d3", "nope_w2", 0, NOPE, (0.5, 1.0, 1.0)),
]


def test_the_trend_names_the_rungs_that_generalize(hand_store):
    rungs = ladder(hand_store(HELD))[("d3", "NoPE")]
    assert generalizing(rungs) == ("x1", "x4")
    assert trend_word(scores_of(rungs)) == "flat"
    table = build_table(tasks=["d3"], ladder_db=hand_store(HELD))
    assert records(table)[0]["trend"]["NoPE"] == (
        "flat (x1 97.5, x2 80.0, x4 99.5; w2 100.0; generalizes at x1, x4)"
    )
    assert '"generalizes at" names the rungs' in markdown(table)
