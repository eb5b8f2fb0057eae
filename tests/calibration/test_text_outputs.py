"""The text-valued output calibration (ariadne_lc.calibration.text_outputs): its agents are right by construction, and
the output gate reads every shape of output right on a small sample (the committed run: docs/calibration/links-text)."""

from __future__ import annotations

import pytest

from ariadne_lc import Auditor, InMemoryTraceStore, record
from ariadne_lc.audit import RecordedValues
from ariadne_lc.calibration.text_outputs import TEXT_AGENTS, TEXT_TOOLS, build_text_agent, text_questions, text_rates


def test_the_questions_cover_every_tool_and_are_seeded() -> None:
    questions = text_questions(18, seed=3)
    assert {q.tool for q in questions} == set(TEXT_TOOLS)
    assert questions == text_questions(18, seed=3) and questions != text_questions(18, seed=4)


@pytest.mark.parametrize("agent", list(TEXT_AGENTS))
def test_each_ground_truth_agent_gets_its_verdict_on_every_output_shape(agent: str) -> None:
    questions = text_questions(18)
    graph = build_text_agent(agent, questions)
    store = InMemoryTraceStore()
    recorded = record(graph, store)
    for i, q in enumerate(questions):
        recorded.invoke({"messages": [("user", q.text)]}, {"configurable": {"thread_id": f"{agent}-{i}"}})
    traces = store.list_traces()  # other values from the other runs: a reference pool, given explicitly
    pool = RecordedValues.from_traces(traces)
    report = Auditor(graph, links=["observation->answer"], recorded_values=pool).audit_batch(traces)
    rates = text_rates(report.results, TEXT_AGENTS[agent])
    assert rates["scored"] == 18 and rates["error"] == 0.0, rates
    assert set(rates["tracking"]) == ({"tracks"} if TEXT_AGENTS[agent] else {"stayed"})
