"""Issue #39: a learn sweep YAML with a key given twice, no seeds, or one seed twice (which
reported "over 2 seeds" from one run) is refused in one line, before any run."""

from __future__ import annotations

import pytest

from rasplab.cli import main


@pytest.mark.parametrize(
    "text, message",
    [
        ("base: {task: rasp_hist}\nbase: {task: rasp_sort}\n", "duplicate key 'base'"),
        ("base: {task: rasp_hist}\nseeds: []\n", "must be a non-empty list"),
        ("base: {task: rasp_hist}\nseeds: [0, 0]\n", "lists seed 0 more than once"),
        ("base: {task: rasp_hist}\nseeds: [true]\n", "non-negative integers; got [True]"),
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
