"""The default job store: SQLite, durable, shared by the processes of one machine.

WAL and ``synchronous=FULL``: a committed job survives a process kill and a power cut. Every write
is one ``BEGIN IMMEDIATE`` transaction, which takes SQLite's write lock up front, so two processes
claiming at once are serialised instead of failing on a lock upgrade.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ariadne_lc.errors import JobNotFoundError, StoreError
from ariadne_lc.online._jobs import AuditPlan, Job, JobState, result_key, stored_result
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["SQLiteJobStore"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ariadne_online_cursors (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at REAL NOT NULL)""",
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
        finished_at REAL,
        audit_plan TEXT)""",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_due ON ariadne_online_jobs (state, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_lease ON ariadne_online_jobs (state, lease_until)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_ended ON ariadne_online_jobs (attempt_ended_at)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_created ON ariadne_online_jobs (created_at)",
    """CREATE TABLE IF NOT EXISTS ariadne_online_results (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL,
        result_key TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        data TEXT NOT NULL,
        UNIQUE (job_id, result_key))""",
    "CREATE INDEX IF NOT EXISTS ariadne_online_results_trace ON ariadne_online_results (trace_id)",
)

_COLUMNS = (
    "job_id, trace, state, attempts, claim, owner, sample_rate, error, seq, created_at, next_attempt_at, audit_plan"
)
_PENDING, _RUNNING = JobState.PENDING.value, JobState.RUNNING.value
_EXPIRED_ERROR = "'the lease of ' || owner || ' expired during attempt ' || attempts"


class SQLiteJobStore:
    """A :class:`~ariadne_lc.online.JobStore` in a SQLite file (``":memory:"``: private, not durable).

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
            columns = {row[1] for row in conn.execute("PRAGMA table_info(ariadne_online_jobs)")}
            if "audit_plan" not in columns:  # a store created before jobs kept their plan
                conn.execute("ALTER TABLE ariadne_online_jobs ADD COLUMN audit_plan TEXT")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
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
                raise StoreError(self._said(exc)) from exc

    def _said(self, exc: sqlite3.Error) -> str:
        if isinstance(exc, sqlite3.ProgrammingError) and "closed" in str(exc):
            return (
                f"job store {self.path} is closed (OnlineAuditor.shutdown() closes it): read results before the "
                f"shutdown, or open the store again: open_job_store({str(self.path)!r}).list_results()"
            )
        return f"job store {self.path}: {exc}"

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        try:
            with self._lock:
                return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(self._said(exc)) from exc

    @staticmethod
    def _job(row: Any) -> Job:
        job_id, trace, state, attempts, claim, owner, rate, error, seq, created, due, plan = row
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
            next_attempt_at=due,
            plan=AuditPlan.from_json(plan),
        )

    # -- writes ------------------------------------------------------------------------------------

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None, plan: AuditPlan | None = None) -> list[str]:
        now = time.time()
        added: list[str] = []
        stored_plan = None if plan is None else plan.to_json()
        with self._tx() as conn:
            for t in traces:
                inserted = conn.execute(
                    "INSERT OR IGNORE INTO ariadne_online_jobs (job_id, trace, state, next_attempt_at, sample_rate, "
                    f"created_at, updated_at, audit_plan) VALUES (?, ?, '{_PENDING}', ?, ?, ?, ?, ?)",
                    (t.trace_id, t.model_dump_json(), now, sample_rate, now, now, stored_plan),
                ).rowcount
                if inserted == 1:
                    added.append(t.trace_id)
        return added

    def _take(self, conn: sqlite3.Connection, seq: int, expired: bool, owner: str, lease: float, now: float) -> Job:
        if expired:
            conn.execute(f"UPDATE ariadne_online_jobs SET error = {_EXPIRED_ERROR} WHERE seq = ?", (seq,))
        conn.execute(
            f"UPDATE ariadne_online_jobs SET state = '{_RUNNING}', attempts = attempts + 1, owner = ?, "
            "claim = ?, lease_until = ?, updated_at = ? WHERE seq = ?",
            (owner, uuid.uuid4().hex, now + lease, now, seq),
        )
        return self._job(conn.execute(f"SELECT {_COLUMNS} FROM ariadne_online_jobs WHERE seq = ?", (seq,)).fetchone())

    def claim(self, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT seq FROM ariadne_online_jobs WHERE state = '{_PENDING}' AND next_attempt_at <= ? "
                "ORDER BY seq LIMIT 1",
                (now,),
            ).fetchone()
            expired = row is None
            if expired:
                row = conn.execute(
                    f"SELECT seq FROM ariadne_online_jobs WHERE state = '{_RUNNING}' AND lease_until < ? "
                    "ORDER BY seq LIMIT 1",
                    (now,),
                ).fetchone()
                if row is None:
                    return None
            return self._take(conn, row[0], expired, owner, lease, now)

    def claim_job(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT seq, state, next_attempt_at, lease_until FROM ariadne_online_jobs WHERE job_id = ?", (job_id,)
            ).fetchone()
            if row is None:
                raise JobNotFoundError(f"no job {job_id!r} in {self.path}", job_id=job_id)
            seq, state, due, lease_until = row
            if state == _PENDING and due <= now:
                return self._take(conn, seq, False, owner, lease, now)
            if state == _RUNNING and lease_until is not None and lease_until < now:
                return self._take(conn, seq, True, owner, lease, now)
            return None

    def _finish(
        self, job: Job, state: JobState, error: str | None, results: Sequence[AuditResult], model_calls: int
    ) -> bool:
        now = time.time()
        rows = [
            (job.job_id, result_key(r), r.trace_id, stored_result(job.job_id, r).model_dump_json()) for r in results
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
            raise JobNotFoundError(f"no job {job_id!r} in {self.path}", job_id=job_id)
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

    def unfinished_ids(self) -> dict[str, float]:
        rows = self._read(
            f"SELECT job_id, created_at FROM ariadne_online_jobs WHERE state IN ('{_PENDING}', '{_RUNNING}') "
            "ORDER BY seq"
        )
        return {job_id: float(created) for job_id, created in rows}

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

    def added_since(self, since: float) -> int:
        return int(self._read("SELECT COUNT(*) FROM ariadne_online_jobs WHERE created_at > ?", (since,))[0][0])

    def cursor(self, name: str) -> str | None:
        rows = self._read("SELECT value FROM ariadne_online_cursors WHERE name = ?", (name,))
        return str(rows[0][0]) if rows else None

    def set_cursor(self, name: str, value: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO ariadne_online_cursors (name, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (name, value, time.time()),
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
