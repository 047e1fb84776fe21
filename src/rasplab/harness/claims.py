"""Run claims: two sweeps on one results store never train the same run twice.

Before a sweep (or ``rasplab train``) starts a run it *claims* it: in one write transaction
of the store it checks that the run has no result and that no live process holds it, then
writes its owner id (``host:pid:token``) and an expiry time into the run's row. While the
process runs it renews its claims (:class:`Heartbeat`); a finished or failed run is released
by :meth:`~rasplab.harness.store.ResultsStore.finish` / ``fail``.

A claim is held while it has not expired *and* its owner may be alive: on the same host the
owner's pid is checked, so the claims of a sweep killed with ``kill -9`` are taken over at
once; on another host the claim lapses ``ttl`` seconds after its last renewal.

>>> import tempfile, os
>>> from rasplab.harness.config import ExperimentConfig
>>> from rasplab.harness.store import ResultsStore
>>> with tempfile.TemporaryDirectory() as d, ResultsStore(os.path.join(d, "r.sqlite")) as s:
...     run = s.register(ExperimentConfig(task="parity"))
...     first = claim(s, run, owner_id())
...     other = claim(s, run, "elsewhere:1:x")   # a live claim of this process: held
...     (first, other)
('claimed', 'held')
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from pathlib import Path

from rasplab.files import process_alive
from rasplab.harness.jobs import Job
from rasplab.harness.store import FINISHED, ResultsStore

TTL = 120.0
"""Seconds a claim lasts without renewal (a heartbeat renews it every ``TTL / 4``)."""
POLL = 0.25
"""Seconds a sweep waits before looking again at runs another process holds."""

_TOKEN = secrets.token_hex(4)


def owner_id() -> str:
    """This process's claim owner id: ``host:pid:token`` (the token tells pid reuses apart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_TOKEN}"


def holds(owner: str | None, expires: float | None, now: float) -> bool:
    """Whether a claim by ``owner`` (expiring at ``expires``) still holds at ``now``.

    >>> holds("nowhere:1:t", time.time() + 60, time.time())
    True
    >>> holds("nowhere:1:t", time.time() - 1, time.time())
    False
    """
    if owner is None or expires is None or expires < now:
        return False
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host == socket.gethostname() and pid.isdigit():
        return process_alive(int(pid))
    return True


def claim(
    store: ResultsStore, run_id: str, owner: str, ttl: float = TTL, since: str | None = None
) -> str:
    """Try to claim ``run_id`` for ``owner``: ``"claimed"`` (it is ours, marked running and
    its attempt counted), ``"held"`` (another live process has it) or ``"finished"`` (it has a
    result, or it failed at or after ``since``, a store timestamp, so is not retried now)."""
    store.sql("BEGIN IMMEDIATE")
    try:
        row = store.sql(
            "SELECT status, claimed_by, claim_expires, finished_at FROM runs WHERE run_id=?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise KeyError(f"run {run_id} is not registered in {store.path}")
        status, holder, expires, finished_at = row
        now = time.time()
        if status in FINISHED or (
            status == "failed" and since is not None and (finished_at or "") >= since
        ):
            outcome = "finished"
        elif holder not in (None, owner) and holds(holder, expires, now):
            outcome = "held"
        else:
            store.sql(
                "UPDATE runs SET status='running', attempts=attempts+1, error=NULL,"
                " claimed_by=?, claim_expires=? WHERE run_id=?",
                (owner, now + ttl, run_id),
            )
            outcome = "claimed"
        store.sql("COMMIT")
    except BaseException:
        store.db.execute("ROLLBACK")
        raise
    return outcome


def holder(store: ResultsStore, run_id: str) -> str | None:
    """The owner id of a live claim on ``run_id``, or None."""
    row = store.sql(
        "SELECT claimed_by, claim_expires FROM runs WHERE run_id=?", (run_id,)
    ).fetchone()
    return row[0] if row and holds(row[0], row[1], time.time()) else None


def renew(store: ResultsStore, owner: str, ttl: float = TTL) -> int:
    """Extend every claim ``owner`` holds by ``ttl`` seconds; returns how many."""
    cursor = store.sql(
        "UPDATE runs SET claim_expires=? WHERE claimed_by=? AND status='running'",
        (time.time() + ttl, owner),
    )
    return cursor.rowcount


def store_now(store: ResultsStore) -> str:
    """The store's clock (``datetime('now')``), to compare with ``finished_at``."""
    return store.sql("SELECT datetime('now')").fetchone()[0]


class Heartbeat:
    """A daemon thread renewing ``owner``'s claims in the store at ``path`` every ``ttl / 4``
    seconds (its own connection: SQLite connections stay in their thread)."""

    def __init__(self, path: str | Path, owner: str, ttl: float = TTL) -> None:
        self.path, self.owner, self.ttl = path, owner, ttl
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="rasplab-claims")

    def _beat(self) -> None:
        with ResultsStore(self.path, create=False) as store:
            while not self.stop.wait(self.ttl / 4):
                renew(store, self.owner, self.ttl)

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


class ClaimQueue:
    """The runs a sweep still has to do, handed out one claimed run at a time.

    :meth:`take` returns the next job this process claimed, dropping those that another
    process finished meanwhile (counted in ``finished_elsewhere``) and skipping, for now,
    those another live process holds; None when every remaining job is held elsewhere.
    """

    def __init__(self, store: ResultsStore, jobs: list[Job], owner: str, ttl: float = TTL) -> None:
        self.store, self.pending, self.owner, self.ttl = store, list(jobs), owner, ttl
        self.since = store_now(store)
        self.finished_elsewhere = 0

    def __bool__(self) -> bool:
        return bool(self.pending)

    def take(self) -> Job | None:
        """The next job claimed by this process, or None. Of a stacked group, the job of the
        members this process claimed; members held elsewhere go back to the queue as jobs of
        their own."""
        for job in list(self.pending):
            if job.stacked:
                self.pending.remove(job)
                mine = []
                for i, member in enumerate(job.members()):
                    outcome = self._claim(member)
                    if outcome == "claimed":
                        mine.append(i)
                    elif outcome == "held":
                        self.pending.append(member)
                if mine:
                    return job.subset(mine)
                continue
            outcome = self._claim(job)
            if outcome == "held":
                continue
            self.pending.remove(job)
            if outcome == "claimed":
                return job
        return None

    def _claim(self, job: Job) -> str:
        """Claim a job of one run: "claimed", "held" or "finished" (counted)."""
        outcome = claim(self.store, job.configs[0].hash(), self.owner, self.ttl, self.since)
        if outcome not in ("claimed", "held"):
            self.finished_elsewhere += 1
        return outcome

    def wait(self) -> None:
        """Pause before looking again at runs held by other processes."""
        time.sleep(POLL)
