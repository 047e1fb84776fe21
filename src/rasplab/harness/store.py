"""The results store: an embedded SQLite database with one row per run.

Each row holds the run id (the hash of the resolved config), the resolved config (JSON), task,
variant, seed, status (``pending``, ``running``, ``done``, ``diverged``, ``failed``), per-bin
metrics, training curves, steps, wall time, whether the in-distribution bins were fitted, the
code version, how many times the run was started (``attempts``) and who holds it now (a claim,
see :mod:`rasplab.harness.claims`). A result is written in one transaction, so a process killed
at any moment leaves either the finished row or none.

The store guards itself: a ``meta`` table marks the file as rasplab's (``format``) and names
its ``schema_version``. A database rasplab did not create is refused before anything is
written to it, an older schema is migrated on open, a newer one is refused, and a damaged file
or row is one :class:`~rasplab.errors.RasplabError` line.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     store = ResultsStore(os.path.join(d, "r.sqlite"))
...     store.count()
0
"""

from __future__ import annotations

import functools
import json
import math
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rasplab import __version__
from rasplab.errors import RasplabError

FORMAT = "rasplab-results-1"
SCHEMA_VERSION = 2
"""The store's schema: 1 = the first release; 2 adds run claims (``claimed_by``,
``claim_expires``). An older store is migrated on open; a newer one is refused."""
FINISHED = ("done", "diverged")
"""Statuses of runs that have a result; a sweep never runs them again."""

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
    finished_at  TEXT,
    claimed_by   TEXT,
    claim_expires REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('format', 'rasplab-results-1');
