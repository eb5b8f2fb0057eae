"""SQLite stores: the standard library, one connection guarded by a lock (``check_same_thread``
off), so one store can serve the agent's threads and the auditor's at once. Records are stored as
their JSON, so a record read back equals the one written."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from ariadne_lc.errors import StoreError, TraceNotFoundError
from ariadne_lc.records import AuditResult
from ariadne_lc.store._memory import AsyncTraceStoreMixin
from ariadne_lc.store._pending import await_recorders
from ariadne_lc.store._protocol import TURNS_LOOKED_AT, check_limit, paused_or_none
from ariadne_lc.trace import Trace

__all__ = ["SQLiteResultStore", "SQLiteTraceStore"]

M = TypeVar("M", bound=BaseModel)


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
        check_limit(limit)
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


class SQLiteTraceStore(AsyncTraceStoreMixin):
    """A :class:`~ariadne_lc.TraceStore` in a SQLite file (``":memory:"`` for a private in-memory database).

    Two store objects on one file share their pending builds (``pending_key``): a read through either
    waits for the traces of runs recorded through the other in this process.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.pending_key = None if str(path) in ("", ":memory:") else ("sqlite", str(Path(path).resolve()))
        self._table = _SQLiteTable(path, "ariadne_traces", "thread_id", Trace)

    def put(self, trace: Trace) -> None:
        self._table.put(trace.trace_id, trace.thread_id, trace)

    def get(self, trace_id: str) -> Trace:
        await_recorders(self)
        trace = self._table.get(trace_id)
        if trace is None:
            raise TraceNotFoundError(f"no trace {trace_id!r} in {self.path}")
        return trace

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        await_recorders(self)
        return self._table.select(thread_id, limit)

    def get_paused(self, thread_id: str) -> Trace | None:
        await_recorders(self)
        return paused_or_none(self._table.select(thread_id, TURNS_LOOKED_AT)[::-1])  # newest first

    def close(self) -> None:
        """Close the database connection."""
        self._table.close()


class SQLiteResultStore:
    """A :class:`~ariadne_lc.ResultStore` in a SQLite file; may share the file with a :class:`SQLiteTraceStore`."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._table = _SQLiteTable(path, "ariadne_results", "trace_id", AuditResult)

    def put_result(self, result: AuditResult) -> None:
        self._table.put(result.result_id, result.trace_id, result)

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        return self._table.select(trace_id, None)

    def close(self) -> None:
        """Close the database connection."""
        self._table.close()
