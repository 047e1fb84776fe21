"""Seed 003's selection: candidates in complexity order, fitted first, best on the first
longer bin, simplest on ties; the choice recorded and used for every seed."""

from __future__ import annotations

import json

import pytest

from rasplab.errors import RasplabError
from rasplab.harness import ResultsStore, run_sweep
from rasplab.harness.select import selection_path


def _sweep(tiny, stop):
    return {
        "name": "sel",
        "base": {**tiny, "train": {**tiny["train"], "steps": 30, "eval_every": 10, "lr": 0.03}},
        "grid": {"task": ["toy_next_set"], "variant": ["ape"], "seed": [0, 1]},
        # an override the candidates must win over while selecting
        "overrides": [{"match": {"task": "toy_next_set"}, "set": {"model.width": 8}}],
        "select": {"grid": {"model.layers": [1], "model.width": [4, 16]}, "stop": stop},
    }


@pytest.mark.parametrize("stop", ["all", "first_fit"])
def test_selection_records_its_choice_and_runs_every_seed_with_it(tiny, tmp_path, stop):
    db = tmp_path / "r.sqlite"
    summary = run_sweep(_sweep(tiny, stop), db, workers=1, progress=False)
    record = json.loads(selection_path(db).read_text())
    (choice,) = record.values()
    assert choice["chosen"]["model.layers"] == 1
    with ResultsStore(db) as store:
        selection_runs = store.runs(sweep="sel-select")
        final = [store.get(r) for r in summary.run_ids]
    widths = sorted(r.config["model"]["width"] for r in selection_runs)
    assert widths == ([4, 16] if stop == "all" else widths)  # candidates as given, not 8
    assert len(final) == 2 and all(r.status == "done" for r in final)
    assert {r.config["model"]["width"] for r in final} == {choice["chosen"]["model.width"]}
    fitted = [r for r in selection_runs if r.fitted]
    if fitted:
        assert choice["how"].startswith("fitted")
    again = run_sweep(_sweep(tiny, stop), db, workers=1, progress=False)
    assert again.executed == 0


def test_select_needs_a_candidate_grid(tiny, tmp_path):
    data = _sweep(tiny, "all")
    data["select"] = {"stop": "all"}
    with pytest.raises(RasplabError, match="select.grid"):
        run_sweep(data, tmp_path / "r.sqlite", workers=1, progress=False)


def test_the_report_shows_the_chosen_configuration(tiny, tmp_path):
    from rasplab.reports import build_report

    db = tmp_path / "r.sqlite"
    run_sweep(_sweep(tiny, "first_fit"), db, workers=1, progress=False)
    build_report(db, tmp_path / "report")
    text = (tmp_path / "report" / "summary.md").read_text()
    assert "## Selected configurations" in text and "task=toy_next_set, variant=ape" in text


def test_the_config_filter_keeps_the_seeds_run_with_the_choice(tiny, tmp_path):
    """`rasplab report --config` of a selection sweep shows its final seeds, not nothing."""
    import yaml
    from typer.testing import CliRunner

    from rasplab.cli import app
    from rasplab.harness.select import grid_ids
    from rasplab.harness.sweepconfig import sweep_from_dict

    db = tmp_path / "r.sqlite"
    data = _sweep(tiny, "all")
    config = sweep_from_dict(data)
    assert grid_ids(config, db) == set()  # nothing chosen yet
    summary = run_sweep(data, db, workers=1, progress=False)
    assert grid_ids(config, db) == set(summary.run_ids)  # the two seeds, not the candidates
    path = tmp_path / "sel.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["report", "--db", str(db), "--config", str(path), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "report of 2 runs (2 finished)" in result.output
