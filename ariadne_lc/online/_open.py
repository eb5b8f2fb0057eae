"""Which job store a ``jobs=`` argument names: a store as is, a PostgreSQL URI, or a SQLite path.

Kept apart from the protocol module so that the protocol imports no backend (and the Postgres
backend, with psycopg, is imported only when a URI asks for it).
"""

from __future__ import annotations

from pathlib import Path

from ariadne_lc.online._jobs import JobStore

__all__ = ["is_postgres_dsn", "open_job_store"]


def is_postgres_dsn(spec: object) -> bool:
    """Whether ``spec`` is a PostgreSQL connection URI (``postgresql://`` or ``postgres://``)."""
    return isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://"))


def open_job_store(spec: JobStore | str | Path) -> JobStore:
    """The job store ``spec`` names: a store as is, a PostgreSQL URI (``postgresql://...``) for a
    :class:`~ariadne_lc.online.PostgresJobStore`, anything else a SQLite path (``":memory:"``: private)."""
    if isinstance(spec, JobStore):
        return spec
    if is_postgres_dsn(spec):
        from ariadne_lc.online._jobs_postgres import PostgresJobStore

        return PostgresJobStore(str(spec))
    from ariadne_lc.online._jobs_sqlite import SQLiteJobStore

    return SQLiteJobStore(spec)
