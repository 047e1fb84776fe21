"""The results store: an embedded SQLite database with one row per run.

Each row holds the run id (the hash of the resolved config), the resolved config (JSON), task,
variant, seed, status (``pending``, ``running``, ``done``, ``failed``), per-bin metrics,
training curves, steps, wall time, whether the in-distribution bins were fitted, the code
version, and how many times the run was started (``attempts``). A result is written in one
transaction, so a process killed at any moment leaves either the finished row or none.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     store = ResultsStore(os.path.join(d, "r.sqlite"))
...     store.count()
0
"""

from __future__ import annotations

import functools
import json
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rasplab.errors import RasplabError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id       TEXT PRIMARY KEY,
    config_hash  TEXT NOT NULL,
    setting_hash TEXT NOT NULL,
    sweep        TEXT,
    task         TEXT NOT NULL,
    variant      TEXT NOT NULL,
    seed         INTEGER NOT NULL,
    config       TEXT NOT NULL,
    status       TEXT NOT NULL,
    metrics      TEXT,
    curves       TEXT,
    fitted       INTEGER,
    steps        INTEGER,
    wall_time    REAL,
    code_version TEXT,
    run_dir      TEXT,
    error        TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL DEFAULT (datetime('now')),
    finished_at  TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('format', 'rasplab-results-1');
"""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """rasplab's version, plus the git commit when the source is in a git checkout."""
    from rasplab import __version__

    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return __version__
    commit = out.stdout.strip()
    return f"{__version__}+g{commit}" if out.returncode == 0 and commit else __version__


@dataclass(frozen=True)
class RunRecord:
    """One stored run, decoded (``metrics`` has ``bins``, ``counts``, ``mse``)."""

    run_id: str
    config_hash: str
    setting_hash: str
    sweep: str | None
    task: str
    variant: str
    seed: int
    config: dict
    status: str
    metrics: dict | None
    curves: list | None
    fitted: bool | None
    steps: int | None
    wall_time: float | None
    code_version: str | None
    run_dir: str | None
    error: str | None
    attempts: int


class ResultsStore:
    """Read and write runs in a SQLite file (created unless ``create=False``)."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise RasplabError(
                f"results database {str(self.path)!r} does not exist; run `rasplab sweep` or "
                "`rasplab train` first, or pass --db PATH"
            )
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                why = "a file is in the way" if isinstance(err, FileExistsError) else err.strerror
                raise RasplabError(
                    f"cannot create the folder of results database {str(self.path)!r}: {why or err}"
                ) from err
        try:
            self.db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
            if create:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.executescript(SCHEMA)
            fmt = self.db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        except sqlite3.DatabaseError as err:
            raise RasplabError(
                f"results database {str(self.path)!r} is not a rasplab results store ({err})"
            ) from err
        if fmt is None or fmt[0] != "rasplab-results-1":
            raise RasplabError(
                f"results database {str(self.path)!r} is not a rasplab results store"
            )

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def register(self, config, sweep: str | None = None, run_dir: str | None = None) -> str:
        """Add a run as ``pending`` unless it is already stored; return its run id."""
        run_id = config.hash()
        self.db.execute(
            "INSERT OR IGNORE INTO runs (run_id, config_hash, setting_hash, sweep, task, variant,"
            " seed, config, status, run_dir) VALUES (?,?,?,?,?,?,?,?,'pending',?)",
            (
                run_id,
                run_id,
                config.setting_hash(),
                sweep,
                config.task,
                config.variant,
                config.seed,
                json.dumps(config.to_dict(), sort_keys=True),
                run_dir,
            ),
        )
        return run_id

    def status(self, run_id: str) -> str | None:
        """The status of a run, or None when it is not stored."""
        row = self.db.execute("SELECT status FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return row[0] if row else None

    def mark_running(self, run_id: str) -> None:
        """Record that a run has started (and count the attempt)."""
        self.db.execute(
            "UPDATE runs SET status='running', attempts=attempts+1, error=NULL WHERE run_id=?",
            (run_id,),
        )

    def finish(self, result) -> None:
        """Store a finished :class:`~rasplab.harness.train.RunResult` in one transaction."""
        metrics = {
            "bins": result.bins,
            "counts": result.counts,
            "mse": result.mse,
            "stopped_early": result.stopped_early,
            "loss_reached_step": getattr(result, "loss_reached_step", None),
        }
        self.db.execute(
            "UPDATE runs SET status='done', metrics=?, curves=?, fitted=?, steps=?, wall_time=?,"
            " code_version=?, run_dir=?, error=NULL, finished_at=datetime('now') WHERE run_id=?",
            (
                json.dumps(metrics),
                json.dumps(result.curves),
                int(result.fitted),
                result.steps,
                result.wall_time,
                result.code_version,
                result.run_dir,
                result.run_id,
            ),
        )

    def fail(self, run_id: str, error: str) -> None:
        """Mark a run as failed with its error message."""
        self.db.execute(
            "UPDATE runs SET status='failed', error=?, finished_at=datetime('now') WHERE run_id=?",
            (error, run_id),
        )

    def count(self, status: str | None = None) -> int:
        """The number of stored runs (with ``status`` if given)."""
        if status is None:
            return self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM runs WHERE status=?", (status,)).fetchone()[0]

    def runs(self, status: str | None = None, sweep: str | None = None) -> list[RunRecord]:
        """Stored runs ordered by task, variant, seed (optionally filtered)."""
        query = (
            "SELECT run_id, config_hash, setting_hash, sweep, task, variant, seed, config,"
            " status, metrics, curves, fitted, steps, wall_time, code_version, run_dir, error,"
            " attempts FROM runs"
        )
        where, args = [], []
        if status is not None:
            where.append("status=?")
            args.append(status)
        if sweep is not None:
            where.append("sweep=?")
            args.append(sweep)
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY task, variant, setting_hash, seed, run_id"
        try:
            rows = self.db.execute(query, args).fetchall()
        except sqlite3.DatabaseError as err:
            raise RasplabError(
                f"results database {str(self.path)!r} is unreadable ({err})"
            ) from err
        return [_record(row) for row in rows]

    def get(self, run_id: str) -> RunRecord | None:
        """One run by id, or None."""
        return next((r for r in self.runs() if r.run_id == run_id), None)


def _record(row) -> RunRecord:
    """Decode one SELECTed row into a :class:`RunRecord`."""
    (
        run_id,
        config_hash,
        setting_hash,
        sweep,
        task,
        variant,
        seed,
        config,
        status,
        metrics,
        curves,
        fitted,
        steps,
        wall_time,
        version,
        run_dir,
        error,
        attempts,
    ) = row
    return RunRecord(
        run_id=run_id,
        config_hash=config_hash,
        setting_hash=setting_hash,
        sweep=sweep,
        task=task,
        variant=variant,
        seed=seed,
        config=json.loads(config),
        status=status,
        metrics=json.loads(metrics) if metrics else None,
        curves=json.loads(curves) if curves else None,
        fitted=None if fitted is None else bool(fitted),
        steps=steps,
        wall_time=wall_time,
        code_version=version,
        run_dir=run_dir,
        error=error,
        attempts=attempts,
    )
