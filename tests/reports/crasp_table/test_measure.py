"""Grouping stored runs by encoding: APE, NoPE and APE+reg (APE with ``train.pe_penalty > 0``),
read from the stored resolved configs of a hand-filled store (expected values by hand)."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.reports.crasp_table.measure import encoding_of, measure

from .hand_runs import APE, NOPE, REG
from .hand_runs import THREE as _THREE

# the three encodings' runs, and a RoPE run that the table does not read
THREE = [*_THREE, ("aa_star", "rope", 0, {"model.pe": "rope"}, (1.0, 1.0, 1.0))]


def _means(m):
    return {b: pytest.approx(v) for b, v in m.items()}


def test_ape_ape_reg_and_nope_are_three_measurements(hand_store):
    measured = measure(hand_store(THREE), threshold=0.9)
    assert set(measured) == {("aa_star", "APE"), ("aa_star", "APE+reg"), ("aa_star", "NoPE")}
    ape, reg, nope = (measured[("aa_star", e)] for e in ("APE", "APE+reg", "NoPE"))
    assert (ape.encoding, reg.encoding, nope.encoding) == ("APE", "APE+reg", "NoPE")
    assert ape.seeds == (0, 1) and ape.fitted_seeds == (0, 1)
    assert ape.all == _means({"1-50": 1.0, "51-100": 0.94, "101-150": 0.91})
    assert ape.status == "generalizes"
    # seed 2 reached only 80% on 1-50: finished but not fitted
    assert reg.seeds == (0, 1, 2) and reg.fitted_seeds == (0, 1)
    assert reg.all == _means({"1-50": 2.8 / 3, "51-100": 0.7, "101-150": 0.5})
    assert reg.fitted == _means({"1-50": 1.0, "51-100": 0.6, "101-150": 0.3})
    assert reg.status == "does not generalize"
    assert reg.id_bins == ("1-50",) and reg.counts == {"1-50": 10, "51-100": 10, "101-150": 10}
    assert nope.seeds == (0,) and nope.all == _means({"1-50": 1.0, "51-100": 0.3, "101-150": 0.1})
    assert nope.status == "does not generalize"


def test_the_encoding_comes_from_the_config_not_the_variant_name(hand_store):
    swapped = [
        ("aa_star", "ape_reg", 0, APE, (1.0, 1.0, 1.0)),
        ("aa_star", "ape_reg", 1, APE, (1.0, 1.0, 0.8)),
        ("aa_star", "ape", 0, REG, (1.0, 0.0, 0.0)),
    ]
    measured = measure(hand_store(swapped))
    assert measured[("aa_star", "APE")].seeds == (0, 1)
    assert measured[("aa_star", "APE")].all["101-150"] == pytest.approx(0.9)
    assert measured[("aa_star", "APE+reg")].seeds == (0,)
    assert measured[("aa_star", "APE+reg")].all["51-100"] == 0.0


def test_without_pe_penalty_there_is_no_third_encoding(hand_store):
    # the weight penalty alone keeps a run in APE
    runs = [
        ("aa_star", "ape_wd", 0, {"model.pe": "ape", "train.weight_penalty": 0.01}, (1, 1, 1)),
        ("aa_star", "nope", 0, NOPE, (1.0, 0.5, 0.5)),
    ]
    assert set(measure(hand_store(runs))) == {("aa_star", "APE"), ("aa_star", "NoPE")}


@pytest.mark.parametrize(
    "second, encoding",
    [
        ({"model.pe": "ape", "train.weight_penalty": 0.01}, "APE"),  # no pe_penalty: APE
        ({**REG, "train.pe_penalty": 1e-2}, "APE\\+reg"),
    ],
)
def test_two_settings_of_one_encoding_are_still_an_error(hand_store, second, encoding):
    first = APE if encoding == "APE" else REG
    runs = [
        ("aa_star", "one", 0, first, (1.0, 1.0, 1.0)),
        ("aa_star", "two", 0, second, (1.0, 1.0, 1.0)),
    ]
    with pytest.raises(
        RasplabError, match=f"2 different settings for task aa_star with {encoding};"
    ):
        measure(hand_store(runs))


def test_encoding_of_stored_configs():
    assert encoding_of({"model": {"pe": "ape"}, "train": {"pe_penalty": 0.0}}) == "APE"
    assert encoding_of({"model": {"pe": "ape"}}) == "APE"  # stored before pe_penalty existed
    assert encoding_of({"model": {"pe": "ape"}, "train": {"pe_penalty": 1e-6}}) == "APE+reg"
    # the penalty is zero for NoPE (no position table); such a run stays NoPE
    assert encoding_of({"model": {"pe": "nope"}, "train": {"pe_penalty": 1e-3}}) == "NoPE"
    assert encoding_of({"model": {"pe": "alibi"}, "train": {"pe_penalty": 1e-3}}) is None
