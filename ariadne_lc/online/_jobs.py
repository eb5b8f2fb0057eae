"""The durable job store behind online audits: one job per sampled trace, results beside it.

A job moves ``pending -> running -> done | failed``; a failed attempt that may succeed later goes
back to ``pending`` with a later ``next_attempt_at``. Every move is one transaction:

- :meth:`~JobStore.claim` takes the oldest due job (or a ``running`` one whose lease expired: its
  worker is presumed dead), counts the attempt and hands out a fresh *claim token*;
- :meth:`~JobStore.complete` / :meth:`~JobStore.fail` write the results and the terminal state
  together, and only if the job is still ``running`` under that claim token, so an attempt that
  lost its claim can never store a second set of results;
- :meth:`~JobStore.heartbeat` extends the leases of a live worker's attempts,
  :meth:`~JobStore.release` hands them back at shutdown, and :meth:`~JobStore.reclaim` frees the
  jobs of a worker process that is known to be dead.

Results are keyed by (job id, step, intervention) and carry a deterministic ``result_id``, so a
copy forwarded elsewhere stays idempotent. :class:`SQLiteJobStore` is the default backend (WAL,
``synchronous=FULL``: a committed job survives a process kill and a power cut); several processes
may share one file.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ariadne_lc.errors import StoreError
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["Job", "JobState", "JobStore", "SQLiteJobStore", "new_owner", "owner_alive", "result_key"]


class JobState(StrEnum):
    """Where a job is in its life."""

    PENDING = "pending"
    """Persisted, waiting for a worker (new, retrying after backoff, or released)."""
    RUNNING = "running"
    """Claimed by a worker that holds a lease on it."""
    DONE = "done"
    """Audited; its results are stored."""
    FAILED = "failed"
    """Given up; its error (and the failed results, if any) are stored."""


@dataclass(frozen=True, slots=True)
class Job:
    """One sampled trace to audit."""

    job_id: str
    """The trace id (one job per trace: a trace offered twice is still one job)."""
    trace: Trace
    """The recorded run."""
    state: JobState
    """The state when this record was read."""
    attempts: int
    """Attempts started so far, including the current one when ``running``."""
    claim: str | None
    """The token of the current attempt; finishing the job requires it."""
    owner: str | None
    """The worker that holds (or last held) the job."""
    sample_rate: float | None
    """The rate the job was sampled at (put on its audit spans)."""
    error: str | None
    """The last attempt's error."""
    seq: int
    """Insertion order."""
    created_at: float
    """When the job was persisted (seconds since the epoch)."""


def new_owner() -> str:
    """A worker identity ``host:pid:random``, so that a restarted process can tell its dead predecessor."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_alive(owner: str) -> bool:
    """Whether the worker ``owner`` may still be running. ``False`` only when it certainly is not: same
    host and no process with that pid. Workers on other hosts are left to their lease."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. a process of another user
        return True
    return True


