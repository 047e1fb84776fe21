"""Verdicts judge generalization only for settings whose seeds fitted the training lengths."""

from __future__ import annotations

import pytest

from rasplab.reports.aggregate import GroupSummary, Spread
from rasplab.reports.verdicts import as_predicted, verdict, verdict_markdown


def _group(fitted: int, finished: int, accs: dict, unfinished: int = 0) -> GroupSummary:
    spreads = {b: Spread(a, 0.0, a, a, fitted) for b, a in accs.items()}
    return GroupSummary(
        "copy_unique", "nope", "nope", "h", tuple(accs), tuple(range(finished)),
        tuple(range(fitted)), spreads, spreads, None, {}, unfinished,
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


# The rule, written out by hand: with APE (model.pe ape) length generalization is guaranteed
# under either "guaranteed" prediction, with NoPE only under "guaranteed (NoPE)": there the
# verdict is yes / no. Without a guarantee a failure is "consistent" and a success "no
# prediction". "partly" and "fails" are both "does not generalize"; "not fitted" / "not run"
# give no verdict. Verdict order: generalizes, partly, fails, not fitted, not run.
WORDS = ("generalizes", "partly", "fails", "not fitted", "not run")
NV = "no verdict"
C, NP = "consistent", "no prediction"
EXPECTED = {
    ("guaranteed (NoPE)", "ape"): ("yes", "no", "no", NV, NV),
    ("guaranteed (NoPE)", "nope"): ("yes", "no", "no", NV, NV),
    ("guaranteed (APE)", "ape"): ("yes", "no", "no", NV, NV),
    ("guaranteed (APE)", "nope"): (NP, C, C, NV, NV),
    ("not guaranteed", "ape"): (NP, C, C, NV, NV),
    ("not guaranteed", "nope"): (NP, C, C, NV, NV),
}


@pytest.mark.parametrize(("prediction", "pe"), sorted(EXPECTED))
def test_as_predicted_for_every_prediction_encoding_and_verdict(prediction, pe):
    got = tuple(as_predicted(prediction, pe, w) for w in WORDS)
    assert got == EXPECTED[(prediction, pe)]


@pytest.mark.parametrize(
    "prediction",
    ["guaranteed (NoPE)", "guaranteed (APE)", "not guaranteed", "not known", "–"],
)
@pytest.mark.parametrize("pe", ["rope", "alibi", "sinusoidal", None])
def test_no_comparison_for_other_encodings(prediction, pe):
    assert {as_predicted(prediction, pe, w) for w in WORDS} == {"–"}


@pytest.mark.parametrize("pe", ["ape", "nope"])
def test_no_comparison_without_a_prediction(pe):
    assert {as_predicted(p, pe, w) for p in ("not known", "–") for w in WORDS} == {"–"}


# (task, variant, model.pe, per seed: accuracies on 1-50, 51-100, 101-150)
SETTINGS = [
    ("tomita4", "reg", "ape", [(1.0, 0.97, 0.95), (1.0, 0.99, 0.93), (1.0, 0.95, 0.9)]),
    ("tomita4", "plain", "nope", [(1.0, 0.95, 0.2), (1.0, 0.92, 0.1), (0.9, 0.5, 0.0)]),
    ("tomita1", "nope", "nope", [(1.0, 0.95, 0.5)]),
    ("aa_star", "ape", "ape", [(0.8, 0.0, 0.0)]),
    ("tomita2", "rope", "rope", [(1.0, 1.0, 1.0)]),
    ("rasp_sort", "nope", "nope", [(1.0, 1.0, 1.0)]),
]


@pytest.fixture
def store(tmp_path, finish_hand_run):
    """A hand-filled store of real resolved configs (no training): the variant names say
    nothing about the encoding ("reg" is APE, "plain" NoPE); only ``model.pe`` does."""
    from rasplab.harness.config import experiment_from_dict
    from rasplab.harness.store import ResultsStore

    path = tmp_path / "results.sqlite"
    with ResultsStore(path) as store:
        for task, variant, pe, seeds in SETTINGS:
            for seed, accs in enumerate(seeds):
                config = experiment_from_dict(
                    {"task": task, "variant": variant, "seed": seed,
                     "model": {"pe": pe, "layers": 1, "heads": 1, "width": 8},
                     "train": {"steps": 2, "pe_penalty": 1e-3 if variant == "reg" else 0.0}}
                )  # fmt: skip
                finish_hand_run(store, config, dict(zip(("1-50", "51-100", "101-150"), accs)))
    return path


def _verdict_rows(text: str) -> dict:
    """(task, variant) -> (verdict, fitted, C-RASP prediction, as predicted?) from summary.md."""
    section = text.split("## Verdicts", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[0] not in ("task", "---"):
            rows[(cells[0], cells[1])] = (cells[2], cells[3], cells[5], cells[6])
    return rows


def test_report_puts_the_prediction_beside_each_verdict(store, tmp_path):
    from rasplab.reports import build_report

    build_report(store, tmp_path / "out")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert _verdict_rows(text) == {
        ("aa_star", "ape"): ("not fitted", "0/1", "guaranteed (APE)", "no verdict"),
        ("rasp_sort", "nope"): ("generalizes", "1/1", "–", "–"),
        ("tomita1", "nope"): ("partly", "1/1", "guaranteed (NoPE)", "no"),
        ("tomita2", "rope"): ("generalizes", "1/1", "guaranteed (NoPE)", "–"),
        ("tomita4", "plain"): ("partly", "2/3", "guaranteed (APE)", "consistent"),
        ("tomita4", "reg"): ("generalizes", "3/3", "guaranteed (APE)", "yes"),
    }
    assert "only as a plot" in text and "A formal framework for understanding length" in text


def test_each_known_task_section_opens_with_its_prediction(store, tmp_path):
    from rasplab.reports import build_report

    build_report(store, tmp_path / "out")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert (
        "## tomita4\n\nC-RASP prediction: guaranteed (APE) (C-RASP[]: no (App. E.1.2); "
        "C-RASP[periodic,local]: yes (tomita4)).\n\nAll seeds:" in text
    )
    assert "## rasp_sort\n\nAll seeds:" in text


def test_a_setting_without_a_recorded_encoding_is_not_compared():
    """Hand-made summaries with no ``model.pe`` (pe None): the prediction, but "–"."""
    rows = verdict_markdown([_group(5, 5, {"1-50": 1.0, "51-100": 1.0})])
    assert rows[-2].endswith("| guaranteed (APE) | – |")


def _waiting(fitted: int, finished: int, unfinished: int) -> GroupSummary:
    return _group(fitted, finished, {"1-50": 1.0, "51-100": 0.2, "101-150": 0.0}, unfinished)


def test_a_partly_run_setting_is_not_judged_on_its_first_seeds():
    v = verdict(_waiting(1, 1, 4))  # one seed of five done, fitted: not "fails, 1/1"
    assert v.word == "unfinished" and v.reason == "1 of 5 seeds finished, 1 fitted (needs 3)"
    assert as_predicted("guaranteed (NoPE)", "nope", v.word) == "no verdict"


def test_a_setting_that_cannot_reach_the_bar_is_not_fitted_even_unfinished():
    v = verdict(_waiting(0, 3, 2))  # even if both remaining seeds fit: 2 of 5
    assert v.word == "not fitted" and v.reason.endswith("; 3 of 5 seeds finished")


def test_enough_fitted_seeds_are_judged_before_the_rest_finish():
    v = verdict(_waiting(3, 4, 1))
    assert v.word == "fails" and v.reason.endswith("(4 of 5 seeds finished)")
    assert verdict(_waiting(3, 4, 0)).reason.startswith("fitted seeds' mean")
