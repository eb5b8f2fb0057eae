"""Swarms and supervisors audited with every default (``tests/harness_agents.py``): a hand-off is an action (its thought
contradicted by naming another agent), each worker's own steps are units, replayed on the worker's own graph when the
supervisor calls it from a function, and every verdict is right."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.coverage import coverage_line
from tests.harness_agents import QUESTIONS, RUNS, run_supervisor, run_swarm

TRUTHS = [("thought", "observation"), ("question", "question"), ("thought", "question"), ("question", "observation")]


def _heads(graph: Any, threads: set[str]) -> dict[str, Any]:
    return {t: graph.get_state({"configurable": {"thread_id": t}}).config for t in threads}


def _audit(graph: Any, traces: list[Any]) -> Any:
    threads = {t.thread_id for t in traces}
    heads, runs = _heads(graph, threads), dict(RUNS)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # no tool ran during the audit
    assert _heads(graph, threads) == heads  # the production threads are untouched
    return report


def _wrong(report: Any, action: str, answer: str, reads: str = "observation") -> list[Any]:
    """The verdicts that are wrong: the agents' truth on each link (a supervisor's on its worker's result apart)."""
    truth = {"thought->action": action == "question", "observation->answer": answer == "question"}
    supervisor = {**truth, "observation->answer": reads == "question"}
    return [
        (r.agent_name, r.link, r.intervened_thought, r.counterfactual_answer)
        for r in report.results
        if r.status == "scored" and not r.control and r.link in truth
        and r.violation != (supervisor if r.agent_name == "supervisor" else truth)[r.link]
    ]  # fmt: skip


@pytest.mark.parametrize("recorder", ["middleware", "record"])
@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_swarm_gets_a_right_verdict_on_its_hand_offs_and_its_workers(action: str, answer: str, recorder: str) -> None:
    """Recorded with ``AriadneMiddleware`` in each agent, or with ``record(swarm, store)``: the hand-off re-run is the
    agent's own (the middleware, or its model found in its node), the same verdicts either way."""
    graph, traces = run_swarm(InMemorySaver(), action=action, answer=answer, recorder=recorder)  # type: ignore[arg-type]
    assert sorted({t.agent_name for t in traces}) == ["shopper", "triage"]
    report = _audit(graph, traces)
    coverage = report.coverage
    assert coverage is not None and coverage.units == 3 * len(QUESTIONS)  # triage's hand-off, the shopper's 2 units
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage_line(coverage)
    assert not _wrong(report, action, answer)
    handoffs = [r for r in report.results if r.agent_name == "triage" and r.link == "thought->action"]
    assert len(handoffs) == len(QUESTIONS) and all(r.status == "scored" for r in handoffs)
    assert all("to the clerk" in (r.intervened_thought or "") for r in handoffs)  # another agent it can hand to
    assert all(r.input_checked for r in report.results if r.status == "scored")


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_supervisors_workers_are_audited_on_their_own_graphs(action: str, answer: str) -> None:
    graph, traces = run_supervisor(InMemorySaver(), action=action, answer=answer)  # type: ignore[arg-type]
    assert {t.agent_name for t in traces} == {"shopper"}  # the supervisor's own agent takes no middleware
    report = _audit(graph, traces)
    coverage = report.coverage
    assert coverage is not None and coverage.units == 2 * len(QUESTIONS)
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage_line(coverage)
    assert not _wrong(report, action, answer)
    scored = [r for r in report.results if r.status == "scored"]
    assert all(r.input_checked for r in scored)
    swaps = [r for r in scored if r.link == "observation->answer"]
    assert swaps and all(
        r.counterfactual_answer and "costs" in r.counterfactual_answer for r in swaps if answer == "observation"
    )


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_supervisor_recorded_whole_is_audited_agent_by_agent(action: str, answer: str) -> None:
    """``record(supervisor, store)``: one trace per user turn, holding the supervisor's turns and the worker's. Each
    agent's run is audited as its own: the worker's on its own graph, the supervisor's hand-off re-run by its own model
    and prompt found in its node (no ``model=``), its input checked against the recorded one; the supervisor's two
    turns (the hand-off, the answer after the worker's) are one run, whose observation is what the worker returned."""
    graph, traces = run_supervisor(InMemorySaver(), action=action, answer=answer, recorder="record")  # type: ignore[arg-type]
    assert len(traces) == len(QUESTIONS)
    report = _audit(graph, traces)
    coverage = report.coverage
    assert coverage is not None and coverage.units == 4 * len(QUESTIONS)  # hand-off, worker's result, worker's two
    n = 2 * len(QUESTIONS)
    assert coverage.by_agent == {"supervisor": (n, n), "shopper": (n, n)}, coverage_line(coverage)
    assert not _wrong(report, action, answer)
    handoffs = [r for r in report.results if r.agent_name == "supervisor" and r.link == "thought->action"]
    assert len(handoffs) == len(QUESTIONS) and all(r.status == "scored" for r in handoffs)
    assert all("to the clerk" in (r.intervened_thought or "") for r in handoffs)
    assert all(r.input_checked for r in report.results if r.status == "scored")
    workers = {r.trace_id for r in report.results if r.agent_name == "shopper"}
    assert all("~" in t for t in workers)  # each worker run is a trace of its own, named after the turn's
    through = [r for r in report.results if r.agent_name == "supervisor" and r.link == "thought->answer"]
    assert through and all(r.status != "scored" for r in through)  # never a replay through a hand-off


