"""The job store of a fleet: PostgreSQL, claimed by many processes on many hosts at once.

Same tables and state machine as the SQLite store (``json`` trace documents, epoch-second times).
Concurrency is Postgres's own: a claim is one ``UPDATE ... FROM (SELECT ... FOR UPDATE)`` statement,
so concurrent claimers never get the same job. Claiming the next due job skips locked rows (``SKIP
LOCKED``: claimers never wait on each other); claiming a named job (a task message) waits for its row,
because a locked row may be one that a reclaim is freeing right now. Handing a job back or reclaiming
it never moves its due time forward, so a claim that read the clock just before still finds it due.
Finishing checks the claim token and inserts the results in the same transaction (``ON CONFLICT DO
NOTHING`` on (job, step, intervention)), so exactly one set of results is stored per job, committed
with its terminal state. Budget and rate-limit counts (:meth:`model_calls_since`,
:meth:`added_since`) are read from the shared tables, so they cover the whole fleet.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ariadne_lc.errors import JobNotFoundError, StoreError
from ariadne_lc.online._jobs import AuditPlan, Job, JobState, result_key, stored_result
from ariadne_lc.records import AuditResult
from ariadne_lc.store._pg import DEFAULT_CONNECT_TIMEOUT, DEFAULT_POOL_SIZE, PgPool
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["SCHEMA_VERSION", "PostgresJobStore"]

SCHEMA_VERSION = 2
"""The version of the job tables this module creates (``ariadne_schema_versions``); 2 added ``audit_plan``."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ariadne_online_jobs (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id TEXT UNIQUE NOT NULL,
        trace JSON NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at DOUBLE PRECISION NOT NULL,
        owner TEXT,
        claim TEXT UNIQUE,
        lease_until DOUBLE PRECISION,
        error TEXT,
        model_calls INTEGER NOT NULL DEFAULT 0,
        sample_rate DOUBLE PRECISION,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        attempt_ended_at DOUBLE PRECISION,
        finished_at DOUBLE PRECISION)""",
    "ALTER TABLE ariadne_online_jobs ADD COLUMN IF NOT EXISTS audit_plan JSON",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_due ON ariadne_online_jobs (state, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_lease ON ariadne_online_jobs (state, lease_until)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_ended ON ariadne_online_jobs (attempt_ended_at)",
    "CREATE INDEX IF NOT EXISTS ariadne_online_jobs_created ON ariadne_online_jobs (created_at)",
    """CREATE TABLE IF NOT EXISTS ariadne_online_results (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id TEXT NOT NULL,
        result_key TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        data JSON NOT NULL,
        UNIQUE (job_id, result_key))""",
    "CREATE INDEX IF NOT EXISTS ariadne_online_results_trace ON ariadne_online_results (trace_id, seq)",
)

# Pollers' positions (ServerPoller): a component of its own, so that existing job tables need no migration.
_CURSOR_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ariadne_online_cursors (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL)""",
)

_COLUMNS = (
    "j.job_id, j.trace::text, j.state, j.attempts, j.claim, j.owner, j.sample_rate, j.error, j.seq, "
    "j.created_at, j.next_attempt_at, j.audit_plan::text"
)
_PENDING, _RUNNING = JobState.PENDING.value, JobState.RUNNING.value
# The claim itself: take the row locked by the inner SELECT. SET expressions see the old row, so an
# expired attempt's error names its owner and attempt number before they are overwritten.
_TAKE = f"""UPDATE ariadne_online_jobs AS j SET
        error = CASE WHEN j.state = '{_RUNNING}'
            THEN 'the lease of ' || j.owner || ' expired during attempt ' || j.attempts ELSE j.error END,
        state = '{_RUNNING}', attempts = j.attempts + 1, owner = %(owner)s, claim = %(claim)s,
        lease_until = %(now)s + %(lease)s, updated_at = %(now)s
    FROM ({{pick}}) AS picked
    WHERE j.seq = picked.seq
    RETURNING {_COLUMNS}"""
