"""Postgres plumbing of the distributed machinery: a checked pool, retries, and the dispatch log.

The job store (jobs, claims, results) belongs to :mod:`ariadne_lc.online`; this module keeps only
what delivery adds beside it, in tables of its own in the same database:

- ``ariadne_dispatch``: when each job's last task message was confirmed by the broker. The sweeper
  reads it to tell a job whose message is (presumably) in the queue from one whose publish was lost.
- the fleet's rate-limit bucket and model-call ledger (:mod:`ariadne_lc.distributed._limits`).
- ``ariadne_workers``: one row per worker process, its heartbeat and its consumer's last answer
  (:mod:`ariadne_lc.distributed._liveness`).

Connections come from a ``psycopg_pool.ConnectionPool`` that checks each connection before lending
it, so a connection the server terminated (``pg_terminate_backend``, a restart) is replaced instead of
failing the next statement; a statement that fails *because* its connection died is retried by
:func:`with_retries` (every statement here is idempotent).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ariadne_lc.errors import ConfigurationError, StoreError
from ariadne_lc.store._pg import SCHEMA_LOCK

__all__ = ["DispatchLog", "open_pool", "with_retries"]

logger = logging.getLogger("ariadne_lc.distributed")

T = TypeVar("T")
_RETRY_DELAYS = (0.1, 0.5, 1.0, 2.0)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ariadne_dispatch (
        job_id TEXT PRIMARY KEY,
        published_at DOUBLE PRECISION NOT NULL,
        publishes INTEGER NOT NULL DEFAULT 1)""",
    "CREATE INDEX IF NOT EXISTS ariadne_dispatch_published ON ariadne_dispatch (published_at)",
    """CREATE TABLE IF NOT EXISTS ariadne_fleet_bucket (
        name TEXT PRIMARY KEY,
        tokens DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ariadne_fleet_spend (
        name TEXT NOT NULL,
        job_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        settled BOOLEAN NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (name, job_id, attempt))""",
    "CREATE INDEX IF NOT EXISTS ariadne_fleet_spend_at ON ariadne_fleet_spend (name, at)",
    """CREATE TABLE IF NOT EXISTS ariadne_workers (
        owner TEXT PRIMARY KEY,
        node TEXT NOT NULL,
        queue TEXT NOT NULL,
        concurrency INTEGER NOT NULL,
        beat_every DOUBLE PRECISION NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        beat_at DOUBLE PRECISION NOT NULL,
        consumer_at DOUBLE PRECISION,
        running INTEGER NOT NULL,
        tasks INTEGER NOT NULL,
        task_started_at DOUBLE PRECISION,
        task_ended_at DOUBLE PRECISION)""",
)


def open_pool(conninfo: str, *, name: str, max_size: int = 4) -> Any:
    """A ``psycopg_pool.ConnectionPool`` on ``conninfo`` (autocommit, connections checked on loan), with
    this module's tables created. Raises :class:`~ariadne_lc.errors.StoreError` naming the server when it
    cannot be reached."""
    if not conninfo.startswith(("postgresql://", "postgres://")):
        raise ConfigurationError(f"expected a postgresql:// URL, got {conninfo.split('@')[-1]!r}")
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - depends on the installation
        from ariadne_lc.errors import MissingExtraError

        raise MissingExtraError("distributed audits", "distributed", str(exc)) from None
    pool = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True},
        check=ConnectionPool.check_connection,
        name=name,
        open=False,
        timeout=10.0,
    )
    try:
        pool.open(wait=True, timeout=10.0)
    except Exception as exc:
        pool.close()
        raise StoreError(f"cannot connect to PostgreSQL at {_where(conninfo)}: {exc}") from exc
    try:
        with_retries(lambda: _create_schema(pool), "creating the distributed tables")
    except Exception:
        pool.close()
        raise
    return pool


def _where(conninfo: str) -> str:
    return conninfo.split("@")[-1]


def _create_schema(pool: Any) -> None:
    with pool.connection() as conn, conn.transaction():
        # The lock every ariadne_lc schema creation takes (see ariadne_lc.store._pg.SCHEMA_LOCK).
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for statement in _SCHEMA:
            conn.execute(statement)


def with_retries(fn: Callable[[], T], what: str) -> T:
    """Run ``fn`` (one idempotent database operation), again after a short pause when the database
    connection failed; raise :class:`~ariadne_lc.errors.StoreError` when it keeps failing."""
    import psycopg

    for delay in (*_RETRY_DELAYS, None):
        try:
            return fn()
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            if delay is None:
                raise StoreError(f"{what} failed: {exc}") from exc
            logger.info("ariadne distributed: %s failed (%s); trying again in %.1f s", what, exc, delay)
            time.sleep(delay)
        except psycopg.Error as exc:
            raise StoreError(f"{what} failed: {exc}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


class DispatchLog:
    """When each job's task message was last confirmed by the broker (table ``ariadne_dispatch``)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def published(self, job_ids: Sequence[str]) -> None:
        """Record that messages for ``job_ids`` were confirmed just now."""
        if not job_ids:
            return
        now = time.time()

        def write() -> None:
            with self._pool.connection() as conn, conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO ariadne_dispatch (job_id, published_at) VALUES (%s, %s) ON CONFLICT (job_id) "
                    "DO UPDATE SET published_at = EXCLUDED.published_at, publishes = ariadne_dispatch.publishes + 1",
                    [(job_id, now) for job_id in job_ids],
                )

        with_retries(write, "recording published tasks")

    def last_published(self, job_ids: Sequence[str]) -> dict[str, float]:
        """The last confirmed publish of each of ``job_ids`` that has one (epoch seconds)."""
        if not job_ids:
            return {}

        def read() -> dict[str, float]:
            with self._pool.connection() as conn:
                rows = conn.execute(
                    "SELECT job_id, published_at FROM ariadne_dispatch WHERE job_id = ANY(%s)", (list(job_ids),)
                ).fetchall()
            return {str(job_id): float(at) for job_id, at in rows}

        return with_retries(read, "reading the dispatch log")

    def publishes(self, job_id: str) -> int:
        """How many times a message for ``job_id`` was confirmed (0 when never)."""

        def read() -> int:
            with self._pool.connection() as conn:
                row = conn.execute("SELECT publishes FROM ariadne_dispatch WHERE job_id = %s", (job_id,)).fetchone()
            return 0 if row is None else int(row[0])

        return with_retries(read, "reading the dispatch log")
