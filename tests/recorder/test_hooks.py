"""The recorder's hooks for online auditing: head sampling and deferred trace building."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from ariadne_lc.recorder import FinishedRun
from ariadne_lc.testing import faithful_arithmetic_model
from tests.helpers import QUESTION, build_agent


def _invoke(graph: Any, handler: AriadneCallbackHandler, thread: str, **config: Any) -> None:
    graph.invoke(
        {"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": thread}, "callbacks": [handler], **config}
    )


def test_a_declined_run_is_not_recorded_at_all(builder: str) -> None:
    seen: list[tuple[str, str | None, tuple[str, ...], dict[str, Any]]] = []

    def sample(trace_id: str, agent: str | None, tags: tuple[str, ...], metadata: Mapping[str, Any]) -> bool:
        seen.append((trace_id, agent, tags, dict(metadata)))
        return metadata.get("user_id") == "u-1"

    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, sample=sample)
    graph = build_agent(faithful_arithmetic_model(), builder, InMemorySaver())
    _invoke(graph, handler, "a", metadata={"user_id": "u-1"}, tags=["web"])
    _invoke(graph, handler, "b", metadata={"user_id": "u-2"})
    assert handler.flush(timeout=30)
    (trace,) = store.list_traces()
    assert trace.thread_id == "a" and [s[0] for s in seen] == [trace.trace_id, seen[1][0]]
    assert seen[0][2] == ("web",) and seen[0][3]["thread_id"] == "a"
    assert handler.stats.unsampled == 1 and handler.stats.recorded == 1 and handler.runs_in_flight == 0


def test_a_failing_sample_hook_declines_and_is_counted(builder: str) -> None:
    def sample(*_: Any) -> bool:
        raise RuntimeError("bad hook")

    handler = AriadneCallbackHandler(store=InMemoryTraceStore(), sample=sample)
    _invoke(build_agent(faithful_arithmetic_model(), builder, InMemorySaver()), handler, "a")
    assert handler.stats.errors == 1 and handler.stats.unsampled == 1


def test_the_trace_can_be_built_later_on_another_thread(builder: str) -> None:
    finished: list[FinishedRun] = []
    deferred = AriadneCallbackHandler(on_run_end=finished.append)
    eager = InMemoryTraceStore()
    graph = build_agent(faithful_arithmetic_model(), builder, InMemorySaver())
    _invoke(graph, deferred, "t")
    _invoke(
        graph.with_config(callbacks=[AriadneCallbackHandler(store=eager, synchronous=True)]), deferred, "t"
    )  # same thread, again
    assert len(finished) == 2 and not any(f.failed for f in finished)
    built: list[Trace] = []
    worker = threading.Thread(target=lambda: built.extend(f.build() for f in finished))
    worker.start()
    worker.join()
    assert [t.trace_id for t in built] == [f.trace_id for f in finished]
    (reference,) = eager.list_traces()  # the second run, recorded eagerly by the other handler
    ignore = {"trace_id", "started_at", "ended_at"}
    assert built[1].model_dump(exclude=ignore) == reference.model_dump(exclude=ignore)
    assert built[0].final_answer is not None and len(built[0].steps) == 2


def test_a_failed_run_is_flagged() -> None:
    finished: list[FinishedRun] = []
    handler = AriadneCallbackHandler(on_run_end=finished.append)
    graph = build_agent(faithful_arithmetic_model(), "hand", InMemorySaver())
    with pytest.raises(ValueError, match="two numbers"):
        graph.invoke(
            {"messages": [("user", "no numbers here")]}, {"configurable": {"thread_id": "x"}, "callbacks": [handler]}
        )
    (run,) = finished
    assert run.failed and run.build().error is not None
