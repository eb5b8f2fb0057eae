"""The builder thread: traces off the agent's thread, flush, bounded queue, shutdown."""

from __future__ import annotations

import threading
import uuid

from langchain_core.messages import AIMessage

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace


def _run(handler: AriadneCallbackHandler, answer: str = "a") -> None:
    root, node = uuid.uuid4(), uuid.uuid4()
    handler.on_chain_start({}, {"messages": [("user", "q")]}, run_id=root, metadata={"thread_id": "t"})
    handler.on_chain_start({}, {}, run_id=node, parent_run_id=root, metadata={"langgraph_node": "n"}, name="n")
    handler.on_chain_end({"messages": [AIMessage(content=answer, id=str(node))]}, run_id=node, parent_run_id=root)
    handler.on_chain_end({}, run_id=root)


def test_traces_are_built_and_stored_on_the_builder_thread() -> None:
    agent_thread = threading.get_ident()
    built_on: list[int] = []
    store = InMemoryTraceStore()

    def on_trace(trace: Trace) -> None:
        built_on.append(threading.get_ident())

    handler = AriadneCallbackHandler(store=store, on_trace=on_trace)
    for i in range(5):
        _run(handler, f"answer {i}")
    assert handler.flush(timeout=30)
    assert sorted(t.final_answer or "" for t in store.list_traces()) == [f"answer {i}" for i in range(5)]
    assert len(built_on) == 5 and agent_thread not in built_on
    assert handler.stats.recorded == 5 and handler.stats.errors == 0


def test_a_full_queue_drops_and_counts_and_shutdown_refuses_new_runs() -> None:
    gate = threading.Event()
    store = InMemoryTraceStore()

    def slow(trace: Trace) -> None:
        gate.wait(30)

    handler = AriadneCallbackHandler(store=store, on_trace=slow, max_queued=2)
    for _ in range(6):
        _run(handler)
    assert handler.stats.dropped >= 3  # the builder holds at most one, the queue two
    gate.set()
    assert handler.shutdown(timeout=30)
    kept = len(store.list_traces())
    assert kept == 6 - handler.stats.dropped
    _run(handler)
    assert handler.flush(timeout=5) and len(store.list_traces()) == kept and handler.stats.dropped == 7 - kept


def test_synchronous_stores_before_the_run_returns() -> None:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    _run(handler)
    (trace,) = store.list_traces()
    assert trace.final_answer == "a" and trace.query == "q" and trace.ended_at is not None
