"""One conformance suite, run against every store backend."""

from __future__ import annotations

import threading
from collections.abc import Callable
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
    Trace,
    TraceNotFoundError,
    TraceStore,
)
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


TRACE_STORES: dict[str, Callable[[Path], Any]] = {
    "memory": lambda p: InMemoryTraceStore(),
    "sqlite": lambda p: SQLiteTraceStore(p / "traces.db"),
}


@pytest.fixture(params=list(TRACE_STORES))
def trace_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return TRACE_STORES[request.param](tmp_path)


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


@pytest.mark.parametrize("make", [lambda p: InMemoryResultStore(), lambda p: SQLiteResultStore(p / "r.db")])
def test_result_store_conformance(make: Callable[[Path], Any], tmp_path: Path) -> None:
    store = make(tmp_path)
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
