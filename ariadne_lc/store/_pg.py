"""What every PostgreSQL store shares: a connection pool, a versioned schema, errors that say where.

psycopg 3 and psycopg_pool come with the ``postgres`` extra; this module is only imported by the
Postgres stores, which are only imported when one is asked for. A store takes a connection URI (it
then owns a :class:`psycopg_pool.ConnectionPool`) or a pool of the application's (left open at
``close``). Each checkout is checked first (``ConnectionPool.check_connection``), so a connection
the server dropped (a restart, ``pg_terminate_backend``) is replaced instead of failing the next
transaction; a transaction that loses its connection midway fails with :class:`StoreError` and
changes nothing, as Postgres rolls it back.

Schemas are created idempotently under a transaction-scoped advisory lock (so processes starting
together do not race on ``CREATE TABLE IF NOT EXISTS``) and recorded in ``ariadne_schema_versions``:
one row per component with the version its tables have. A store refuses a schema newer than its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ariadne_lc.errors import MissingExtraError, StoreError

try:
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("The PostgreSQL stores", "postgres") from exc

__all__ = [
    "CHECKPOINTER_LOCK",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_POOL_SIZE",
    "SCHEMA_LOCK",
    "PgPool",
    "one_line",
    "redact",
    "schema_lock",
]

DEFAULT_POOL_SIZE = 4
"""Connections a store's own pool may open."""
DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds a new store waits for its first connection before it reports the server unreachable."""
SCHEMA_LOCK = 0x41524941444E45
"""The advisory lock key ("ARIADNE") that serialises every schema creation of ariadne_lc's stores."""
CHECKPOINTER_LOCK = 0x41524941434B50
"""The advisory lock key ("ARIACKP") that serialises ``PostgresSaver.setup()`` (see :func:`schema_lock`)."""
_VERSIONS = """CREATE TABLE IF NOT EXISTS ariadne_schema_versions (
    component TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now())"""


def redact(conninfo: str) -> str:
    """``conninfo`` without its password, for messages and logs."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.Error:
        return "<unparsable connection string>"
    host, port, db = params.get("host", "localhost"), params.get("port", 5432), params.get("dbname", "")
    return f"postgresql://{host}:{port}/{db}"


@contextmanager
def schema_lock(
    conninfo: str, *, key: int = CHECKPOINTER_LOCK, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
) -> Iterator[None]:
    """Hold the advisory lock ``key`` while the block runs, on a connection of its own.

    For schema set-up that is not ours and takes no lock, such as ``PostgresSaver.setup()``: its
    migrations (``CREATE TABLE IF NOT EXISTS``, then ``INSERT INTO checkpoint_migrations``) fail with
    ``UniqueViolation`` when two processes run them at once on a fresh database, which is what a fleet
    started all at once does. A session lock, not a transaction one, because the wrapped code commits
    on connections of its own; it goes when this connection closes, even if the process dies.

    The lock is polled (``pg_try_advisory_lock``), never waited for in a statement: the checkpointer's
    migrations run ``CREATE INDEX CONCURRENTLY``, which waits for every transaction in progress to
    end, a statement blocked on the lock included, while that statement waits for the lock the
    migrating session holds: a deadlock Postgres does not detect. For the same reason the key is not
    :data:`SCHEMA_LOCK`, whose holders wait for it inside a transaction.
    """
    try:
        conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=max(1, round(connect_timeout)))
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redact(conninfo)}: {one_line(exc)}") from exc
    try:
        pause = 0.02
        while not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:  # type: ignore[index]
            time.sleep(pause)
            pause = min(0.5, pause * 2)
        yield
    finally:
        conn.close()  # ends the session, which releases the lock


def one_line(exc: BaseException) -> str:
    """A database error's message on one line (libpq's messages carry a DETAIL/HINT line or more)."""
    return " ".join(str(exc).split()) or type(exc).__name__


class PgPool:
    """A pool (owned or borrowed) with transactions that raise :class:`StoreError` naming the server."""

    def __init__(
        self,
        target: str | ConnectionPool,
        *,
        max_size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        if isinstance(target, ConnectionPool):
            self.pool, self.owned, self.where = target, False, f"pool {target.name}"
            return
        if not isinstance(target, str):
            raise StoreError(f"a Postgres store needs a connection URI or a ConnectionPool, got {target!r}")
        self.where = redact(target)
        self.owned = True
        self.pool = ConnectionPool(
            target,
            min_size=1,
            max_size=max_size,
            open=False,
            check=ConnectionPool.check_connection,
            name=f"ariadne-{self.where}",
        )
        try:
            self.pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout as exc:
            self.pool.close()
            raise StoreError(
                f"cannot connect to PostgreSQL at {self.where} within {connect_timeout:g} s: "
                "is the server running and the database created?"
            ) from exc

    @contextmanager
    def tx(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreError(f"PostgreSQL at {self.where}: {type(exc).__name__}: {exc}".rstrip()) from exc

    def read(self, sql: str, args: Sequence[object] | dict[str, object] = ()) -> list[tuple[Any, ...]]:
        with self.tx() as conn:
            return conn.execute(sql, args).fetchall()

    def ensure_schema(self, component: str, version: int, statements: Sequence[str]) -> None:
        """Create ``component``'s tables at ``version`` unless they are there (idempotent, race-free)."""
        with self.tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute(_VERSIONS)
            row = conn.execute(
                "SELECT version FROM ariadne_schema_versions WHERE component = %s", (component,)
            ).fetchone()
            if row is not None and row[0] > version:
                raise StoreError(
                    f"the {component} tables at {self.where} have schema version {row[0]}, newer than this "
                    f"ariadne_lc's {version}: upgrade ariadne_lc"
                )
            if row is not None and row[0] == version:
                return
            for statement in statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO ariadne_schema_versions (component, version) VALUES (%s, %s) "
                "ON CONFLICT (component) DO UPDATE SET version = excluded.version, updated_at = now()",
                (component, version),
            )

    def close(self) -> None:
        if self.owned:
            self.pool.close()
