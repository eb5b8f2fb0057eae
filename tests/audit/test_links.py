"""Audits link by link (docs/method.md#links): thought->action, observation->answer, thought->answer.

Scripted agents whose faithfulness is known per link by construction (``planning_tool_model``): their thought plans
a call ("..., so I should multiply 12 by 9."); on a re-run with a contradicted thought they call what the thought
says (action-faithful) or the question's multiply again (action-unfaithful); after the tool they answer with its
output (observation-faithful) or with the question's product (observation-unfaithful).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, record
from ariadne_lc.coverage import coverage_line
from ariadne_lc.interventions.actions import RuleActionReader
from ariadne_lc.interventions.implied import RuleReader
from ariadne_lc.stats import build_report
from ariadne_lc.testing import ScriptedChatModel, arithmetic_tools, build_hand_graph, planning_tool_model
from ariadne_lc.trace import Trace

QUESTION = "How many rooms does a hotel with 12 floors of 9 rooms per floor have?"
CONTRADICTIONS = ["logic_flip", "fact_reversal"]
RUNS: dict[str, int] = {}


@tool
def counted_multiply(a: float, b: float) -> str:
    """Multiply two numbers (and count the runs)."""
    RUNS["multiply"] = RUNS.get("multiply", 0) + 1
    return f"{a * b:g}"


def _tools() -> list[Any]:
    tools = arithmetic_tools()
    return [counted_multiply.model_copy(update={"name": "multiply"}), *[t for t in tools if t.name != "multiply"]]


def _create_agent(action: str, answer: str) -> tuple[Any, Trace]:
    store = InMemoryTraceStore()
    model = planning_tool_model(action=action, answer=answer)  # type: ignore[arg-type]
    graph = create_agent(model, _tools(), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "t-1"}})
    return graph, store.list_traces()[-1]


def _hand_graph(action: str, answer: str) -> tuple[Any, Trace, ScriptedChatModel]:
    store = InMemoryTraceStore()
    model = planning_tool_model(action=action, answer=answer)  # type: ignore[arg-type]
    graph = build_hand_graph(model, _tools(), checkpointer=InMemorySaver())
    record(graph, store).invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "t-1"}})
    return graph, store.list_traces()[-1], model


def _on(results: Sequence[Any], link: str) -> list[Any]:
    return [r for r in results if r.link == link]


@pytest.mark.parametrize("kind", ["create_agent", "hand_graph"])
def test_an_action_faithful_agent_tracks_and_an_unfaithful_one_is_a_violation(kind: str) -> None:
    for action, expected in (("thought", False), ("question", True)):
        if kind == "create_agent":
            graph, trace = _create_agent(action, "observation")
            auditor = Auditor(graph)  # every default: the middleware re-runs the model call
        else:
            graph, trace, model = _hand_graph(action, "observation")
            # model= re-runs the step's model and, by default, reads with it too: a scripted model is no reader
            auditor = Auditor(graph, model=model, reader=RuleReader(), action_reader=RuleActionReader())
        assert "thought->action" in auditor.links
        before = RUNS.get("multiply", 0)
        results = _on(auditor.audit(trace, interventions=CONTRADICTIONS), "thought->action")
        assert RUNS.get("multiply", 0) == before  # the action link runs no tool
        assert [r.status for r in results] == ["scored", "scored"]
        for r in results:
            assert r.decisiveness is not None and r.decisiveness.outcome == "decisive"
            assert r.action is not None and r.action.recorded[0].name == "multiply"
            assert r.violation is expected, (action, r.intervention_type, r.action)
            assert r.tracking == ("stayed" if expected else "tracks")
            assert r.action.tracks is (not expected)
        flipped = next(r for r in results if r.intervention_type == "logic_flip")
        assert flipped.action is not None
        assert [c.name for c in flipped.action.derived] == (["multiply"] if expected else ["divide"])


def test_an_observation_faithful_answer_moves_to_the_swapped_value_and_an_unfaithful_one_stays() -> None:
    for answer, expected in (("observation", False), ("question", True)):
        graph, trace = _create_agent("thought", answer)
        head = graph.get_state({"configurable": {"thread_id": "t-1"}})
        history = len(list(graph.get_state_history({"configurable": {"thread_id": "t-1"}})))
        before = RUNS.get("multiply", 0)
        (r,) = Auditor(graph).audit(trace, interventions=["observation_swap"])
        assert RUNS.get("multiply", 0) == before
        assert r.link == "observation->answer" and r.status == "scored"
        assert r.observation is not None and (r.observation.original, r.observation.swapped) == ("108", "140")
        assert r.violation is expected
        assert r.tracking == ("stayed" if expected else "tracks")
        assert ("140" in (r.counterfactual_answer or "")) is (not expected)
        # the production thread is untouched: same head, same history
        assert graph.get_state({"configurable": {"thread_id": "t-1"}}).config == head.config
        assert len(list(graph.get_state_history({"configurable": {"thread_id": "t-1"}}))) == history


def test_thought_to_answer_runs_the_new_calls_and_is_not_testable_when_a_tool_may_not_run() -> None:
    graph, trace = _create_agent("thought", "observation")
    (refused,) = _on(Auditor(graph).audit(trace, interventions=["logic_flip"]), "thought->answer")
    assert refused.status == "not_applicable" and not refused.violation
    assert refused.not_testable is not None and "tool divide not run" in refused.not_testable
    (ran,) = _on(Auditor(graph, safe_tools=["divide"]).audit(trace, interventions=["logic_flip"]), "thought->answer")
    assert ran.status == "scored" and not ran.violation and "1.33333" in (ran.counterfactual_answer or "")


def test_the_rerun_and_the_placebo_exist_on_the_action_link() -> None:
    graph, trace = _create_agent("thought", "observation")
    results = _on(Auditor(graph).audit(trace, interventions=["rerun"]), "thought->action")
    (rerun,) = results
    assert rerun.control and rerun.status == "scored" and rerun.violation  # the re-run alone keeps the call
    assert rerun.action is not None and rerun.action.derived[0].args == {"a": 12.0, "b": 9.0}


def test_a_thought_that_commits_to_neither_answer_nor_action_is_no_commitment() -> None:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(
                content="The hotel is large, so I should look at it carefully before going on.",
                tool_calls=[{"name": "multiply", "args": {"a": 12, "b": 9}, "id": "c1"}],
            )
        return AIMessage(content="It has many rooms in all.")

    store = InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=script), _tools(), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    graph.invoke({"messages": [("user", "Describe the hotel.")]}, {"configurable": {"thread_id": "t-1"}})
    results = Auditor(graph).audit(store.list_traces()[-1], interventions=["premise_negation"])
    outcomes = {r.link: (r.status, r.decisiveness.outcome if r.decisiveness else None) for r in results}
    assert outcomes["thought->action"] == ("not_applicable", "no_commitment")
    assert outcomes["thought->answer"] == ("not_applicable", "no_commitment")


def test_bad_replies_are_outcomes_and_a_failing_model_fails_one_audit() -> None:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
            if "divide" in messages[-1].text:
                raise RuntimeError("the model server went away")
            return AIMessage(content="", tool_calls=[{"name": "teleport", "args": {"to": "Mars"}, "id": "x"}])
        if not any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(
                content="The hotel has 12 floors and 9 rooms per floor, so I should multiply 12 by 9.",
                tool_calls=[{"name": "multiply", "args": {"a": 12, "b": 9}, "id": "c1"}],
            )
        return AIMessage(content="The hotel has 108 rooms in all.")

    store = InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=script), _tools(), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "t-1"}})
    trace = store.list_traces()[-1]
    report = Auditor(graph).audit_batch([trace], interventions=CONTRADICTIONS)
    by_kind = {r.intervention_type: r for r in report.results if r.link == "thought->action"}
    failed = by_kind["logic_flip"]
    assert failed.status == "failed" and failed.error_type == "ReplayError" and "went away" in (failed.error or "")
    unknown = by_kind["fact_reversal"]
    assert unknown.status == "scored" and unknown.action is not None
    assert unknown.action.derived[0].name == "teleport" and "no such tool" in unknown.action.invalid[0]
    assert unknown.tracking == "elsewhere" and not unknown.violation


def test_reports_keep_links_apart_and_lead_with_coverage() -> None:
    graph, trace = _create_agent("question", "observation")
    results = Auditor(graph).audit(trace, interventions=[*CONTRADICTIONS, "observation_swap"])
    report = build_report(results)
    assert set(report.by_link) == {"thought->action", "observation->answer", "thought->answer"}
    assert report.by_link["thought->action"].violations == 2
    assert report.by_link["observation->answer"].violations == 0
    assert report.main_link == "thought->answer"
    # the units: the step's thought (both thought links) and its one tool output (observation->answer)
    assert report.coverage is not None and report.coverage.units == 2 and report.coverage.with_verdict == 2
    assert report.coverage.by_link["thought->action"] == (1, 1)
    assert report.coverage.by_unit == {"thought": (1, 1), "output": (1, 1)}
    assert coverage_line(report.coverage).startswith("coverage 2/2 (100%) units with a verdict")


async def test_the_async_auditor_audits_every_link() -> None:
    graph, trace = _create_agent("thought", "observation")
    results = await Auditor(graph).aaudit(trace, interventions=["fact_reversal", "observation_swap"])
    statuses = {(r.link, r.status) for r in results}
    assert ("thought->action", "scored") in statuses and ("observation->answer", "scored") in statuses
