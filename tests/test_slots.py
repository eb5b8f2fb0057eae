"""Each run of an audit batch pinned to one model-server slot, every model call of its replays carrying it."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import defaultdict
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.slots import current_slot, pinned
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import Trace

RUNS = 4


class _Slots(BaseCallbackHandler):
    """The slot each model call was made in, by the run (its question) it replays."""

    run_inline = True

    def __init__(self) -> None:
        self.seen: dict[str, set[int | None]] = defaultdict(set)
        self.lock = threading.Lock()

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        question = next((m.text for m in messages[0] if isinstance(m, HumanMessage)), "")
        run = re.search(r"Run R(\d+):", question)
        with self.lock:
            self.seen["?" if run is None else run.group(1)].add(current_slot())


def _recorded(slots: _Slots) -> tuple[Any, list[Trace]]:
    store = InMemoryTraceStore()
    model = lookup_model(3).model_copy(update={"callbacks": [slots]})
    graph = create_agent(model, [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    for run in range(RUNS):
        graph.invoke({"messages": [("user", lookup_question(3, run))]}, {"configurable": {"thread_id": f"s{run}"}})
    slots.seen.clear()  # the recordings ran outside any batch
    return graph, store.list_traces()


def test_the_slot_is_a_context_that_nests_and_ends() -> None:
    assert current_slot() is None
    with pinned(1):
        assert current_slot() == 1
        with pinned(0):
            assert current_slot() == 0
        assert current_slot() == 1
    assert current_slot() is None
    with pytest.raises(ValueError, match="non-negative"), pinned(-1):
        pass


def test_each_run_of_a_batch_is_audited_on_one_slot_of_as_many_as_it_runs_at_once() -> None:
    slots = _Slots()
    graph, traces = _recorded(slots)
    report = Auditor(graph).audit_batch(traces, max_concurrency=2)
    assert report.results and all(r.status != "failed" for r in report.results)
    assert set(slots.seen) == {str(run) for run in range(RUNS)}, slots.seen  # every run's replays called the model
    assert all(len(seen) == 1 for seen in slots.seen.values()), slots.seen  # each run on one slot
    assert set().union(*slots.seen.values()) <= {0, 1}


def test_the_async_batch_pins_each_run_in_its_own_task() -> None:
    slots = _Slots()
    graph, traces = _recorded(slots)
    report = asyncio.run(Auditor(graph).aaudit_batch(traces, max_concurrency=3))
    assert report.results and all(r.status != "failed" for r in report.results)
    assert all(len(seen) == 1 for seen in slots.seen.values()), slots.seen
    assert set().union(*slots.seen.values()) <= {0, 1, 2}
    assert current_slot() is None


def test_a_batch_inside_a_pinned_block_counts_its_slots_from_the_callers() -> None:
    """``ariadne-lc audit --concurrency`` audits one trace at a time per slot: the batch of one keeps the slot."""
    slots = _Slots()
    graph, traces = _recorded(slots)
    with pinned(2):
        Auditor(graph).audit_batch(traces[:1], max_concurrency=1)
        Auditor(graph).audit_batch(traces[1:3], max_concurrency=2)
    assert set().union(*slots.seen.values()) == {2, 3}, slots.seen
    assert slots.seen[traces[0].query.split(":")[0].removeprefix("Run R")] == {2}
