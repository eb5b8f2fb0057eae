"""Human in the loop across replicas: a turn paused on one replica and resumed on another is audited whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from ariadne_lc.online import JobState, OnlineAuditor
from ariadne_lc.store import SQLiteTraceStore
from ariadne_lc.testing import calculator, faithful_arithmetic_model
from tests.helpers import ONE_AUDIT, QUESTION

APPROVE = Command(resume={"decisions": [{"type": "approve"}]})


def _replica(tmp_path: Path, **kwargs: Any) -> tuple[Any, OnlineAuditor]:
    """One serving process: its own graph object and connections, the checkpoints, traces and jobs shared."""
    saver = SqliteSaver(sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False))
    graph = create_agent(
        faithful_arithmetic_model(),
        [calculator],
        checkpointer=saver,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )
    online = OnlineAuditor(
        graph,
        jobs=tmp_path / "jobs.db",
        trace_store=SQLiteTraceStore(tmp_path / "traces.db"),
        tick_interval=0.05,
        lease=5.0,
        **(ONE_AUDIT | kwargs),
    )
    return graph, online


def _turn(graph: Any, online: OnlineAuditor, thread: str, payload: Any) -> Any:
    return graph.invoke(payload, {"configurable": {"thread_id": thread}, "callbacks": [online.handler]})


def test_a_turn_paused_on_one_replica_and_resumed_on_another_is_audited_whole(tmp_path: Path) -> None:
    graph_a, replica_a = _replica(tmp_path, sample_rate=1.0)
    graph_b, replica_b = _replica(tmp_path, sample_rate=1.0)
    assert _turn(graph_a, replica_a, "t", {"messages": [("user", QUESTION)]})["__interrupt__"]
    assert replica_a.force_flush(30)  # the paused half is stored; nothing to audit yet
    assert replica_a.jobs.list_jobs() == [] and replica_a.stats.filtered == 1

    answer = _turn(graph_b, replica_b, "t", APPROVE)["messages"][-1].text
    replica_b.start()
    assert replica_b.force_flush(30)
    (job,) = replica_b.jobs.list_jobs()
    assert job.state is JobState.DONE
    trace = job.trace
    assert trace.query == QUESTION and trace.final_answer is not None and trace.final_answer in answer
    assert len(trace.steps) == 2 and trace.steps[0].tool_calls[0].output == "42"  # both halves, one turn
    (asked,) = trace.interrupts
    assert asked.answered and asked.resume == APPROVE.resume
    (result,) = replica_b.jobs.list_results()
    assert result.status == "scored" and result.error is None, result.error
    assert replica_b.handler.stats.resumed == 1 and replica_b.handler.stats.unjoined == 0
    replica_a.shutdown()
    replica_b.shutdown()


def test_a_resume_follows_the_sampling_of_its_paused_half(tmp_path: Path) -> None:
    """A paused half outside the sample leaves its resume unrecorded on the other replica, and unaudited."""
    graph_a, replica_a = _replica(tmp_path, sample_rate=1e-9)
    graph_b, replica_b = _replica(tmp_path, sample_rate=1e-9)
    _turn(graph_a, replica_a, "t", {"messages": [("user", QUESTION)]})
    _turn(graph_b, replica_b, "t", APPROVE)
    assert replica_a.force_flush(30) and replica_b.force_flush(30)
    assert replica_b.jobs.list_jobs() == [] and SQLiteTraceStore(tmp_path / "traces.db").list_traces() == []
    assert replica_a.handler.stats.unsampled == 1 and replica_b.handler.stats.unsampled == 1
    replica_a.shutdown()
    replica_b.shutdown()
