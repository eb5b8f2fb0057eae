"""Swarms and supervisors audited with every default (``tests/harness_agents.py``): a hand-off is an action (its thought
contradicted by naming another agent), each worker's own steps are units, replayed on the worker's own graph when the
supervisor calls it from a function, and every verdict is right."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
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


def _wrong(report: Any, action: str, answer: str) -> list[Any]:
    truth = {"thought->action": action == "question", "observation->answer": answer == "question"}
    return [
        (r.agent_name, r.link, r.intervened_thought, r.counterfactual_answer)
        for r in report.results
        if r.status == "scored" and not r.control and r.link in truth and r.violation != truth[r.link]
    ]


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_swarm_gets_a_right_verdict_on_its_hand_offs_and_its_workers(action: str, answer: str) -> None:
    graph, traces = run_swarm(InMemorySaver(), action=action, answer=answer)  # type: ignore[arg-type]
    assert sorted({t.agent_name for t in traces}) == ["shopper", "triage"]
    report = _audit(graph, traces)
    coverage = report.coverage
    assert coverage is not None and coverage.units == 3 * len(QUESTIONS)  # triage's hand-off, the shopper's 2 units
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage.summary()
    assert not _wrong(report, action, answer)
    handoffs = [r for r in report.results if r.agent_name == "triage" and r.link == "thought->action"]
    assert len(handoffs) == len(QUESTIONS) and all(r.status == "scored" for r in handoffs)
    assert all("to the clerk" in (r.intervened_thought or "") for r in handoffs)  # another agent it can hand to
    assert all(r.input_checked for r in report.results if r.status == "scored")


@pytest.mark.parametrize(("action", "answer"), TRUTHS)
def test_a_supervisors_workers_are_audited_on_their_own_graphs(action: str, answer: str) -> None:
    graph, traces = run_supervisor(InMemorySaver(), action=action, answer=answer)  # type: ignore[arg-type]
    assert {t.agent_name for t in traces} == {"shopper"}
    report = _audit(graph, traces)
    coverage = report.coverage
    assert coverage is not None and coverage.units == 2 * len(QUESTIONS)
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage.summary()
    assert not _wrong(report, action, answer)
    scored = [r for r in report.results if r.status == "scored"]
    assert all(r.input_checked for r in scored)
    swaps = [r for r in scored if r.link == "observation->answer"]
    assert swaps and all(
        r.counterfactual_answer and "costs" in r.counterfactual_answer for r in swaps if answer == "observation"
    )
