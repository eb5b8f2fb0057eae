"""Deep agents (``deepagents.create_deep_agent``) audited with every default: the fork rebuilds the conversation
that LangGraph's ``DeltaChannel`` keeps as deltas, every replay gives the model the recorded input but for the edit,
and every verdict is right (``tests/harness_agents.py``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc import Auditor, ReplayInputMismatchError
from ariadne_lc.coverage import coverage_line
from ariadne_lc.replay import Replayer, _fork
from tests.harness_agents import QUESTIONS, RUNS, run_deep_delegating, run_deep_lookup

TRUTHS = [("thought", "observation"), ("question", "question"), ("thought", "question"), ("question", "observation")]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()
    else:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        dsn = request.getfixturevalue("postgres_dsn")
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            saver = PostgresSaver(conn)
            saver.setup()
            yield saver


def _heads(graph: Any, traces: list[Any]) -> dict[str, Any]:
    return {t.thread_id: graph.get_state({"configurable": {"thread_id": t.thread_id}}).config for t in traces}


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_every_default_gives_right_verdicts_on_a_deep_agent(any_saver: Any, action: str, answer: str) -> None:
    graph, traces = run_deep_lookup(any_saver, action=action, answer=answer)  # type: ignore[arg-type]
    assert isinstance(graph.channels["messages"], DeltaChannel)  # the harness keeps only deltas per checkpoint
    heads, runs = _heads(graph, traces), dict(RUNS)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # no tool ran during the audit
    assert _heads(graph, traces) == heads  # the production threads are untouched
    coverage = report.coverage
    assert coverage is not None and coverage.units == 4 * len(QUESTIONS)  # 2 thoughts + 2 outputs per run
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage_line(coverage)
    replayed = [r for r in report.results if r.status in ("scored", "inconclusive") or r.error_type]
    assert replayed and all(r.input_checked for r in replayed)  # every replay saw the recorded input
    wrong = []
    for r in report.results:
        if r.status != "scored" or r.control:
            continue
        truth = {"thought->action": action == "question", "observation->answer": answer == "question"}.get(r.link)
        if truth is not None and r.violation != truth:
            wrong.append((r.link, r.step_index, r.intervention_type, r.counterfactual_answer))
    assert not wrong
    flagged = {r.link for r in report.results if r.violation}
    assert ("thought->action" in flagged) == (action == "question")
    assert ("observation->answer" in flagged) == (answer == "question")


def test_a_replay_of_a_deep_agent_reads_the_whole_conversation(any_saver: Any) -> None:
    """The question and the harness's system prompt reach every replayed model call (they were lost when a fork
    copied one delta checkpoint without its ancestors)."""
    graph, traces = run_deep_lookup(any_saver, questions=QUESTIONS[:1])
    (step,) = [s for s in traces[0].steps if s.index == 1]
    assert step.model_input is not None and step.model_input.source == "middleware"
    kinds = [entry.split(":")[0] for entry in step.model_input.messages]
    assert kinds == ["system", "human", "ai", "tool"]  # what the model read at step 1 of the recorded run
    assert step.model_input.tools is not None and {"price", "stock", "task", "ls"} <= set(step.model_input.tools)
    result = Replayer(graph).replay(traces[0], 0, "I should look up the price of the plum with the price tool.")
    assert result.input_checked  # step 1's replayed call read the question, the prompt, the step and its output
    assert result.answer == "From the price tool: the apple costs 3 dollars, the pear costs 4 dollars."


@pytest.mark.parametrize(("action", "answer"), [("thought", "observation"), ("question", "question")])
def test_a_written_to_do_list_is_bookkeeping_and_the_lookups_are_audited(action: str, answer: str) -> None:
    """``write_todos`` (LangChain's ``TodoListMiddleware``) answers "Updated todo list to ...": no observation unit,
    so an agent that never reads the acknowledgement is not flagged for it; the lookups after it are audited."""
    graph, traces = run_deep_lookup(InMemorySaver(), action=action, answer=answer, todos=True)  # type: ignore[arg-type]
    assert [c.name for c in traces[0].steps[0].tool_calls] == ["write_todos"]
    report = Auditor(graph).audit_batch(traces)
    outputs = [r for r in report.results if r.link == "observation->answer"]
    assert outputs and all(r.observation is not None and r.observation.tool == "price" for r in outputs)
    assert report.coverage is not None and report.coverage.by_unit["output"][1] == 2 * len(QUESTIONS)
    scored = [r for r in outputs if r.status == "scored"]
    assert len(scored) == 2 * len(QUESTIONS) and all(r.violation == (answer == "question") for r in scored)
    assert all(r.input_checked for r in scored)


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_sub_agent_behind_task_is_its_own_trace_and_every_unit_gets_a_right_verdict(
    any_saver: Any, action: str, answer: str
) -> None:
    graph, traces = run_deep_delegating(any_saver, action=action, answer=answer)  # type: ignore[arg-type]
    researchers = [t for t in traces if t.agent_name == "researcher"]
    mains = {t.trace_id: t for t in traces if t.agent_name != "researcher"}
    assert len(researchers) == len(mains) == len(QUESTIONS)
    for child in researchers:  # linked both ways: the child names the call, the call names the child
        assert child.parent is not None and child.parent.trace_id in mains and child.parent.call_id == "call-task"
        (task,) = mains[child.parent.trace_id].steps[0].tool_calls
        assert task.name == "task" and task.agents == (child.trace_id,)
        assert child.query == f"Find the price of the {child.query.split()[-1]}"
    heads, runs = _heads(graph, traces), dict(RUNS)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # neither the deep agent's tools nor the sub-agent's ran during the audit
    assert _heads(graph, traces) == heads
    coverage = report.coverage
    assert coverage is not None and coverage.units == 4 * len(QUESTIONS)  # each agent: its plan and its output
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage_line(coverage)
    assert set(coverage.by_agent) == {"researcher", "LangGraph"} and "agents: " in coverage_line(coverage)
    scored = [r for r in report.results if r.status == "scored"]
    assert scored and all(r.input_checked for r in scored)
    truth = {"thought->action": action == "question", "observation->answer": answer == "question"}
    wrong = [
        (r.agent_name, r.link, r.intervened_thought) for r in scored if r.link in truth and r.violation != truth[r.link]
    ]
    assert not wrong
    for agent in ("researcher", "LangGraph"):
        flagged = {r.link for r in scored if r.agent_name == agent and r.violation}
        assert flagged == {link for link, bad in truth.items() if bad}, (agent, flagged)


def test_a_fork_that_loses_the_conversation_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy a delta checkpoint without its history (the old fork): every replay is refused with the named error and
    the audit scores nothing, instead of scoring replays of another conversation."""
    graph, traces = run_deep_lookup(InMemorySaver(), questions=QUESTIONS[:2])
    put = _fork._put

    def without_history(iso_saver: Any, level: _fork.Level, thread: str, edit: Any) -> None:
        """The raw delta checkpoint copied as it is stored: no ``messages`` value, only the last writes."""
        values = {k: v for k, v in level.saved.checkpoint["channel_values"].items() if k != "messages"}
        saved = replace(level.saved, checkpoint={**level.saved.checkpoint, "channel_values": values})
        put(iso_saver, replace(level, saved=saved), thread, edit)

    monkeypatch.setattr(_fork, "_put", without_history)
    with pytest.raises(ReplayInputMismatchError, match=r"message 1 differs \(recorded a human message"):
        Replayer(graph).replay(traces[0], 0, "I should look up the price of the plum with the price tool.")
    report = Auditor(graph).audit_batch(traces)
    assert not [r for r in report.results if r.status == "scored"]
    failed = [r for r in report.results if r.status == "failed"]
    assert failed and all(r.error_type == "ReplayInputMismatchError" for r in failed)
    assert report.coverage is not None and report.coverage.rate == 0.0


async def test_the_async_audit_of_a_delegating_deep_agent_gives_the_same_verdicts() -> None:
    """``aaudit_batch``: the same flows, awaited (the delta history, the sub-agent's namespaced checkpoints)."""
    graph, traces = run_deep_delegating(InMemorySaver(), action="thought", answer="question")
    report = await Auditor(graph).aaudit_batch(traces)
    assert report.coverage is not None and report.coverage.rate == 1.0, coverage_line(report.coverage)
    scored = [r for r in report.results if r.status == "scored"]
    assert all(r.input_checked for r in scored)
    assert {r.link for r in scored if r.violation} == {"observation->answer"}
    assert {r.agent_name for r in scored if r.violation} == {"researcher", "LangGraph"}


def test_a_deep_agent_audited_with_a_changed_system_prompt_is_refused_up_front() -> None:
    from deepagents import create_deep_agent

    from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
    from ariadne_lc.errors import GraphChangedError
    from tests.harness_agents import deep_lookup_model, price, stock

    saver = InMemorySaver()
    graph, traces = run_deep_lookup(saver, questions=["What do an apple and a pear cost?"])
    changed = create_deep_agent(
        deep_lookup_model(), [price, stock], system_prompt="You are a travel agent. Book flights.", checkpointer=saver,
        middleware=[AriadneMiddleware(InMemoryTraceStore())],
    )  # fmt: skip
    with pytest.raises(GraphChangedError, match="the system prompt changed"):
        Auditor(changed).audit(traces[0])
    # the deep agent's own middleware adds to the prompt the model is given: the same graph is never refused
    assert not any(r.error_type == "GraphChangedError" for r in Auditor(graph).audit(traces[0]))
