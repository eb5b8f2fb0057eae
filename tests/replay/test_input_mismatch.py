"""A replay must see the recorded input: a graph whose system prompt changed since a run was recorded is refused
before any audit (``GraphChangedError``, the middleware path included), and a replay given another input anyway fails
and says why."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.errors import GraphChangedError
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import Trace


def _recorded(saver: InMemorySaver) -> tuple[Any, Trace]:
    store = InMemoryTraceStore()
    recorded = create_agent(
        lookup_model(3), [lookup], checkpointer=saver, middleware=[AriadneMiddleware(store)],
        system_prompt="You add numbers.\nLook every value up.",
    )  # fmt: skip
    recorded.invoke({"messages": [("user", lookup_question(3, 1))]}, {"configurable": {"thread_id": "t"}})
    (trace,) = store.list_traces()
    return recorded, trace


def _graph(saver: InMemorySaver, prompt: str) -> Any:
    middleware = [AriadneMiddleware(InMemoryTraceStore())]
    return create_agent(lookup_model(3), [lookup], checkpointer=saver, middleware=middleware, system_prompt=prompt)


def test_a_middleware_trace_audited_with_a_changed_system_prompt_is_refused_up_front() -> None:
    saver = InMemorySaver()
    recorded, trace = _recorded(saver)
    assert trace.graph is not None and trace.graph.partial and len(trace.graph.system_lines) == 2
    with pytest.raises(GraphChangedError, match="the system prompt changed") as refused:
        Auditor(_graph(saver, "You multiply numbers.\nLook every value up.")).audit(trace)
    assert refused.value.differences == ["system prompt changed"]
    batch = Auditor(_graph(saver, "You multiply numbers.")).audit_batch([trace]).results
    assert [r.error_type for r in batch] == ["GraphChangedError"]  # a batch records it and goes on
    assert not any(r.status == "failed" for r in Auditor(recorded).audit(trace))  # the same prompt: audited


def test_a_replay_given_another_system_prompt_anyway_fails_every_audit_and_names_the_prompt() -> None:
    saver = InMemorySaver()
    _, trace = _recorded(saver)
    changed = _graph(saver, "You multiply numbers.")
    results = Auditor(changed, allow_graph_change=True).audit(trace)
    assert results and all(r.status == "failed" and r.error_type == "ReplayInputMismatchError" for r in results)
    assert all("The system prompt is not the recorded one" in (r.error or "") for r in results)