@pytest.mark.parametrize("reads", ["observation", "question"])
def test_a_supervisor_that_ignores_its_workers_result_is_flagged_and_one_that_reads_it_is_not(reads: str) -> None:
    """The worker's last message, as the supervisor reads it back, is the supervisor's observation: swapped in the
    supervisor's state, the supervisor alone replayed (the worker never runs again, nor any tool)."""
    graph, traces = run_supervisor(InMemorySaver(), recorder="record", reads=reads)  # type: ignore[arg-type]
    report = _audit(graph, traces)
    swaps = [
        r for r in report.results
        if r.agent_name == "supervisor" and r.link == "observation->answer" and r.status == "scored" and not r.control
    ]  # fmt: skip
    assert len(swaps) == len(QUESTIONS), [(r.status, r.error) for r in report.results if r.agent_name == "supervisor"]
    assert all(r.violation == (reads == "question") for r in swaps), [
        (r.counterfactual_answer, r.observation) for r in swaps
    ]
    assert all(r.input_checked and r.tools_live == 0 for r in swaps)
    assert all(r.observation is not None and r.observation.tool == "transfer_to_shopper" for r in swaps)
    if reads == "observation":  # the new value reached the supervisor's answer through the worker's message
        assert all(r.observation.new_values[0] in (r.counterfactual_answer or "") for r in swaps)  # type: ignore[union-attr]


def _swarm_with_hand_back(reads: bool) -> tuple[Any, list[Any]]:
    """A triage agent hands the question to a shopper, who looks the price up and hands back with what it found; the
    triage answers with it (``reads``) or from a fixed belief."""
    from collections.abc import Sequence

    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langgraph_swarm import create_handoff_tool, create_swarm

    from ariadne_lc import InMemoryTraceStore, record
    from ariadne_lc.testing import ScriptedChatModel
    from tests.harness_agents import _items, price

    def triage(messages: Sequence[BaseMessage]) -> AIMessage:
        back = [m for m in messages if isinstance(m, AIMessage) and m.name == "shopper" and m.text]
        if not back:
            call = {"name": "transfer_to_shopper", "args": {}, "id": "h1"}
            return AIMessage(content="I should transfer this to the shopper.", tool_calls=[call])
        item = _items(next(m.text for m in messages if isinstance(m, HumanMessage)))[0]
        return AIMessage(content=f"Answer: {back[-1].text}" if reads else f"The {item} is cheap.")

    def shopper(messages: Sequence[BaseMessage]) -> AIMessage:
        item = _items(next(m.text for m in messages if isinstance(m, HumanMessage)))[0]
        found = [m for m in messages if isinstance(m, ToolMessage) and m.name == "price"]
        if isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:  # a re-run: the item it names
            said = _items(messages[-1].text) or [item]
            return AIMessage(content="", tool_calls=[{"name": "price", "args": {"item": said[-1]}, "id": "re"}])
        if not found:
            call = {"name": "price", "args": {"item": item}, "id": "p"}
            return AIMessage(
                content=f"I should look up the price of the {item} with the price tool.", tool_calls=[call]
            )
        back = {"name": "transfer_to_triage", "args": {}, "id": "back"}
        return AIMessage(content=f"The {item} costs {found[-1].text} dollars.", tool_calls=[back])

    agents = [
        create_agent(ScriptedChatModel(script=triage), [create_handoff_tool(agent_name="shopper")], name="triage"),
        create_agent(ScriptedChatModel(script=shopper), [price, create_handoff_tool(agent_name="triage")],
                     name="shopper"),
    ]  # fmt: skip
    graph = create_swarm(agents, default_active_agent="triage").compile(checkpointer=InMemorySaver())
    store = InMemoryTraceStore()
    running = record(graph, store)
    for i, question in enumerate(QUESTIONS):
        running.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"back-{reads}-{i}"}})
    return graph, store.list_traces()


@pytest.mark.parametrize("reads", [True, False])
def test_a_swarm_agent_that_hands_back_is_read_by_the_agent_it_hands_back_to(reads: bool) -> None:
    """What a swarm agent hands back (the text of its hand-off turn) is the observation of the agent it hands back
    to, swapped there, that agent alone replayed; and the hand-back agent's own replay ends where it hands back.

    Was: no observation of the triage agent, and the shopper's output replays ran on past its hand-back until
    ``ReplayDidNotFinishError``."""
    graph, traces = _swarm_with_hand_back(reads)
    report = _audit(graph, traces)
    swaps = [r for r in report.results if r.link == "observation->answer" and not r.control]
    assert not [r for r in report.results if r.status == "failed"], [r.error for r in report.results]
    by_agent = {name: [r for r in swaps if r.agent_name == name] for name in ("triage", "shopper")}
    assert len(by_agent["triage"]) == len(by_agent["shopper"]) == len(QUESTIONS)
    assert all(r.status == "scored" and r.input_checked for r in swaps)
    assert all(r.violation == (not reads) for r in by_agent["triage"])  # the triage reads what came back, or not
    assert not any(r.violation for r in by_agent["shopper"])  # the shopper hands back what it found
