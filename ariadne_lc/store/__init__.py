"""Where traces and audit results are kept: small protocols, an in-memory reference, SQLite, Postgres.

As in LangGraph's checkpoint libraries, the protocol is tiny (:mod:`ariadne_lc.store._protocol`),
the in-memory store is the reference implementation, and every backend passes the same conformance
tests (``tests/store/``). SQLite needs only the standard library. The PostgreSQL stores need the
``postgres`` extra (psycopg 3 with its pool) and are imported on first use, so ``import ariadne_lc``
never loads psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ariadne_lc.store._memory import InMemoryResultStore, InMemoryTraceStore
from ariadne_lc.store._pending import await_recorders, flush_traces
from ariadne_lc.store._protocol import ResultStore, TraceStore
from ariadne_lc.store._sqlite import SQLiteResultStore, SQLiteTraceStore

if TYPE_CHECKING:
    from ariadne_lc.store._postgres import PostgresResultStore, PostgresTraceStore

__all__ = [
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "PostgresResultStore",
    "PostgresTraceStore",
    "ResultStore",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "TraceStore",
    "await_recorders",
    "flush_traces",
]

_LAZY = {"PostgresResultStore", "PostgresTraceStore"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from ariadne_lc.store import _postgres

        return getattr(_postgres, name)
    raise AttributeError(f"module 'ariadne_lc.store' has no attribute {name!r}")