@runtime_checkable
class JobStore(Protocol):
    """Where online audit jobs and their results are kept (see the module docstring for the states)."""

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None) -> int:
        """Persist new pending jobs in one transaction, skipping traces that already have one.
        Returns how many were new."""

    def claim(self, owner: str, *, lease: float) -> Job | None:
        """Give ``owner`` the oldest due job for ``lease`` seconds, or ``None``."""

    def complete(self, job: Job, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        """Store ``results`` and mark the job done, if ``job``'s claim still holds."""

    def fail(self, job: Job, error: str, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        """Store ``results`` and mark the job failed with ``error``, if the claim still holds."""

    def retry(self, job: Job, error: str, *, delay: float, model_calls: int) -> bool:
        """Put the job back to pending, due in ``delay`` seconds, if the claim still holds."""

    def release(self, claims: Sequence[str]) -> int:
        """Give running jobs back unfinished (shutdown): pending now, the attempt not counted."""

    def heartbeat(self, claims: Sequence[str], *, lease: float) -> int:
        """Extend the leases of the attempts with these claim tokens; returns how many."""

    def reclaim(self, alive: Callable[[str], bool]) -> int:
        """Put running jobs whose owner is not ``alive`` back to pending now; returns how many."""

    def get(self, job_id: str) -> Job:
        """The job (raises :class:`~ariadne_lc.errors.StoreError` when unknown)."""

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        """Jobs in insertion order, optionally in one state."""

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        """Stored results in insertion order, optionally of one trace."""

    def counts(self) -> dict[JobState, int]:
        """Jobs per state."""

    def unfinished(self, *, up_to_seq: int | None = None) -> int:
        """Jobs pending or running (only those with ``seq <= up_to_seq`` when given)."""

    def max_seq(self) -> int:
        """The newest job's ``seq`` (0 when empty)."""

    def next_due(self) -> float | None:
        """When the next pending job becomes due (epoch seconds), or ``None`` when none is pending."""

    def model_calls_since(self, since: float) -> int:
        """Model calls spent by attempts that ended after ``since`` (epoch seconds)."""

    def close(self) -> None:
        """Release the store's resources."""


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ariadne_online_jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT UNIQUE NOT NULL,
        trace TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL,
        owner TEXT,
        claim TEXT UNIQUE,
        lease_until REAL,
        error TEXT,
        model_calls INTEGER NOT NULL DEFAULT 0,
        sample_rate REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        attempt_ended_at REAL,
        finished_at REAL)""",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_due ON ariadne_online_jobs (state, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_lease ON ariadne_online_jobs (state, lease_until)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_ended ON ariadne_online_jobs (attempt_ended_at)",
    """CREATE TABLE IF NOT EXISTS ariadne_online_results (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL,
        result_key TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        data TEXT NOT NULL,
        UNIQUE (job_id, result_key))""",
    "CREATE INDEX IF NOT EXISTS ariadne_online_results_trace ON ariadne_online_results (trace_id)",
)

_COLUMNS = "job_id, trace, state, attempts, claim, owner, sample_rate, error, seq, created_at"
_PENDING, _RUNNING = JobState.PENDING.value, JobState.RUNNING.value


def result_key(result: AuditResult) -> str:
    """The key of a result within its job: step and intervention."""
    return f"{result.step_index}:{result.intervention_type}"


class SQLiteJobStore:
    """A :class:`JobStore` in a SQLite file (``":memory:"`` for a private, non-durable one).

    Args:
        path: The database file; other processes may share it, and so may the trace and result stores.
        synchronous: SQLite's ``synchronous`` setting: ``"FULL"`` (default) makes every commit survive
            a power cut, ``"NORMAL"`` only a process crash (cheaper on slow disks).

    Examples:
        >>> jobs = SQLiteJobStore(":memory:")
        >>> jobs.counts()[JobState.PENDING]
        0
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise StoreError(f"synchronous must be FULL, NORMAL or EXTRA, got {synchronous!r}")
        self.path = path
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the job store at {path}: {exc}") from exc
        with self._tx() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``BEGIN IMMEDIATE`` takes SQLite's write lock up front, so two
        processes claiming at once are serialised instead of failing on upgrade."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"job store {self.path}: {exc}") from exc

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        try:
            with self._lock:
                return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"job store {self.path}: {exc}") from exc

    @staticmethod
    def _job(row: Any) -> Job:
        job_id, trace, state, attempts, claim, owner, rate, error, seq, created = row
        return Job(
            job_id=job_id,
            trace=Trace.model_validate_json(trace),
            state=JobState(state),
            attempts=attempts,
            claim=claim,
            owner=owner,
            sample_rate=rate,
            error=error,
            seq=seq,
            created_at=created,
        )

    # -- writes ------------------------------------------------------------------------------------

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None) -> int:
        now = time.time()
        rows = [(t.trace_id, t.model_dump_json(), now, sample_rate, now, now) for t in traces]
        with self._tx() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO ariadne_online_jobs (job_id, trace, state, next_attempt_at, sample_rate, "
                f"created_at, updated_at) VALUES (?, ?, '{_PENDING}', ?, ?, ?, ?)",
                rows,
            )
            return conn.total_changes - before

    def claim(self, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT seq FROM ariadne_online_jobs WHERE state = '{_PENDING}' AND next_attempt_at <= ? "
                "ORDER BY seq LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                row = conn.execute(
                    f"SELECT seq FROM ariadne_online_jobs WHERE state = '{_RUNNING}' AND lease_until < ? "
                    "ORDER BY seq LIMIT 1",
                    (now,),
                ).fetchone()
                if row is None:
                    return None
                conn.execute(
                    "UPDATE ariadne_online_jobs SET error = 'the lease of ' || owner || ' expired during attempt ' "
                    "|| attempts WHERE seq = ?",
                    row,
                )
            conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_RUNNING}', attempts = attempts + 1, owner = ?, "
                "claim = ?, lease_until = ?, updated_at = ? WHERE seq = ?",
                (owner, uuid.uuid4().hex, now + lease, now, row[0]),
            )
            claimed = conn.execute(f"SELECT {_COLUMNS} FROM ariadne_online_jobs WHERE seq = ?", row).fetchone()
        return self._job(claimed)

    def _finish(
        self, job: Job, state: JobState, error: str | None, results: Sequence[AuditResult], model_calls: int
    ) -> bool:
        now = time.time()
        rows = [
            (
                job.job_id,
                result_key(r),
                r.trace_id,
                r.model_copy(update={"result_id": f"{job.job_id}:{result_key(r)}"}).model_dump_json(),
            )
            for r in results
        ]
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE ariadne_online_jobs SET state = ?, error = ?, claim = NULL, lease_until = NULL, "
                "model_calls = model_calls + ?, updated_at = ?, attempt_ended_at = ?, finished_at = ? "
                f"WHERE job_id = ? AND state = '{_RUNNING}' AND claim = ?",
                (state.value, error, model_calls, now, now, now, job.job_id, job.claim),
            ).rowcount
            if updated != 1:
                return False
            conn.executemany(
                "INSERT INTO ariadne_online_results (job_id, result_key, trace_id, data) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (job_id, result_key) DO NOTHING",
                rows,
            )
        return True

    def complete(self, job: Job, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.DONE, None, results, model_calls)

    def fail(self, job: Job, error: str, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.FAILED, error, results, model_calls)

    def retry(self, job: Job, error: str, *, delay: float, model_calls: int) -> bool:
        now = time.time()
        with self._tx() as conn:
            updated = conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', error = ?, claim = NULL, lease_until = NULL, "
                "next_attempt_at = ?, model_calls = model_calls + ?, updated_at = ?, attempt_ended_at = ? "
                f"WHERE job_id = ? AND state = '{_RUNNING}' AND claim = ?",
                (error, now + max(0.0, delay), model_calls, now, now, job.job_id, job.claim),
            ).rowcount
        return updated == 1

    def release(self, claims: Sequence[str]) -> int:
        now = time.time()
        with self._tx() as conn:
            return conn.executemany(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', attempts = MAX(attempts - 1, 0), "
                "claim = NULL, lease_until = NULL, next_attempt_at = ?, updated_at = ? "
                f"WHERE state = '{_RUNNING}' AND claim = ?",
                [(now, now, c) for c in claims],
            ).rowcount

    def heartbeat(self, claims: Sequence[str], *, lease: float) -> int:
        until = time.time() + lease
        with self._tx() as conn:
            return conn.executemany(
                f"UPDATE ariadne_online_jobs SET lease_until = ? WHERE state = '{_RUNNING}' AND claim = ?",
                [(until, c) for c in claims],
            ).rowcount

    def reclaim(self, alive: Callable[[str], bool]) -> int:
        owners = self._read(f"SELECT DISTINCT owner FROM ariadne_online_jobs WHERE state = '{_RUNNING}'")
        dead = [str(o) for (o,) in owners if o is not None and not alive(str(o))]
        if not dead:
            return 0
        now = time.time()
        with self._tx() as conn:
            return conn.executemany(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', claim = NULL, lease_until = NULL, "
                "next_attempt_at = ?, updated_at = ?, "
                "error = 'the worker ' || owner || ' died during attempt ' || attempts "
                f"WHERE state = '{_RUNNING}' AND owner = ?",
                [(now, now, o) for o in dead],
            ).rowcount

    # -- reads -------------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        rows = self._read(f"SELECT {_COLUMNS} FROM ariadne_online_jobs WHERE job_id = ?", (job_id,))
        if not rows:
            raise StoreError(f"no job {job_id!r} in {self.path}")
        return self._job(rows[0])

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        if state is None:
            rows = self._read(f"SELECT {_COLUMNS} FROM ariadne_online_jobs ORDER BY seq")
        else:
            rows = self._read(
                f"SELECT {_COLUMNS} FROM ariadne_online_jobs WHERE state = ? ORDER BY seq", (JobState(state).value,)
            )
        return [self._job(r) for r in rows]

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        if trace_id is None:
            rows = self._read("SELECT data FROM ariadne_online_results ORDER BY seq")
        else:
            rows = self._read("SELECT data FROM ariadne_online_results WHERE trace_id = ? ORDER BY seq", (trace_id,))
        return [AuditResult.model_validate_json(data) for (data,) in rows]

    def counts(self) -> dict[JobState, int]:
        found = dict(self._read("SELECT state, COUNT(*) FROM ariadne_online_jobs GROUP BY state"))
        return {s: int(found.get(s.value, 0)) for s in JobState}

    def unfinished(self, *, up_to_seq: int | None = None) -> int:
        sql = f"SELECT COUNT(*) FROM ariadne_online_jobs WHERE state IN ('{_PENDING}', '{_RUNNING}')"
        rows = self._read(sql) if up_to_seq is None else self._read(sql + " AND seq <= ?", (up_to_seq,))
        return int(rows[0][0])

    def max_seq(self) -> int:
        return int(self._read("SELECT COALESCE(MAX(seq), 0) FROM ariadne_online_jobs")[0][0])

    def next_due(self) -> float | None:
        value = self._read(f"SELECT MIN(next_attempt_at) FROM ariadne_online_jobs WHERE state = '{_PENDING}'")[0][0]
        return None if value is None else float(value)

    def model_calls_since(self, since: float) -> int:
        rows = self._read(
            "SELECT COALESCE(SUM(model_calls), 0) FROM ariadne_online_jobs WHERE attempt_ended_at > ?", (since,)
        )
        return int(rows[0][0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
