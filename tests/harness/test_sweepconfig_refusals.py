"""A sweep config of the wrong shape is one line naming the part; an attention name works as a
variant; an override may match a key of the resolved config that is not on the grid."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.harness.sweepconfig import sweep_from_dict

GRID = {"seed": [0]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            [1, 2],
            "a sweep config must be a mapping with keys name, description, base, grid, variants, "
            "overrides, select",
        ),
        ({"base": {}}, "a sweep config needs a 'grid' (e.g. grid: {seed: [0, 1]})"),
        ({"grid": []}, "sweep 'grid' must map keys (task, variant, seed, train.lr, ...) to lists"),
        ({"grid": GRID, "base": [1]}, "sweep 'base' must be an experiment config mapping"),
        ({"grid": GRID, "select": 3}, "sweep 'select' must be a mapping (grid, seed, stop)"),
        ({"grid": GRID, "variants": ["a"]}, "sweep 'variants' must map variant names to overrides"),
        ({"grid": GRID, "variants": {"a": 1}}, "sweep variants.a must map dotted keys to values"),
        (
            {"grid": GRID, "overrides": [{"match": {}}]},
            "sweep overrides[0] must be a mapping with 'match' and 'set'",
        ),
        (
            {"grid": GRID, "overrides": [{"match": 1, "set": {}}]},
            "sweep overrides[0]: 'match' and 'set' must be mappings",
        ),
    ],
)
def test_a_malformed_sweep_is_one_line(data, message):
    with pytest.raises(RasplabError) as caught:
        sweep_from_dict(data)
    assert str(caught.value) == message


def test_attention_names_are_variants_and_overrides_match_resolved_keys():
    sweep = sweep_from_dict(
        {
            "base": {"task": "binary_majority", "model": {"layers": 1}},
            "grid": {"variant": ["nope", "softmax"], "seed": [0]},
            "overrides": [{"match": {"model.attention": "softmax"}, "set": {"train.lr": 0.5}}],
        }
    )
    assert sweep.variant_sets("softmax") == {"model.attention": "softmax"}
    runs = {c.variant: c for c in sweep.expand()}
    assert runs["softmax"].model.attention == "softmax" and runs["softmax"].train.lr == 0.5
    assert runs["nope"].model.pe == "nope" and runs["nope"].train.lr != 0.5
