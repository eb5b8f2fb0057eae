"""Runs that hit LangGraph's recursion limit: ``AriadneMiddleware`` records them failed, exactly when LangGraph raises.

A middleware sees no error raised between nodes, so it knows the limit and the step instead (ariadne_lc.middleware):
this test holds that inference against LangGraph itself, for every limit around the run's length, on the first turn
of a thread and on a later one, and checks that the auditor lists such runs and never audits them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.coverage import coverage_line
from ariadne_lc.testing import ScriptedChatModel
from tests.tutorial_agents import capital


def _calls_then_answers(calls: int) -> ScriptedChatModel:
    def script(messages: list[BaseMessage]) -> AIMessage:
        done = sum(1 for m in messages if m.type == "tool")
        if done % (calls + 1) == calls:  # this turn's calls are done (earlier turns count too)
            return AIMessage(content="The capital of Spain is Madrid.")
        return AIMessage(content="", tool_calls=[{"name": "capital", "args": {"country": "Spain"}, "id": f"c{done}"}])

    script.__name__ = f"calls_{calls}"
    return ScriptedChatModel(script=script)


@pytest.mark.parametrize("calls", [1, 3])
@pytest.mark.parametrize("turns", [1, 2])
def test_a_run_is_recorded_failed_exactly_when_it_hits_the_recursion_limit(calls: int, turns: int) -> None:
    for limit in range(3, 2 * calls + 7):
        store = InMemoryTraceStore()
        graph = create_agent(
            _calls_then_answers(calls), [capital], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
        )
        config: dict[str, Any] = {"configurable": {"thread_id": "t"}, "recursion_limit": limit}
        raised = []
        for _ in range(turns):
            try:
                graph.invoke({"messages": [("user", "What is the capital of Spain?")]}, config)
                raised.append(False)
            except GraphRecursionError:
                raised.append(True)
        traces = sorted(store.list_traces(), key=lambda t: t.started_at)
        recorded = [t.error is not None and t.error.startswith("GraphRecursionError") for t in traces]
        assert recorded == raised, f"limit {limit}: LangGraph raised {raised}, the middleware recorded {recorded}"


def test_failed_runs_are_listed_and_counted_never_audited() -> None:
    store = InMemoryTraceStore()
    graph = create_agent(
        _calls_then_answers(3), [capital], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    for i, limit in enumerate((4, 25)):
        with contextlib.suppress(GraphRecursionError):
            graph.invoke(
                {"messages": [("user", "What is the capital of Spain?")]},
                {"configurable": {"thread_id": f"t{i}"}, "recursion_limit": limit},
            )
    report = Auditor(graph).audit_batch(store.list_traces())
    coverage = report.coverage
    assert coverage is not None and coverage.runs == 2 and coverage.runs_failed == {"GraphRecursionError": 1}
    failed = [r for r in report.results if r.run_failed]
    assert len(failed) == 1 and failed[0].status == "failed" and failed[0].model_calls == 0
    assert "1 of 2 runs failed (GraphRecursionError 1), not audited" in coverage_line(coverage)
    assert coverage.units == 3 and coverage.rate == 1.0  # the finished run's three tool outputs, each with a verdict
