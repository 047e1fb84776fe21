"""``rasplab trace-grid``: programs x seeds, each run once, resumed runs kept, summary over seeds."""

from __future__ import annotations

import json

import pytest
import yaml

from rasplab.cli import main

TINY = {"train_lengths": "0-6", "test_lengths": "0-10", "train_samples": 40, "test_samples": 30,
        "steps": 20, "hidden_size": 16}  # fmt: skip


def run(argv, capsys):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def accuracy(result: dict, key: str, above: bool) -> float:
    """Share right among test examples whose ``key`` is above (or at most) the split."""
    cells = [ok for v, ok in zip(result[key], result["correct"]) if (v > result["split"]) == above]
    return sum(cells) / len(cells)


def test_grid_runs_each_point_once_and_summarizes_over_seeds(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({
        "runs": [{"program": "parity_sequential_relative", "config": str(config)}],
        "seeds": [0, 1]}))  # fmt: skip
    out = tmp_path / "out"
    code, text, _ = run(["trace-grid", str(grid), "--out", str(out), "--json"], capsys)
    assert code == 0
    first = json.loads(text)
    assert [r["resumed"] for r in first["runs"]] == [False, False]
    results = [
        json.loads((out / "parity_sequential_relative" / f"seed={s}" / "result.json").read_text())
        for s in (0, 1)
    ]
    assert [r["config"]["seed"] for r in results] == [0, 1]
    summary = first["summary"]["parity_sequential_relative"]
    for key, name, above in (("lengths", "length_gt_20", True), ("ones", "ones_gt_20", True),
                             ("lengths", "length_le_20", False)):  # fmt: skip
        values = [accuracy(r, key, above) for r in results]
        assert summary[name]["mean"] == pytest.approx(sum(values) / 2)

    code, text, _ = run(["trace-grid", str(grid), "--out", str(out), "--json"], capsys)
    again = json.loads(text)
    assert code == 0 and [r["resumed"] for r in again["runs"]] == [True, True]
    assert again["summary"] == first["summary"]

    config.write_text(yaml.safe_dump({**TINY, "steps": 21}))
    code, _, err = run(["trace-grid", str(grid), "--out", str(out)], capsys)
    assert code == 2 and "another config" in err and len(err.strip().splitlines()) == 1


def test_grid_set_overrides_every_run_and_is_part_of_the_resume_check(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({
        "runs": [{"program": "parity_sequential_relative", "config": str(config)}],
        "seeds": [3]}))  # fmt: skip
    out = tmp_path / "out"
    argv = ["trace-grid", str(grid), "--out", str(out), "--json", "--set", "mlp=written"]
    code, text, _ = run(argv, capsys)
    saved = json.loads((out / "parity_sequential_relative" / "seed=3" / "result.json").read_text())
    assert code == 0 and saved["config"]["mlp"] == "written" and saved["config"]["seed"] == 3
    code, text, _ = run(argv, capsys)
    assert code == 0 and [r["resumed"] for r in json.loads(text)["runs"]] == [True]
    code, _, err = run(argv[:-2], capsys)  # the default (whole) is another config
    assert code == 2 and "another config" in err


def test_bad_grid_is_one_line_and_exit_2(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({"runs": [{"program": "p"}], "seeds": [0, 0]}))
    code, _, err = run(["trace-grid", str(grid), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "lists a seed twice" in err
    grid.write_text(yaml.safe_dump({"runs": [{"name": "p"}]}))
    code, _, err = run(["trace-grid", str(grid), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "{program: NAME, config: FILE}" in err
    assert not (tmp_path / "o").exists()


def test_shipped_grids_load_with_their_configs():
    from pathlib import Path

    from rasplab.analysis.trace_config import load_trace_config
    from rasplab.analysis.trace_grid import load_trace_grid

    root = Path(__file__).resolve().parents[2]
    grids = sorted((root / "configs" / "trace_supervision").glob("*_grid.yaml"))
    assert grids
    for path in grids:
        for run, seed in load_trace_grid(path).points():
            assert load_trace_config(root / run.config, {"seed": seed}).seed == seed
