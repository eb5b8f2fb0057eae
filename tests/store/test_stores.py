"""One conformance suite, run against every store backend: in memory, SQLite, PostgreSQL (the real server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ariadne_lc import (
    AuditResult,
    InMemoryResultStore,
    InMemoryTraceStore,
    ResultStore,
    SQLiteResultStore,
    SQLiteTraceStore,
    StoreError,
    Trace,
    TraceNotFoundError,
    TraceStore,
)
from ariadne_lc.store import PostgresResultStore, PostgresTraceStore
from ariadne_lc.trace import CheckpointRef, SpanRef, Step, ToolCall


def _trace(i: int, thread: str = "t") -> Trace:
    return Trace(
        trace_id=f"tr-{i}",
        thread_id=thread,
        query=f"question {i} — ünïcode",
        steps=(
            Step(
                index=0,
                node="model",
                langgraph_step=1,
                thought="Because x, so y.",
                tool_calls=(ToolCall(id="c", name="calc", args={"e": [1, 2.5, None]}, output="3", status="success"),),
                message_id="m",
                checkpoint=CheckpointRef(thread_id=thread, task_id="task", task_path="model:task"),
            ),
        ),
        final_answer="3",
        span=SpanRef(trace_id="a" * 32, span_id="b" * 16),
        tags=("x",),
        metadata={"k": 1},
        started_at=datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
    )


BACKENDS = ["memory", "sqlite", "postgres"]


def _open(kind: str, backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if backend == "memory":
        return InMemoryTraceStore() if kind == "trace" else InMemoryResultStore()
    if backend == "sqlite":
        return SQLiteTraceStore(tmp_path / "t.db") if kind == "trace" else SQLiteResultStore(tmp_path / "r.db")
    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresTraceStore(dsn) if kind == "trace" else PostgresResultStore(dsn)


@pytest.fixture(params=BACKENDS)
def trace_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    store = _open("trace", request.param, request, tmp_path)
    yield store
    if hasattr(store, "close"):
        store.close()


@pytest.fixture(params=BACKENDS)
def result_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    store = _open("result", request.param, request, tmp_path)
    yield store
    if hasattr(store, "close"):
        store.close()


def test_trace_json_round_trip() -> None:
    trace = _trace(1)
    assert Trace.model_validate_json(trace.model_dump_json()) == trace


def test_trace_store_conformance(trace_store: Any) -> None:
    assert isinstance(trace_store, TraceStore)
    for i in range(5):
        trace_store.put(_trace(i, thread="even" if i % 2 == 0 else "odd"))
    assert trace_store.get("tr-3") == _trace(3, "odd")
    assert [t.trace_id for t in trace_store.list_traces()] == [f"tr-{i}" for i in range(5)]
    assert [t.trace_id for t in trace_store.list_traces(thread_id="odd")] == ["tr-1", "tr-3"]
    assert [t.trace_id for t in trace_store.list_traces(limit=2)] == ["tr-3", "tr-4"]
    assert trace_store.list_traces(limit=0) == []
    replaced = _trace(1, "odd").model_copy(update={"final_answer": "4"})
    trace_store.put(replaced)
    assert trace_store.get("tr-1").final_answer == "4"
    assert len(trace_store.list_traces()) == 5
    with pytest.raises(TraceNotFoundError, match="no trace 'nope'"):
        trace_store.get("nope")
    with pytest.raises(ValueError, match="limit"):
        trace_store.list_traces(limit=-1)


async def test_trace_store_async_twins(trace_store: Any) -> None:
    await trace_store.aput(_trace(7))
    assert await trace_store.aget("tr-7") == _trace(7)


def test_trace_store_threads(trace_store: Any) -> None:
    def put(k: int) -> None:
        for i in range(50):
            trace_store.put(_trace(k * 100 + i))

    threads = [threading.Thread(target=put, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(trace_store.list_traces()) == 200


def test_sqlite_store_persists(tmp_path: Path) -> None:
    SQLiteTraceStore(tmp_path / "p.db").put(_trace(1))
    assert SQLiteTraceStore(tmp_path / "p.db").get("tr-1") == _trace(1)


def test_result_store_conformance(result_store: Any) -> None:
    store = result_store
    assert isinstance(store, ResultStore)
    results = [
        AuditResult(
            trace_id=f"tr-{i % 2}",
            step_index=0,
            intervention_type="logic_flip",
            status="scored",
            label="faithful",
            original_thought="t",
            phi=0.5,
            similarity=0.5,
        )
        for i in range(4)
    ]
    for r in results:
        store.put_result(r)
    assert store.list_results() == results
    assert store.list_results(trace_id="tr-1") == [results[1], results[3]]
    replaced = results[1].model_copy(update={"label": "violation", "phi": 0.9})
    store.put_result(replaced)  # same id: replaced in place, its position kept
    assert store.list_results() == [results[0], replaced, results[2], results[3]]
    assert store.list_results(trace_id="nope") == []


def test_postgres_stores_share_a_database_and_persist(postgres_dsn: str) -> None:
    traces, results = PostgresTraceStore(postgres_dsn), PostgresResultStore(postgres_dsn)
    traces.put(_trace(1))
    traces.close()
    results.close()
    again = PostgresTraceStore(postgres_dsn)  # the schema exists: created once, versioned
    assert again.get("tr-1") == _trace(1)
    again.close()


def test_postgres_schema_is_versioned(postgres_dsn: str) -> None:
    import psycopg

    PostgresTraceStore(postgres_dsn).close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        versions = dict(conn.execute("SELECT component, version FROM ariadne_schema_versions").fetchall())
        assert versions == {"ariadne_traces": 1}
        conn.execute("UPDATE ariadne_schema_versions SET version = 99")
    with pytest.raises(StoreError, match="schema version 99, newer than"):
        PostgresTraceStore(postgres_dsn)


def test_postgres_store_names_an_unreachable_server() -> None:
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at postgresql://127\.0\.0\.1:1/none"):
        PostgresTraceStore("postgresql://postgres@127.0.0.1:1/none", connect_timeout=0.5)


def _terminate_other_connections(dsn: str) -> int:
    """End every connection to this test's own database but the caller's (the fault a restart causes)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_postgres_store_survives_terminated_connections(postgres_dsn: str) -> None:
    store = PostgresTraceStore(postgres_dsn)
    store.put(_trace(1))
    assert _terminate_other_connections(postgres_dsn) >= 1
    store.put(_trace(2))  # the pool noticed the dead connection and took a new one
    assert [t.trace_id for t in store.list_traces()] == ["tr-1", "tr-2"]
    store.close()


