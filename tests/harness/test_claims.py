"""Run claims: two sweeps on one store train every run exactly once; the claims of a killed
process are taken over at once, those of another host when they expire."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import yaml

from rasplab.files import process_alive
from rasplab.harness.claims import claim, owner_id
from rasplab.harness.config import ExperimentConfig
from rasplab.harness.store import ResultsStore

SWEEP = {
    "name": "twice",
    "base": {
        "task": "binary_majority",
        "model": {"layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 2, "batch_size": 4, "eval_every": 2, "bin": "1-8"},
        "eval": {"size": 8, "bins": ["1-8"]},
    },
    "grid": {"variant": ["ape", "nope"], "seed": [0, 1]},
}


def _stored(db, run_id: str, holder: str, expires: float) -> None:
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE runs SET status='running', claimed_by=?, claim_expires=? WHERE run_id=?",
            (holder, expires, run_id),
        )
    con.close()


def test_two_concurrent_sweeps_train_each_run_once(tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump(SWEEP))
    db = tmp_path / "r.sqlite"
    script = (
        "from rasplab.harness import run_sweep\n"
        f"s = run_sweep({str(config)!r}, {str(db)!r}, workers=1, progress=False)\n"
        "print(s.executed, s.skipped, s.total)\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT status, attempts, claimed_by FROM runs").fetchall()
    con.close()
    assert len(rows) == 4
    assert all(
        status == "done" and attempts == 1 and held is None for status, attempts, held in rows
    )
    counts = [tuple(map(int, out.split())) for out in outs]
    assert sum(executed for executed, _, _ in counts) == 4, counts  # each run trained once
    assert all(executed + skipped == total == 4 for executed, skipped, total in counts)


def test_the_claim_of_a_killed_process_is_taken_over_at_once(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from rasplab.harness.claims import claim, owner_id\n"
            "from rasplab.harness.store import ResultsStore\n"
            f"s = ResultsStore({str(db)!r})\n"
            f"print(claim(s, {run_id!r}, owner_id()), flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "claimed"
    with ResultsStore(db) as store:
        assert claim(store, run_id, owner_id()) == "held"
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert not process_alive(holder.pid)
        assert claim(store, run_id, owner_id()) == "claimed"
        assert store.get(run_id).attempts == 2


def test_a_claim_from_another_host_holds_until_it_expires(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
    other = f"not-{socket.gethostname()}:1:t"
    _stored(db, run_id, other, time.time() + 60)
    with ResultsStore(db) as store:
        assert claim(store, run_id, owner_id()) == "held"
    _stored(db, run_id, other, time.time() - 1)
    with ResultsStore(db) as store:
        assert claim(store, run_id, owner_id()) == "claimed"


def test_a_finished_run_is_never_claimed(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        run_id = store.register(ExperimentConfig(task="binary_majority"))
        store.db.execute("UPDATE runs SET status='done' WHERE run_id=?", (run_id,))
        assert claim(store, run_id, owner_id()) == "finished"
