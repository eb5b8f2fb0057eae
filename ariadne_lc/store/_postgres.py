"""PostgreSQL trace and result stores (the ``postgres`` extra): the stores of many replicas.

Each table keeps JSON documents (type ``json``, which keeps the text exactly as written, so a record
read back equals the one written) with an insertion order and one indexed grouping column, like the
SQLite stores. Connections come from a psycopg_pool pool (see :mod:`ariadne_lc.store._pg`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from ariadne_lc.errors import TraceNotFoundError
from ariadne_lc.records import AuditResult
from ariadne_lc.store._memory import AsyncTraceStoreMixin
from ariadne_lc.store._pending import await_recorders
from ariadne_lc.store._pg import DEFAULT_CONNECT_TIMEOUT, DEFAULT_POOL_SIZE, PgPool
from ariadne_lc.store._protocol import TURNS_LOOKED_AT, check_limit, paused_or_none
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool


__all__ = ["PostgresResultStore", "PostgresTraceStore"]

SCHEMA_VERSION = 1
M = TypeVar("M", bound=BaseModel)


class _PgTable(Generic[M]):
    def __init__(self, pg: PgPool, table: str, group: str, model: type[M]) -> None:
        self._pg, self._table, self._group, self._model = pg, table, group, model
        pg.ensure_schema(
            table,
            SCHEMA_VERSION,
            (
                f"CREATE TABLE IF NOT EXISTS {table} (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                f"id TEXT UNIQUE NOT NULL, {group} TEXT, data JSON NOT NULL)",
                f"CREATE INDEX IF NOT EXISTS {table}_{group} ON {table} ({group}, seq)",
            ),
        )

    def put(self, key: str, group: str | None, item: M) -> None:
        with self._pg.tx() as conn:
            conn.execute(
                f"INSERT INTO {self._table} (id, {self._group}, data) VALUES (%s, %s, %s) "
                f"ON CONFLICT (id) DO UPDATE SET {self._group} = excluded.{self._group}, data = excluded.data",
                (key, group, item.model_dump_json()),
            )

    def get(self, key: str) -> M | None:
        rows = self._pg.read(f"SELECT data::text FROM {self._table} WHERE id = %s", (key,))
        return self._model.model_validate_json(rows[0][0]) if rows else None

    def select(self, group: str | None, limit: int | None) -> list[M]:
        check_limit(limit)
        where, args = ("", list[object]()) if group is None else (f" WHERE {self._group} = %s", list[object]([group]))
        newest = f"SELECT seq, data FROM {self._table}{where} ORDER BY seq DESC"
        if limit is not None:
            newest += " LIMIT %s"
            args.append(limit)
        rows: list[Any] = self._pg.read(f"SELECT data::text FROM ({newest}) AS newest ORDER BY seq", args)
        return [self._model.model_validate_json(r[0]) for r in rows]


class PostgresTraceStore(AsyncTraceStoreMixin):
    """A :class:`~ariadne_lc.TraceStore` in PostgreSQL, shared by every replica and worker.

    Args:
        conninfo: A connection URI (``postgresql://user@host:5432/db``) or a ``psycopg_pool.ConnectionPool``
            of yours (left open by :meth:`close`).
        max_size: Connections the store's own pool may open.
        connect_timeout: Seconds to wait for the first connection before raising :class:`~ariadne_lc.errors.StoreError`.

    Examples:
        >>> store = PostgresTraceStore("postgresql://postgres@127.0.0.1:5432/app")  # doctest: +SKIP
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
        # Stores on one URI share their pending builds (see ariadne_lc.store._pending); a pool of yours is its own.
        self.pending_key = ("postgres", conninfo) if isinstance(conninfo, str) else None
        self._table = _PgTable(self._pg, "ariadne_traces", "thread_id", Trace)

    def put(self, trace: Trace) -> None:
        self._table.put(trace.trace_id, trace.thread_id, trace)

    def get(self, trace_id: str) -> Trace:
        await_recorders(self)
        trace = self._table.get(trace_id)
        if trace is None:
            raise TraceNotFoundError(f"no trace {trace_id!r} in {self.where}")
        return trace

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        await_recorders(self)
        return self._table.select(thread_id, limit)

    def get_paused(self, thread_id: str) -> Trace | None:
        await_recorders(self)
        return paused_or_none(self._table.select(thread_id, TURNS_LOOKED_AT)[::-1])  # newest first

    def close(self) -> None:
        """Close the store's own pool."""
        self._pg.close()


class PostgresResultStore:
    """A :class:`~ariadne_lc.ResultStore` in PostgreSQL; may share the database (and a pool) with a
    :class:`PostgresTraceStore` and a :class:`~ariadne_lc.online.PostgresJobStore`.

    Args:
        conninfo: A connection URI or a ``psycopg_pool.ConnectionPool`` of yours.
        max_size: Connections the store's own pool may open.
        connect_timeout: Seconds to wait for the first connection before raising :class:`~ariadne_lc.errors.StoreError`.
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
        self._table = _PgTable(self._pg, "ariadne_results", "trace_id", AuditResult)

    def put_result(self, result: AuditResult) -> None:
        self._table.put(result.result_id, result.trace_id, result)

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        return self._table.select(trace_id, None)

    def close(self) -> None:
        """Close the store's own pool."""
        self._pg.close()