_CLAIMABLE = (
    f"((state = '{_PENDING}' AND next_attempt_at <= %(now)s) OR (state = '{_RUNNING}' AND lease_until < %(now)s))"
)
# Any due job: skip the rows other claimers hold, so that concurrent claimers never wait on each other.
_CLAIM_NEXT = _TAKE.format(
    pick=f"SELECT seq FROM ariadne_online_jobs WHERE {_CLAIMABLE} ORDER BY (state = '{_RUNNING}'), seq LIMIT 1 "
    "FOR UPDATE SKIP LOCKED"
)
# One named job: wait for the row instead. A row locked by another statement may be being freed (a
# reclaim of a dead worker's jobs, a hand-back): skipping it would answer "not claimable" for a job
# that is claimable a millisecond later, and the message that asked would be dropped. Postgres
# re-checks the condition on the row as that statement left it, so a job another claimer just took
# is still refused.
_CLAIM_ONE = _TAKE.format(
    pick=f"SELECT seq FROM ariadne_online_jobs WHERE job_id = %(job_id)s AND {_CLAIMABLE} FOR UPDATE"
)


class PostgresJobStore:
    """A :class:`~ariadne_lc.online.JobStore` in PostgreSQL (the ``postgres`` extra), for fleets.

    Every serving replica and audit worker, on any host, may share one: claims use ``SELECT ... FOR
    UPDATE SKIP LOCKED``, finishing is guarded by the claim token, and the budget and rate-limit
    counts are read from the shared tables. ``OnlineAuditor(graph, jobs="postgresql://...")`` builds
    one from a URI.

    Args:
        conninfo: A connection URI (``postgresql://user@host:5432/db``) or a ``psycopg_pool.ConnectionPool``
            of yours (left open by :meth:`close`).
        max_size: Connections the store's own pool may open (one per concurrent store call).
        connect_timeout: Seconds to wait for the first connection before raising :class:`~ariadne_lc.errors.StoreError`.

    Raises:
        StoreError: The server is unreachable, or its tables have a newer schema version.

    Examples:
        >>> jobs = PostgresJobStore("postgresql://postgres@127.0.0.1:5432/app")  # doctest: +SKIP
        >>> online = OnlineAuditor(graph, jobs=jobs)  # doctest: +SKIP
    """

    def __init__(
        self,
        conninfo: str | ConnectionPool,
        *,
        max_size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self._pg = PgPool(conninfo, max_size=max_size, connect_timeout=connect_timeout)
        self.where = self._pg.where
        try:
            self._pg.ensure_schema("ariadne_online_jobs", SCHEMA_VERSION, _SCHEMA)
            self._pg.ensure_schema("ariadne_online_cursors", 1, _CURSOR_SCHEMA)
        except StoreError:
            self._pg.close()
            raise

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
            seq=int(seq),
            created_at=float(created),
            next_attempt_at=float(due),
            plan=AuditPlan.from_json(plan),
        )

    # -- writes ------------------------------------------------------------------------------------

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None, plan: AuditPlan | None = None) -> list[str]:
        if not traces:
            return []
        now = time.time()
        with self._pg.tx() as conn:
            rows = conn.execute(
                "INSERT INTO ariadne_online_jobs (job_id, trace, state, next_attempt_at, sample_rate, created_at, "
                f"updated_at, audit_plan) SELECT t.job_id, t.trace::json, '{_PENDING}', %(now)s, %(rate)s, %(now)s, "
                "%(now)s, %(plan)s::json "
                "FROM unnest(%(ids)s::text[], %(traces)s::text[]) WITH ORDINALITY AS t(job_id, trace, n) "
                "ORDER BY t.n ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
                {
                    "now": now,
                    "rate": sample_rate,
                    "plan": None if plan is None else plan.to_json(),
                    "ids": [t.trace_id for t in traces],
                    "traces": [t.model_dump_json() for t in traces],
                },
            ).fetchall()
        added = {r[0] for r in rows}
        ordered: list[str] = []
        for t in traces:
            if t.trace_id in added and t.trace_id not in ordered:
                ordered.append(t.trace_id)
        return ordered

    def claim(self, owner: str, *, lease: float) -> Job | None:
        args = {"owner": owner, "claim": uuid.uuid4().hex, "now": time.time(), "lease": lease}
        with self._pg.tx() as conn:
            row = conn.execute(_CLAIM_NEXT, args).fetchone()
        return None if row is None else self._job(row)

    def claim_job(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        args = {"owner": owner, "claim": uuid.uuid4().hex, "now": time.time(), "lease": lease, "job_id": job_id}
        with self._pg.tx() as conn:
            row = conn.execute(_CLAIM_ONE, args).fetchone()
            if (
                row is None
                and conn.execute("SELECT 1 FROM ariadne_online_jobs WHERE job_id = %s", (job_id,)).fetchone() is None
            ):
                raise JobNotFoundError(f"no job {job_id!r} in {self.where}", job_id=job_id)
        return None if row is None else self._job(row)

    def _finish(
        self, job: Job, state: JobState, error: str | None, results: Sequence[AuditResult], model_calls: int
    ) -> bool:
        now = time.time()
        with self._pg.tx() as conn:
            updated = conn.execute(
                "UPDATE ariadne_online_jobs SET state = %s, error = %s, claim = NULL, lease_until = NULL, "
                "model_calls = model_calls + %s, updated_at = %s, attempt_ended_at = %s, finished_at = %s "
                f"WHERE job_id = %s AND state = '{_RUNNING}' AND claim = %s",
                (state.value, error, model_calls, now, now, now, job.job_id, job.claim),
            ).rowcount
            if updated != 1:
                return False
            if results:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO ariadne_online_results (job_id, result_key, trace_id, data) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT (job_id, result_key) DO NOTHING",
                        [
                            (job.job_id, result_key(r), r.trace_id, stored_result(job.job_id, r).model_dump_json())
                            for r in results
                        ],
                    )
        return True

    def complete(self, job: Job, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.DONE, None, results, model_calls)

    def fail(self, job: Job, error: str, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.FAILED, error, results, model_calls)

    def retry(self, job: Job, error: str, *, delay: float, model_calls: int) -> bool:
        now = time.time()
        with self._pg.tx() as conn:
            updated = conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', error = %s, claim = NULL, lease_until = NULL, "
                "next_attempt_at = %s, model_calls = model_calls + %s, updated_at = %s, attempt_ended_at = %s "
                f"WHERE job_id = %s AND state = '{_RUNNING}' AND claim = %s",
                (error, now + max(0.0, delay), model_calls, now, now, job.job_id, job.claim),
            ).rowcount
        return updated == 1

    def release(self, claims: Sequence[str]) -> int:
        if not claims:
            return 0
        now = time.time()
        with self._pg.tx() as conn:
            return conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', attempts = GREATEST(attempts - 1, 0), "
                "claim = NULL, lease_until = NULL, next_attempt_at = LEAST(next_attempt_at, %s), updated_at = %s "
                f"WHERE state = '{_RUNNING}' AND claim = ANY(%s)",
                (now, now, list(claims)),
            ).rowcount

    def heartbeat(self, claims: Sequence[str], *, lease: float) -> int:
        if not claims:
            return 0
        with self._pg.tx() as conn:
            return conn.execute(
                f"UPDATE ariadne_online_jobs SET lease_until = %s WHERE state = '{_RUNNING}' AND claim = ANY(%s)",
                (time.time() + lease, list(claims)),
            ).rowcount

    def reclaim(self, alive: Callable[[str], bool]) -> int:
        owners = self._pg.read(f"SELECT DISTINCT owner FROM ariadne_online_jobs WHERE state = '{_RUNNING}'")
        dead = [str(o) for (o,) in owners if o is not None and not alive(str(o))]
        if not dead:
            return 0
        now = time.time()
        with self._pg.tx() as conn:
            return conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_PENDING}', claim = NULL, lease_until = NULL, "
                "next_attempt_at = LEAST(next_attempt_at, %s), updated_at = %s, "
                "error = 'the worker ' || owner || ' died during attempt ' || attempts "
                f"WHERE state = '{_RUNNING}' AND owner = ANY(%s)",
                (now, now, dead),
            ).rowcount

    # -- reads -------------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        rows = self._pg.read(f"SELECT {_COLUMNS} FROM ariadne_online_jobs AS j WHERE j.job_id = %s", (job_id,))
        if not rows:
            raise JobNotFoundError(f"no job {job_id!r} in {self.where}", job_id=job_id)
        return self._job(rows[0])

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        if state is None:
            rows = self._pg.read(f"SELECT {_COLUMNS} FROM ariadne_online_jobs AS j ORDER BY j.seq")
        else:
            rows = self._pg.read(
                f"SELECT {_COLUMNS} FROM ariadne_online_jobs AS j WHERE j.state = %s ORDER BY j.seq",
                (JobState(state).value,),
            )
        return [self._job(r) for r in rows]

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        if trace_id is None:
            rows = self._pg.read("SELECT data::text FROM ariadne_online_results ORDER BY seq")
        else:
            rows = self._pg.read(
                "SELECT data::text FROM ariadne_online_results WHERE trace_id = %s ORDER BY seq", (trace_id,)
            )
        return [AuditResult.model_validate_json(data) for (data,) in rows]

    def counts(self) -> dict[JobState, int]:
        found = dict(self._pg.read("SELECT state, COUNT(*) FROM ariadne_online_jobs GROUP BY state"))
        return {s: int(found.get(s.value, 0)) for s in JobState}

    def unfinished(self, *, up_to_seq: int | None = None) -> int:
        rows = self._pg.read(
            f"SELECT COUNT(*) FROM ariadne_online_jobs WHERE state IN ('{_PENDING}', '{_RUNNING}') "
            "AND (%(up_to)s::bigint IS NULL OR seq <= %(up_to)s::bigint)",
            {"up_to": up_to_seq},
        )
        return int(rows[0][0])

    def unfinished_ids(self) -> dict[str, float]:
        rows = self._pg.read(
            f"SELECT job_id, created_at FROM ariadne_online_jobs WHERE state IN ('{_PENDING}', '{_RUNNING}') "
            "ORDER BY seq"
        )
        return {job_id: float(created) for job_id, created in rows}

    def max_seq(self) -> int:
        return int(self._pg.read("SELECT COALESCE(MAX(seq), 0) FROM ariadne_online_jobs")[0][0])

    def next_due(self) -> float | None:
        value = self._pg.read(f"SELECT MIN(next_attempt_at) FROM ariadne_online_jobs WHERE state = '{_PENDING}'")[0][0]
        return None if value is None else float(value)

    def model_calls_since(self, since: float) -> int:
        rows = self._pg.read(
            "SELECT COALESCE(SUM(model_calls), 0) FROM ariadne_online_jobs WHERE attempt_ended_at > %s", (since,)
        )
        return int(rows[0][0])

    def added_since(self, since: float) -> int:
        return int(self._pg.read("SELECT COUNT(*) FROM ariadne_online_jobs WHERE created_at > %s", (since,))[0][0])

    def cursor(self, name: str) -> str | None:
        rows = self._pg.read("SELECT value FROM ariadne_online_cursors WHERE name = %s", (name,))
        return str(rows[0][0]) if rows else None

    def set_cursor(self, name: str, value: str) -> None:
        with self._pg.tx() as conn:
            conn.execute(
                "INSERT INTO ariadne_online_cursors (name, value, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (name, value, time.time()),
            )

    def close(self) -> None:
        """Close the store's own pool (a pool you passed in stays open)."""
        self._pg.close()
