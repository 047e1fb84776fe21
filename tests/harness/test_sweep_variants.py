"""Sweep variants named after a registered PE or attention kind need no ``variants:`` entry."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.harness import sweep_from_dict
from rasplab.models.registry import ATTENTION_KINDS, POSITIONAL_ENCODINGS


@pytest.mark.parametrize("name", sorted(POSITIONAL_ENCODINGS))
def test_every_registered_pe_is_a_variant(name):
    sweep = sweep_from_dict({"grid": {"task": ["toy_majority"], "variant": [name]}})
    (run,) = sweep.expand()
    assert run.variant == name
    assert run.model.pe == name
    assert run.model.attention == "softmax"


@pytest.mark.parametrize("name", sorted(ATTENTION_KINDS))
def test_every_registered_attention_is_a_variant(name):
    sweep = sweep_from_dict({"grid": {"task": ["toy_majority"], "variant": [name]}})
    (run,) = sweep.expand()
    assert run.model.attention == name


def test_randomized_pes_resolve_without_a_variants_entry():
    sweep = sweep_from_dict(
        {"grid": {"task": ["toy_majority"], "variant": ["random_sin", "random_ape", "ape"]}}
    )
    assert {run.variant: run.model.pe for run in sweep.expand()} == {
        "random_sin": "random_sin",
        "random_ape": "random_ape",
        "ape": "ape",
    }


def test_an_explicit_variants_entry_still_wins():
    sweep = sweep_from_dict(
        {
            "grid": {"task": ["toy_majority"], "variant": ["random_ape"]},
            "variants": {"random_ape": {"model.pe": "random_sin"}},
        }
    )
    (run,) = sweep.expand()
    assert run.model.pe == "random_sin"


def test_an_unknown_variant_lists_the_randomized_pes():
    sweep = sweep_from_dict({"grid": {"task": ["toy_majority"], "variant": ["random_rope"]}})
    with pytest.raises(RasplabError, match="random_rope") as caught:
        sweep.expand()
    assert "random_ape" in str(caught.value) and "random_sin" in str(caught.value)
