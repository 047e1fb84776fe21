"""No wrong answer with exit 0 from training: non-finite config values are refused, a run
whose loss becomes non-finite is stored and reported as ``diverged`` (never ``done``), and
every result file holds strict JSON."""

from __future__ import annotations

import json
import sqlite3

import pytest

from rasplab.cli import main

SMALL = [
    "task=binary_majority",
    "model.layers=1",
    "model.heads=1",
    "model.width=8",
    "train.steps=6",
    "train.batch_size=4",
    "train.eval_every=2",
    "train.bin=1-8",
    "eval.size=8",
    "eval.bins=[1-8]",
    "--no-progress",
]


def run(capsys, *argv):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "nan", "1e400"])
def test_non_finite_config_numbers_are_refused(capsys, tmp_path, value):
    db = tmp_path / "r.sqlite"
    code, out, err = run(capsys, "train", *SMALL, f"train.lr={value}", "--db", str(db))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "train.lr must be a finite number" in err
    assert not db.exists()


def test_a_diverging_run_is_stored_and_reported_as_diverged(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    argv = ["train", *SMALL, "train.lr=1e30", "train.grad_clip=0", "--db", str(db), "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and "DIVERGED" in err
    result = json.loads(out)
    assert result["status"] == "diverged"
    with sqlite3.connect(db) as con:
        status, metrics, curves = con.execute("SELECT status, metrics, curves FROM runs").fetchone()
    con.close()
    assert status == "diverged"
    strict = {"parse_constant": lambda c: pytest.fail(f"non-standard JSON constant {c}")}
    json.loads(metrics, **strict), json.loads(curves, **strict)
    run_dir = tmp_path / "r-runs" / result["run_id"]
    json.loads((run_dir / "result.json").read_text(), **strict)

    code, _, err = run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "rep"))
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert code == 0 and "## Diverged runs" in summary and result["run_id"] in summary
