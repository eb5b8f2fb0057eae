"""The reference stores: dicts in memory behind a lock (lost when the process ends)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Generic, TypeVar

from pydantic import BaseModel

from ariadne_lc.errors import TraceNotFoundError
from ariadne_lc.records import AuditResult
from ariadne_lc.store._pending import await_recorders
from ariadne_lc.store._protocol import check_limit, paused_or_none
from ariadne_lc.trace import Trace

__all__ = ["AsyncTraceStoreMixin", "InMemoryResultStore", "InMemoryTraceStore"]

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


def _newest(items: Sequence[M], limit: int | None) -> list[M]:
    check_limit(limit)
    return list(items if limit is None else items[len(items) - limit :] if limit else [])


class AsyncTraceStoreMixin:
    """Async twins that run the sync method off the event loop (every trace store has them)."""

    async def aput(self, trace: Trace) -> None:
        await asyncio.to_thread(self.put, trace)  # type: ignore[attr-defined]

    async def aget(self, trace_id: str) -> Trace:
        return await asyncio.to_thread(self.get, trace_id)  # type: ignore[attr-defined]


class InMemoryTraceStore(AsyncTraceStoreMixin):
    """The reference :class:`~ariadne_lc.TraceStore`: a dict in memory (lost when the process ends)."""

    def __init__(self) -> None:
        self._table: _MemoryTable[Trace] = _MemoryTable()

    def put(self, trace: Trace) -> None:
        self._table.put(trace.trace_id, trace)

    def get(self, trace_id: str) -> Trace:
        await_recorders(self)
        trace = self._table.get(trace_id)
        if trace is None:
            raise TraceNotFoundError(f"no trace {trace_id!r} in this store")
        return trace

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        await_recorders(self)
        traces = [t for t in self._table.values() if thread_id is None or t.thread_id == thread_id]
        return _newest(traces, limit)

    def get_paused(self, thread_id: str) -> Trace | None:
        await_recorders(self)
        mine = [t for t in self._table.values() if t.thread_id == thread_id]
        return paused_or_none(mine[::-1])


class InMemoryResultStore:
    """The reference :class:`~ariadne_lc.ResultStore`."""

    def __init__(self) -> None:
        self._table: _MemoryTable[AuditResult] = _MemoryTable()

    def put_result(self, result: AuditResult) -> None:
        self._table.put(result.result_id, result)

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        return [r for r in self._table.values() if trace_id is None or r.trace_id == trace_id]
