"""`rasplab learn` settings: each impossible combination is one line naming the key."""

from __future__ import annotations

import pytest

from rasplab.errors import RasplabError
from rasplab.learned.config import config_from_dict


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cat_heads": 0, "count_heads": 0}, "learn.cat_heads + learn.count_heads must be >= 1"),
        ({"reads": 3}, "learn.reads must be 2 (each MLP reads two variables); got 3"),
        ({"tau_start": 1.0, "tau_end": 2.0}, "learn.tau_end (2.0) must not exceed learn.tau_start"),
        ({"task_options": [1]}, "learn.task_options must be a mapping, e.g. {k: 6, max_len: 8}"),
        ({"lr": "fast"}, "learn.lr must be a number; got 'fast'"),
        ({"task": None}, "learn config needs a task, e.g. task=rasp_hist"),
    ],
)
def test_an_impossible_setting_is_one_line(changes, message):
    data = {"task": "rasp_hist", **changes}
    if data["task"] is None:
        del data["task"]
    with pytest.raises(RasplabError) as caught:
        config_from_dict(data)
    assert str(caught.value) == message or str(caught.value).startswith(message)


def test_numbers_given_as_text_or_ints_become_floats():
    config = config_from_dict({"task": "rasp_hist", "lr": "0.5", "tau_end": 1})
    assert config.lr == 0.5 and config.tau_end == 1.0 and isinstance(config.tau_end, float)
