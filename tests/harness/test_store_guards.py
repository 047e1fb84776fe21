"""The results store guards itself: foreign, garbled, newer and damaged databases are refused
with one line (exit 2 through the CLI) and left untouched; an old store is migrated."""

from __future__ import annotations

import sqlite3

import pytest
import yaml

from rasplab.cli import main
from rasplab.errors import RasplabError
from rasplab.harness.config import ExperimentConfig
from rasplab.harness.store import SCHEMA_VERSION, ResultsStore
from rasplab.harness.sweep import runs_dir_for
from rasplab.harness.sweepconfig import sweep_from_dict
from rasplab.harness.train import RunResult

SMALL = [
    "task=binary_majority",
    "model.layers=1",
    "model.heads=1",
    "model.width=8",
    "train.steps=2",
    "train.batch_size=4",
    "train.eval_every=2",
    "train.bin=1-8",
    "eval.size=8",
    "eval.bins=[1-8]",
]


def run(capsys, *argv):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def _foreign(path):
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE users (name TEXT)")
        con.execute("INSERT INTO users VALUES ('ada')")
    con.close()


def _one_line(code, out, err, *words):
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("rasplab: error:") and all(w in err for w in words), err


@pytest.mark.parametrize("command", ["train", "report"])
def test_a_foreign_database_is_refused_and_left_untouched(capsys, tmp_path, command):
    db = tmp_path / "app.sqlite"
    _foreign(db)
    before = db.read_bytes()
    argv = ["train", *SMALL, "--no-progress"] if command == "train" else ["report"]
    _one_line(*run(capsys, *argv, "--db", str(db)), "not a rasplab results store", "users")
    assert db.read_bytes() == before  # no tables added, not switched to WAL
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
    con.close()


def test_a_garbled_file_is_one_line(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"this is not a database at all" * 100)
    _one_line(*run(capsys, "report", "--db", str(db)), "not a rasplab results store")
    _one_line(*run(capsys, "train", *SMALL, "--no-progress", "--db", str(db)))


def test_a_foreign_runs_table_is_refused(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE runs (id INTEGER)")
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("INSERT INTO meta VALUES ('format', 'rasplab-results-1')")
    con.close()
    _one_line(*run(capsys, "report", "--db", str(db)), "runs table is not rasplab's")


def test_a_row_with_bad_json_is_one_line(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
        store.db.execute("UPDATE runs SET metrics='{not json' WHERE run_id=?", (run_id,))
    _one_line(*run(capsys, "report", "--db", str(db)), run_id, "malformed JSON", "metrics")


def test_a_newer_schema_is_refused(capsys, tmp_path):
    db = tmp_path / "r.sqlite"
    ResultsStore(db).close()
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),)
        )
    con.close()
    _one_line(*run(capsys, "report", "--db", str(db)), "schema version", "upgrade rasplab")


def test_a_garbled_schema_version_is_refused(tmp_path):
    db = tmp_path / "r.sqlite"
    ResultsStore(db).close()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value='two' WHERE key='schema_version'")
    con.close()
    with pytest.raises(RasplabError, match="has schema version 'two'; this rasplab reads"):
        ResultsStore(db)


def test_finish_takes_only_a_finished_result(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
        result = RunResult(
            run_id,
            run_id,
            "binary_majority",
            "nope",
            0,
            "running",
            {},
            {},
            None,
            False,
            0,
            False,
            0.0,
        )
        with pytest.raises(ValueError, match="finish\\(\\) takes a finished result, got status"):
            store.finish(result)
        assert store.get(run_id).status == "pending" and store.count() == 1


def test_a_schema_1_store_is_migrated_with_its_runs(tmp_path):
    db = tmp_path / "old.sqlite"
    with ResultsStore(db) as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
    with sqlite3.connect(db) as con:  # turn it back into a first-release store
        con.execute("ALTER TABLE runs DROP COLUMN claimed_by")
        con.execute("ALTER TABLE runs DROP COLUMN claim_expires")
        con.execute("DELETE FROM meta WHERE key='schema_version'")
    con.close()
    with ResultsStore(db) as store:
        assert store.get(run_id).status == "pending"
        version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'")
        assert int(version.fetchone()[0]) == SCHEMA_VERSION
        columns = {r[1] for r in store.db.execute("PRAGMA table_info(runs)")}
        assert {"claimed_by", "claim_expires"} <= columns


def test_report_on_a_directory_says_so(capsys, tmp_path):
    _one_line(*run(capsys, "report", "--db", str(tmp_path)), "is a directory")


def test_an_empty_file_is_refused_for_reading(tmp_path):
    db = tmp_path / "r.sqlite"
    db.touch()
    with pytest.raises(RasplabError, match="is empty"):
        ResultsStore(db, create=False)


SWEEP = {
    "name": "guarded",
    "base": {
        "task": "binary_majority",
        "model": {"layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 2, "batch_size": 4, "eval_every": 2, "bin": "1-8"},
        "eval": {"size": 8, "bins": ["1-8"]},
    },
    "grid": {"seed": [0]},
}


def test_sweep_refuses_a_damaged_store_with_one_line(capsys, tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump(SWEEP))
    sweep = ["sweep", str(config), "--workers", "1", "--no-progress", "--db"]
    garbled = tmp_path / "garbled.sqlite"
    garbled.write_bytes(b"this is not a database at all" * 100)
    _one_line(*run(capsys, *sweep, str(garbled)), "not a rasplab results store")
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE runs (id INTEGER)")
    con.close()
    _one_line(*run(capsys, *sweep, str(foreign)), "not a rasplab results store", "runs")
    db = tmp_path / "r.sqlite"  # the sweep's own run, stored as done with damaged metrics
    experiments = sweep_from_dict(SWEEP).expand()
    with ResultsStore(db) as store:
        dirs = [str(runs_dir_for(db) / e.hash()) for e in experiments]
        store.register_many(experiments, "guarded", dirs)
        store.db.execute("UPDATE runs SET status='done', metrics='{not json'")
    run_id = experiments[0].hash()
    _one_line(*run(capsys, *sweep, str(db)), run_id, "malformed JSON", "metrics")
    assert not runs_dir_for(db).exists()  # nothing was trained
