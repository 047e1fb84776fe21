"""Issue #39: a learn sweep YAML with a key given twice, no seeds, or one seed twice (which
reported "over 2 seeds" from one run) is refused in one line, before any run."""

from __future__ import annotations

import pytest

from rasplab.cli import main
from rasplab.learned.sweep import sweep_from_dict


@pytest.mark.parametrize(
    "text, message",
    [
        ("base: {task: rasp_hist}\nbase: {task: rasp_sort}\n", "duplicate key 'base'"),
        ("base: {task: rasp_hist}\nseeds: []\n", "must be a non-empty list"),
        ("base: {task: rasp_hist}\nseeds: [0, 0]\n", "lists seed 0 more than once"),
        ("base: {task: rasp_hist}\nseeds: [true]\n", "non-negative integers; got [True]"),
        ("grid: {lr: [0.1]}\n", "a learn sweep needs a mapping with 'base'"),
        ("base: {task: rasp_hist}\ngrid: [1]\n", "'grid' list must hold mappings"),
        ("base: {task: rasp_hist}\ngrid: {lr: []}\n", "must map each key to a non-empty list"),
        ("base: {task: rasp_hist}\nruns: 3\n", "unknown learn sweep keys: runs"),
    ],
)
def test_bad_sweeps_are_refused_before_any_run(tmp_path, capsys, text, message):
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["learn", "--sweep", str(path), "--out", str(out)])
    captured = capsys.readouterr()
    assert done.value.code == 2 and captured.out == "" and message in captured.err
    assert captured.err.count("\n") == 1 and not out.exists()


def test_a_grid_list_names_each_setting_with_its_options():
    sweep = sweep_from_dict(
        {
            "base": {"task": "rasp_hist"},
            "grid": [{"lr": 0.1}, {"task_options": {"max_len": 6}}],
            "seeds": [0],
        }
    )
    names = [name for name, _ in sweep.points()]
    assert names == ["lr=0.1,seed=0", "task_options=max_len=6,seed=0"]
