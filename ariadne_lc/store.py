"""Where traces and audit results are kept: small protocols with in-memory and SQLite backends.

As in LangGraph's checkpoint libraries, the protocol is tiny, the in-memory store is the reference
implementation and every backend passes the same conformance tests (``tests/test_store.py``).
Records are pydantic models stored as their JSON, so a record read back equals the one written.
The SQLite stores use the standard library, one connection guarded by a lock (``check_same_thread``
off), so one store can serve the agent's threads and the auditor's at once.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from ariadne_lc.errors import StoreError, TraceNotFoundError
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from ariadne_lc.records import AuditResult

__all__ = [
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "ResultStore",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "TraceStore",
]


@runtime_checkable
class TraceStore(Protocol):
    """Keeps recorded traces. ``put`` is called on the agent's thread: it must be quick."""

    def put(self, trace: Trace) -> None:
        """Store a trace (replacing one with the same id)."""

    def get(self, trace_id: str) -> Trace:
        """The trace with this id; raises :class:`~ariadne_lc.errors.TraceNotFoundError`."""

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        """Traces in the order they were first stored, optionally of one thread, the newest ``limit``."""


@runtime_checkable
class ResultStore(Protocol):
    """Keeps audit results."""

    def put_result(self, result: AuditResult) -> None:
        """Store one result (replacing one with the same id)."""

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        """Results in the order they were first stored, optionally of one trace."""


M = TypeVar("M", bound=BaseModel)


class _MemoryTable(Generic[M]):
    def __init__(self) -> None:
        self._items: dict[str, M] = {}
        self._lock = threading.Lock()

    def put(self, key: str, item: M) -> None:
        with self._lock:
            self._items[key] = item

    def get(self, key: str) -> M | None:
        with self._lock:
            return self._items.get(key)

    def values(self) -> list[M]:
        with self._lock:
            return list(self._items.values())


class _SQLiteTable(Generic[M]):
    """One table of JSON documents with an insertion order and one indexed grouping column."""

    def __init__(self, path: str | Path, table: str, group: str, model: type[M]) -> None:
        self._model = model
        self._table = table
        self._group = group
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=5000")
            self._conn.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                f"id TEXT UNIQUE NOT NULL, {group} TEXT, data TEXT NOT NULL)"
            )
            self._conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_{group} ON {table} ({group})")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store at {path}: {exc}") from exc

    def put(self, key: str, group: str | None, item: M) -> None:
        data = item.model_dump_json()
        try:
            with self._lock:
                self._conn.execute(
                    f"INSERT INTO {self._table} (id, {self._group}, data) VALUES (?, ?, ?) "
                    f"ON CONFLICT(id) DO UPDATE SET {self._group} = excluded.{self._group}, data = excluded.data",
                    (key, group, data),
                )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {key} to {self._table}: {exc}") from exc

    def get(self, key: str) -> M | None:
        with self._lock:
            row = self._conn.execute(f"SELECT data FROM {self._table} WHERE id = ?", (key,)).fetchone()
        return None if row is None else self._model.model_validate_json(row[0])

    def select(self, group: str | None, limit: int | None) -> list[M]:
        where, args = ("", ()) if group is None else (f" WHERE {self._group} = ?", (group,))
        newest = f"SELECT seq, data FROM {self._table}{where} ORDER BY seq DESC"
        if limit is not None:
            newest += f" LIMIT {int(limit)}"
        with self._lock:
            rows = self._conn.execute(f"SELECT data FROM ({newest}) ORDER BY seq", args).fetchall()
        return [self._model.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _newest(items: Sequence[M], limit: int | None) -> list[M]:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")
    return list(items if limit is None else items[len(items) - limit :] if limit else [])


class _AsyncTraceStore:
    """Async twins that run the sync method off the event loop."""

    async def aput(self, trace: Trace) -> None:
        await asyncio.to_thread(self.put, trace)  # type: ignore[attr-defined]

    async def aget(self, trace_id: str) -> Trace:
        return await asyncio.to_thread(self.get, trace_id)  # type: ignore[attr-defined]


class InMemoryTraceStore(_AsyncTraceStore):
    """The reference :class:`TraceStore`: a dict in memory (lost when the process ends)."""

    def __init__(self) -> None:
        self._table: _MemoryTable[Trace] = _MemoryTable()

    def put(self, trace: Trace) -> None:
        self._table.put(trace.trace_id, trace)

    def get(self, trace_id: str) -> Trace:
        trace = self._table.get(trace_id)
        if trace is None:
            raise TraceNotFoundError(f"no trace {trace_id!r} in this store")
        return trace

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        traces = [t for t in self._table.values() if thread_id is None or t.thread_id == thread_id]
        return _newest(traces, limit)


class SQLiteTraceStore(_AsyncTraceStore):
    """A :class:`TraceStore` in a SQLite file (``":memory:"`` for a private in-memory database)."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._table = _SQLiteTable(path, "ariadne_traces", "thread_id", Trace)

    def put(self, trace: Trace) -> None:
        self._table.put(trace.trace_id, trace.thread_id, trace)

    def get(self, trace_id: str) -> Trace:
        trace = self._table.get(trace_id)
        if trace is None:
            raise TraceNotFoundError(f"no trace {trace_id!r} in {self.path}")
        return trace

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        _newest([], limit)  # validates limit
        return self._table.select(thread_id, limit)

    def close(self) -> None:
        """Close the database connection."""
        self._table.close()


def _result_model() -> type[AuditResult]:
    from ariadne_lc.records import AuditResult

    return AuditResult


class InMemoryResultStore:
    """The reference :class:`ResultStore`."""

    def __init__(self) -> None:
        self._table: _MemoryTable[AuditResult] = _MemoryTable()

    def put_result(self, result: AuditResult) -> None:
        self._table.put(result.result_id, result)

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        return [r for r in self._table.values() if trace_id is None or r.trace_id == trace_id]


class SQLiteResultStore:
    """A :class:`ResultStore` in a SQLite file; may share the file with a :class:`SQLiteTraceStore`."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._table = _SQLiteTable(path, "ariadne_results", "trace_id", _result_model())

    def put_result(self, result: AuditResult) -> None:
        self._table.put(result.result_id, result.trace_id, result)

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        return self._table.select(trace_id, None)

    def close(self) -> None:
        """Close the database connection."""
        self._table.close()