INSERT OR IGNORE INTO meta VALUES ('schema_version', '2');
"""
V1_COLUMNS = {
    "run_id", "config_hash", "setting_hash", "sweep", "task", "variant", "seed", "config",
    "status", "metrics", "curves", "fitted", "steps", "wall_time", "code_version", "run_dir",
    "error", "attempts", "created_at", "finished_at",
}  # fmt: skip
MIGRATIONS = {
    1: (
        "ALTER TABLE runs ADD COLUMN claimed_by TEXT",
        "ALTER TABLE runs ADD COLUMN claim_expires REAL",
    ),
}
"""``MIGRATIONS[v]``: the statements taking a store from schema ``v`` to ``v + 1``."""


def finite(value):
    """``value`` with every non-finite float (NaN, ±inf) replaced by None, recursively.

    >>> finite({"loss": float("nan"), "bins": [1.0, float("inf")]})
    {'loss': None, 'bins': [1.0, None]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def finite_json(value, **kwargs) -> str:
    """Strict JSON text of ``value`` (non-finite numbers become ``null``; never ``NaN``)."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """rasplab's version, plus the git commit when the source is in a git checkout."""
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
    """One stored run, decoded (``metrics`` has ``bins``, ``counts``, ``mse``, and ``slices``
    when the run was sliced)."""

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
        where = repr(str(self.path))
        if self.path.is_dir():
            raise RasplabError(f"results database {where} is a directory; give a file path")
        if not create and not self.path.is_file():
            raise RasplabError(
                f"results database {where} does not exist; run `rasplab sweep` or "
                "`rasplab train` first, or pass --db PATH"
            )
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                why = "a file is in the way" if isinstance(err, FileExistsError) else err.strerror
                raise RasplabError(
                    f"cannot create the folder of results database {where}: {why or err}"
                ) from err
        try:
            self.db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        except sqlite3.Error as err:
            raise RasplabError(f"cannot open results database {where}: {err}") from err
        try:
            self._open(create)
        except sqlite3.DatabaseError as err:
            self.db.close()
            raise RasplabError(
                f"results database {where} is not a rasplab results store ({err})"
            ) from err
        except RasplabError:
            self.db.close()
            raise

    def _open(self, create: bool) -> None:
        """Create the schema in an empty file, or check (and migrate) an existing store;
        a database rasplab did not create is refused before anything is written to it."""
        where = repr(str(self.path))
        tables = _tables(self.db)
        if not tables:
            if not create:
                raise RasplabError(f"results database {where} is empty; it holds no runs")
            # one transaction: a second process opening the file at the same moment sees
            # either no tables or the whole schema with its meta rows, never a half of it
            self.db.executescript(f"BEGIN IMMEDIATE;{SCHEMA}COMMIT;")
            self._write_ahead_log()
            tables = _tables(self.db)
        fmt = None
        if "meta" in tables:
            fmt = self.db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        if fmt is None or fmt[0] != FORMAT or "runs" not in tables:
            shown = ", ".join(sorted(tables)[:5])
            raise RasplabError(
                f"results database {where} is not a rasplab results store (it holds the "
                f"tables {shown}); give another --db"
            )
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        try:
            version = 1 if row is None else int(row[0])
        except ValueError:
            version = -1
        if version < 1 or version > SCHEMA_VERSION:
            raise RasplabError(
                f"results database {where} has schema version {row[0]!r}; this rasplab reads "
                f"versions 1 to {SCHEMA_VERSION} (a newer rasplab wrote it? upgrade rasplab)"
            )
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
        if not V1_COLUMNS <= columns:
            missing = ", ".join(sorted(V1_COLUMNS - columns))
            raise RasplabError(
                f"results database {where}: its runs table is not rasplab's (no {missing})"
            )
        if version < SCHEMA_VERSION:
            self._migrate(version)

    def _write_ahead_log(self, patience: float = 60.0) -> None:
        """Switch the file to WAL mode; SQLite answers "locked" at once (without waiting on
        the busy timeout) while another process holds the file, so retry until ``patience``."""
        deadline = time.monotonic() + patience
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _migrate(self, version: int) -> None:
        """Bring the schema from ``version`` to :data:`SCHEMA_VERSION` in one transaction."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            current = 1 if row is None else int(row[0])  # another process may have migrated
            for v in range(current, SCHEMA_VERSION):
                for statement in MIGRATIONS[v]:
                    self.db.execute(statement)
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def sql(self, query: str, args: tuple | list = ()) -> sqlite3.Cursor:
        """Execute one statement; a damaged database is one RasplabError line."""
        try:
            return self.db.execute(query, args)
        except sqlite3.DatabaseError as err:
            raise RasplabError(
                f"results database {str(self.path)!r} is unreadable or locked ({err})"
            ) from err

    def register(self, config, sweep: str | None = None, run_dir: str | None = None) -> str:
        """Add a run as ``pending`` unless it is already stored; return its run id."""
        run_id = config.hash()
        self.sql(
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
                finite_json(config.to_dict(), sort_keys=True),
                run_dir,
            ),
        )
        return run_id

    def register_many(
        self, configs: list, sweep: str | None, run_dirs: list[str], on_run=None
    ) -> None:
        """:meth:`register` every config in one transaction (a 100,000-run grid in seconds);
        ``on_run`` (if given) is called after each, e.g. to draw progress."""
        self.sql("BEGIN IMMEDIATE")
        try:
            for config, run_dir in zip(configs, run_dirs):
                self.register(config, sweep=sweep, run_dir=run_dir)
                if on_run is not None:
                    on_run()
            self.sql("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def statuses(self) -> dict[str, str]:
        """Every stored run's status, by run id."""
        return dict(self.sql("SELECT run_id, status FROM runs").fetchall())

    def mark_running(self, run_id: str) -> None:
        """Record that a run has started (and count the attempt)."""
        self.sql(
            "UPDATE runs SET status='running', attempts=attempts+1, error=NULL WHERE run_id=?",
            (run_id,),
        )

    def finish(self, result) -> None:
        """Store a finished :class:`~rasplab.harness.train.RunResult` (``done`` or
        ``diverged``) in one transaction, releasing its claim."""
        metrics = {
            "bins": result.bins,
            "counts": result.counts,
            "mse": result.mse,
            "stopped_early": result.stopped_early,
            "loss_reached_step": getattr(result, "loss_reached_step", None),
            "threads": getattr(result, "threads", None),
        }
        if getattr(result, "slices", None):
            metrics["slices"] = result.slices
        if result.status not in FINISHED:
            raise ValueError(f"finish() takes a finished result, got status {result.status!r}")
        self.sql(
            "UPDATE runs SET status=?, metrics=?, curves=?, fitted=?, steps=?, wall_time=?,"
            " code_version=?, run_dir=?, error=NULL, finished_at=datetime('now'),"
            " claimed_by=NULL, claim_expires=NULL WHERE run_id=?",
            (
                result.status,
                finite_json(metrics),
                finite_json(result.curves),
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
        self.sql(
            "UPDATE runs SET status='failed', error=?, finished_at=datetime('now'),"
            " claimed_by=NULL, claim_expires=NULL WHERE run_id=?",
            (error, run_id),
        )

    def count(self) -> int:
        """The number of stored runs."""
        return self.sql("SELECT COUNT(*) FROM runs").fetchone()[0]

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
            rows = self.sql(query, args).fetchall()
        except sqlite3.DatabaseError as err:
            raise RasplabError(
                f"results database {str(self.path)!r} is unreadable ({err})"
            ) from err
        return [_record(row, self.path) for row in rows]

    def get(self, run_id: str) -> RunRecord | None:
        """One run by id, or None."""
        return next((r for r in self.runs() if r.run_id == run_id), None)


def _tables(db: sqlite3.Connection) -> set[str]:
    """The names of the tables in ``db`` (raises ``sqlite3.DatabaseError`` when garbled)."""
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _json(text: str | None, run_id: str, column: str, path: Path):
    """Decode one JSON column of a stored run; malformed JSON is one RasplabError line."""
    if not text:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError) as err:
        raise RasplabError(
            f"results database {str(path)!r}: run {run_id} holds malformed JSON in {column!r} "
            f"({err}); delete that row or restore the database from a copy"
        ) from err


def _record(row, path: Path) -> RunRecord:
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
        config=_json(config, run_id, "config", path) or {},
        status=status,
        metrics=_json(metrics, run_id, "metrics", path),
        curves=_json(curves, run_id, "curves", path),
        fitted=None if fitted is None else bool(fitted),
        steps=steps,
        wall_time=wall_time,
        code_version=version,
        run_dir=run_dir,
        error=error,
        attempts=attempts,
    )
