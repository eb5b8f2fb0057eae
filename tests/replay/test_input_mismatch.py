"""A replay given another input than the recorded call's fails, and says why when the cause is plain."""

from __future__ import annotations

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.testing import lookup, lookup_model, lookup_question


def test_a_changed_system_prompt_fails_every_audit_and_names_the_prompt() -> None:
    store, saver = InMemoryTraceStore(), InMemorySaver()
    recorded = create_agent(
        lookup_model(3), [lookup], checkpointer=saver, middleware=[AriadneMiddleware(store)],
        system_prompt="You add numbers.",
    )  # fmt: skip
    recorded.invoke({"messages": [("user", lookup_question(3, 1))]}, {"configurable": {"thread_id": "t"}})
    (trace,) = store.list_traces()
    changed = create_agent(
        lookup_model(3), [lookup], checkpointer=saver, middleware=[AriadneMiddleware(InMemoryTraceStore())],
        system_prompt="You multiply numbers.",
    )  # fmt: skip
    results = Auditor(changed).audit(trace)
    assert results and all(r.status == "failed" and r.error_type == "ReplayInputMismatchError" for r in results)
    assert all("The system prompt is not the recorded one" in (r.error or "") for r in results)
    same = Auditor(recorded).audit(trace)
    assert not any(r.status == "failed" for r in same)
