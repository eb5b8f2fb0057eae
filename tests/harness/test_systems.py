"""The four multi-agent systems of issue 39, recorded by one line on the top agent, every agent's truth known: every
unit that ran is in the coverage denominator, at least 90% get a verdict, every verdict is right, no audit fails, no
tool runs, every scored replay is input-checked.

Per question, four units ran: the caller's plan, what the caller read back from its sub-agent (a tool's return value,
a ``task`` result, a supervisor's worker's last message), the sub-agent's plan and its tool's output. The truth (does
the agent do what its plan says; does its answer read what it got back) is the same for every agent of a system.

Was (main 44fb613): 24, 12, 12 and 36 of 48 units with a verdict."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, record
from ariadne_lc.coverage import coverage_line
from tests.harness_agents import (
    QUESTIONS,
    RUNS,
    _delegating_model,
    _worker_model,
    price,
    run_supervisor,
)
from tests.subagent_plain import main_model

TRUTHS = [("thought", "observation"), ("question", "question"), ("thought", "question"), ("question", "observation")]
SYSTEMS = [
    ("sub-agent tool", "record"),
    ("sub-agent tool", "middleware"),
    ("deep agent task", "record"),
    ("deep agent task", "middleware"),
    ("supervisor", "record"),
]


def _tool_system(action: str, answer: str, how: str) -> tuple[Any, list[Any]]:
    """LangChain's pattern: a ``@tool`` that invokes a ``create_agent`` sub-agent and returns its last message."""
    researcher = create_agent(_worker_model(action, answer), [price], name="researcher")  # type: ignore[arg-type]

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str(researcher.invoke({"messages": [("user", question)]})["messages"][-1].text)

    follows = "thought" if action == "thought" else "question"
    reads = "observation" if answer == "observation" else "belief"
    model = main_model("ask_researcher", "researcher", follows=follows, reads=reads)  # type: ignore[arg-type]
    store = InMemoryTraceStore()
    middleware = [AriadneMiddleware(store)] if how == "middleware" else []
    graph = create_agent(model, [ask_researcher], checkpointer=InMemorySaver(), name="main", middleware=middleware)
    return graph, _run(graph, store, how)


def _deep_system(action: str, answer: str, how: str) -> tuple[Any, list[Any]]:
    """A deep agent delegating through ``task`` to a sub-agent with nothing of its own recording it."""
    from deepagents import create_deep_agent

    store = InMemoryTraceStore()
    researcher = {
        "name": "researcher",
        "description": "Finds the price of an item.",
        "system_prompt": "You find prices with the price tool.",
        "tools": [price],
        "model": _worker_model(action, answer),  # type: ignore[arg-type]
    }
    graph = create_deep_agent(
        _delegating_model(action, answer),  # type: ignore[arg-type]
        [price],
        system_prompt="You are a shopping assistant. Ask the researcher for prices.",
        subagents=[researcher],  # type: ignore[list-item]
        checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store)] if how == "middleware" else [],
    )
    return graph, _run(graph, store, how)


def _run(graph: Any, store: InMemoryTraceStore, how: str) -> list[Any]:
    running = record(graph, store) if how == "record" else graph
    for i, question in enumerate(QUESTIONS):
        running.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"q{i}"}})
    return store.list_traces()


def _system(name: str, action: str, answer: str, how: str) -> tuple[Any, list[Any]]:
    if name == "sub-agent tool":
        return _tool_system(action, answer, how)
    if name == "deep agent task":
        return _deep_system(action, answer, how)
    return run_supervisor(InMemorySaver(), action=action, answer=answer, recorder="record", reads=answer)  # type: ignore[arg-type]


@pytest.mark.parametrize(("system", "how"), SYSTEMS)
@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_every_agent_of_the_system_gets_right_verdicts_from_one_line_on_the_top_agent(
    system: str, how: str, action: str, answer: str
) -> None:
    graph, traces = _system(system, action, answer, how)
    runs = dict(RUNS)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # no tool ran during the audit
    cover = report.coverage
    assert cover is not None and cover.units == 4 * len(QUESTIONS), coverage_line(cover)
    assert cover.rate is not None and cover.rate >= 0.9, coverage_line(cover)
    assert len(cover.by_agent) == 2 and cover.runs_not_audited == 0, coverage_line(cover)
    assert not [r for r in report.results if r.status == "failed"], [r.error for r in report.results]
    truth = {"thought->action": action == "question", "observation->answer": answer == "question"}
    scored = [r for r in report.results if r.status == "scored" and not r.control]
    wrong = [(r.agent_name, r.link, r.intervened_thought, r.counterfactual_answer)
             for r in scored if r.link in truth and r.violation != truth[r.link]]  # fmt: skip
    assert not wrong
    assert all(r.input_checked for r in report.results if r.status == "scored")
    for agent in cover.by_agent:  # each agent is flagged on exactly the links it is unfaithful on
        flagged = {r.link for r in scored if r.agent_name == agent and r.violation}
        assert flagged == {link for link, bad in truth.items() if bad}, (agent, flagged)