def _waiting(i: int, thread: str, **update: Any) -> Trace:
    return _trace(i, thread).model_copy(update={"final_answer": None, "interrupted": True, **update})


def test_get_paused_is_the_newest_trace_of_the_thread_while_it_waits(trace_store: Any) -> None:
    """What a resume on another replica joins: the thread's newest trace, only while it waits at an interrupt."""
    assert trace_store.get_paused("h") is None
    paused = _waiting(1, "h")
    trace_store.put(paused)
    trace_store.put(_trace(2, "other"))
    assert trace_store.get_paused("h") == paused and trace_store.get_paused("other") is None
    trace_store.put(paused.model_copy(update={"final_answer": "3", "interrupted": False}))  # joined in place
    assert trace_store.get_paused("h") is None
    assert [t.trace_id for t in trace_store.list_traces(thread_id="h")] == ["tr-1"]
    trace_store.put(_waiting(3, "h"))  # the thread's next turn pauses
    assert trace_store.get_paused("h").trace_id == "tr-3"  # type: ignore[union-attr]
    trace_store.put(_waiting(4, "h", error="RuntimeError: boom"))  # a newer turn that failed
    assert trace_store.get_paused("h") is None


def test_a_sub_agents_runs_on_the_thread_are_no_turn_of_it(trace_store: Any) -> None:
    """A resumed turn's sub-agents end (and are stored) before the turn itself, on the same thread: the paused turn is
    still the one a resume joins. Was: the sub-agent's newer trace hid it, and the resume was stored alone."""
    from ariadne_lc.trace import AgentLink

    paused = _waiting(1, "h")
    trace_store.put(paused)
    for i in (2, 3):  # two sub-agent runs of the resumed turn, finished
        trace_store.put(_trace(i, "h").model_copy(update={"parent": AgentLink(trace_id="tr-x", call_id="c")}))
    assert trace_store.get_paused("h") == paused
    trace_store.put(_trace(4, "h"))  # the thread's next turn, finished
    assert trace_store.get_paused("h") is None


def test_a_trace_recorded_before_fingerprints_still_reads(trace_store: Any) -> None:
    from ariadne_lc.trace import GraphFingerprint

    old = _trace(5).model_dump(mode="json")
    del old["graph"]  # the JSON a store written before this field holds
    assert Trace.model_validate(old).graph is None
    marked = _trace(6).model_copy(update={"graph": GraphFingerprint(nodes=("a",), models={"a": ("M #1",)}, digest="d")})
    trace_store.put(marked)
    assert trace_store.get("tr-6") == marked
