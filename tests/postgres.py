"""The PostgreSQL fixtures: a uniquely named database for the session, a fresh schema per test.

The server is the machine's (127.0.0.1:5432, trust auth; ``ARIADNE_TEST_POSTGRES`` overrides the
admin URI). When it is down the tests fail, with one line naming PostgreSQL and how to start it:
they are never skipped. The database is dropped at the end of the session (``WITH (FORCE)`` ends
only this database's own connections).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest

__all__ = ["ADMIN_DSN", "postgres_database", "postgres_dsn"]

ADMIN_DSN = os.environ.get("ARIADNE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
_START = "start it with `service postgresql start` (or point ARIADNE_TEST_POSTGRES at a server)"


def _with_db(dsn: str, name: str) -> str:
    base, _, _ = dsn.rpartition("/")
    return f"{base}/{name}"


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """The URI of an empty database created for this test session (dropped at its end)."""
    import psycopg

    reason = ""
    try:
        admin = psycopg.connect(ADMIN_DSN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
    if reason:  # failed outside the handler, so the report is this one line and not a chained traceback
        pytest.fail(f"PostgreSQL is not reachable at {ADMIN_DSN} ({reason}): {_START}", pytrace=False)
    name = f"ariadne_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_db(ADMIN_DSN, name)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture
def postgres_dsn(postgres_database: str) -> str:
    """A URI whose ``search_path`` is a new, empty schema: each test gets its own tables."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{postgres_database}?options={quote(f'-c search_path={schema}')}"
