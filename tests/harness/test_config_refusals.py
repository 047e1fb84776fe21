"""Experiment configs: each wrong value is one line naming the key (types coerced only where
lossless), and the run label names a non-default attention."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.harness.config import experiment_from_dict, parse_override, set_dotted


def _with(section: str, **values) -> dict:
    return {"task": "binary_majority", section: values}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1], "an experiment config must be a mapping with keys"),
        (_with("train", beta1=1.0), "train.beta1 must be in [0, 1); got 1.0"),
        (_with("train", min_lr_ratio=2.0), "train.min_lr_ratio must be in [0, 1]; got 2.0"),
        (_with("train", device="tpu"), "train.device must be one of"),
        (_with("eval", bins=[]), "eval.bins must list at least one bin"),
        (_with("eval", slices=[]), "eval.slices must list at least one slice"),
        ({"task": "binary_majority", "task_options": [1]}, "task_options must be a mapping"),
        (_with("train", early_stop="yes"), "train.early_stop must be true or false; got 'yes'"),
        (_with("train", lr="fast"), "train.lr must be a number; got 'fast'"),
        (_with("train", lr=[1]), "train.lr must be a number; got [1]"),
        (_with("train", schedule=3), "train.schedule must be a string; got 3"),
        (_with("eval", bins={"a": 1}), "eval.bins must be a list; got {'a': 1}"),
        ({"task": "binary_majority", "train": [1]}, "train must be a mapping of keys to values"),
    ],
)
def test_a_wrong_value_is_one_line_naming_its_key(data, message):
    with pytest.raises(RasplabError) as caught:
        experiment_from_dict(data)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_lossless_coercions_and_defaults():
    config = experiment_from_dict(_with("train", steps=20.0))
    assert config.train.steps == 20 and isinstance(config.train.steps, int)
    assert experiment_from_dict(None).task == experiment_from_dict({}).task
    with pytest.raises(RasplabError, match="must be an integer; got 20.5"):
        experiment_from_dict(_with("train", steps=20.5))


def test_the_variant_label_names_a_non_default_attention():
    config = experiment_from_dict({"task": "binary_majority", "model": {"attention": "fox"}})
    assert config.variant == f"{config.model.pe}+fox"


def test_overrides_need_a_key_and_a_section_to_set_into():
    with pytest.raises(RasplabError, match="override '=3' has an empty key"):
        parse_override("=3")
    with pytest.raises(RasplabError, match="cannot set 'train.lr.x': 'lr' is not a section"):
        set_dotted({"train": {"lr": 1}}, "train.lr.x", 2)
