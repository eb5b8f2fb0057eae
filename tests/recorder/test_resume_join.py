"""A human-in-the-loop turn paused in one handler and resumed in another (a new handler per request, another
replica, another process) is one auditable trace: paused runs live in the trace store, not in a handler."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore, SQLiteTraceStore, TraceError
from ariadne_lc.errors import TraceNotFinishedError
from ariadne_lc.testing import calculator, faithful_arithmetic_model
from tests.helpers import TWO_STEP_QUESTION, two_step_model
from tests.recorder.hitl_replica import APPROVE, QUESTION, build_agent

REPO = Path(__file__).resolve().parents[2]
FLIPPED = "Every box holds the same amount, so I need to subtract 6 by 7 to get it."


def _store(kind: str, tmp_path: Path) -> Any:
    return InMemoryTraceStore() if kind == "memory" else SQLiteTraceStore(tmp_path / "traces.db")


def _hitl(model: Any) -> Any:
    return create_agent(
        model,
        [calculator],
        checkpointer=InMemorySaver(),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )


def _request(graph: Any, store: Any, thread: str, payload: Any) -> None:
    """One web request as the README writes it: a new handler, dropped when the request returns."""
    graph.invoke(payload, {"configurable": {"thread_id": thread}, "callbacks": [AriadneCallbackHandler(store=store)]})
    gc.collect()  # the handler is gone; its trace must not be


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_new_handler_per_request_gives_one_auditable_trace_per_turn(kind: str, tmp_path: Path) -> None:
    store = _store(kind, tmp_path)
    graph = _hitl(faithful_arithmetic_model())
    _request(graph, store, "t", {"messages": [("user", QUESTION)]})
    (paused,) = store.list_traces()
    assert paused.interrupted and store.get_paused("t") == paused
    with pytest.raises(TraceNotFinishedError) as waiting:
        Auditor(graph, decisive=False).audit(paused)
    message = str(waiting.value)  # says to audit this same trace once resumed, never another one
    assert f"store.get({paused.trace_id!r})" in message and "resumed turn's trace" not in message

    _request(graph, store, "t", Command(resume=APPROVE))
    (turn,) = store.list_traces()
    assert turn.trace_id == paused.trace_id and turn.query == QUESTION and not turn.interrupted
    assert turn.error is None and store.get_paused("t") is None
    assert [[c.output for c in s.tool_calls] for s in turn.steps] == [["42"], []]
    assert turn.final_answer == "Following my plan to multiply (6 * 7), the total is 42."
    (asked,) = turn.interrupts
    assert asked.node is not None and asked.answered and asked.resume == APPROVE

    (result,) = Auditor(graph, decisive=False).audit(store.get(paused.trace_id), step=0, interventions="logic_flip")
    assert result.status == "scored" and result.answer_changed
    assert result.counterfactual_answer != turn.final_answer and result.phi is not None and result.phi > 0.5


def test_a_turn_with_two_pauses_resumed_by_three_handlers_is_one_trace() -> None:
    store = InMemoryTraceStore()
    graph = _hitl(two_step_model())
    _request(graph, store, "t2", {"messages": [("user", TWO_STEP_QUESTION)]})
    for _ in range(2):  # each calculator call waits for its approval, each approval on another "replica"
        _request(graph, store, "t2", Command(resume=APPROVE))
    (turn,) = store.list_traces()
    assert turn.query == TWO_STEP_QUESTION and turn.error is None and not turn.interrupted
    assert [[c.output for c in s.tool_calls] for s in turn.steps] == [["42"], ["47"], []]
    assert [(i.answered, i.resume) for i in turn.interrupts] == [(True, APPROVE), (True, APPROVE)]
    assert turn.final_answer == "Following my steps, the total is 47 apples."
    (result,) = Auditor(graph, decisive=False).audit(turn, step=1, interventions=["logic_flip"])
    assert result.status == "scored" and result.counterfactual_answer == "Following my steps, the total is 37 apples."


def test_a_resume_whose_paused_trace_is_elsewhere_is_stored_alone_and_refused_by_name() -> None:
    graph = _hitl(faithful_arithmetic_model())
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "x"}})  # not recorded
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, resume_wait=0)
    graph.invoke(Command(resume=APPROVE), {"configurable": {"thread_id": "x"}, "callbacks": [handler]})
    (half,) = store.list_traces()
    assert half.query == "" and half.error is not None and "only the resumed half" in half.error
    assert handler.stats.unjoined == 1 and handler.stats.resumed == 0
    with pytest.raises(TraceError, match="only the resumed half of a turn of thread 'x'"):
        Auditor(graph, decisive=False).audit(half)
    report = Auditor(graph, decisive=False).audit_batch([half])
    (failed,) = report.results
    assert failed.status == "failed" and failed.error_type == "TraceError"


def _replica(action: str, store_at: str, checkpoints: Path, thread: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    run = subprocess.run(
        [sys.executable, "-m", "tests.recorder.hitl_replica", action, store_at, str(checkpoints), thread],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def _two_processes(store_at: str, store: Any, tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints.db"
    _replica("ask", store_at, checkpoints, "web-1")  # replica A: the question, paused for approval
    (paused,) = store.list_traces()
    assert paused.interrupted and paused.graph is not None
    _replica("approve", store_at, checkpoints, "web-1")  # replica B: the approval
    (turn,) = store.list_traces()
    assert turn.trace_id == paused.trace_id and turn.query == QUESTION and turn.error is None
    assert not turn.interrupted and turn.interrupts[0].resume == APPROVE
    assert turn.final_answer == "Following my plan to multiply (6 * 7), the total is 42."

    graph = build_agent(str(checkpoints))  # the auditor: a third process's graph, same code and history
    (result,) = Auditor(graph, decisive=False).audit(turn, step=0, interventions="logic_flip")
    assert result.status == "scored", result.error
    assert result.counterfactual_answer != turn.final_answer and result.answer_changed


def test_two_processes_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "traces.db"
    _two_processes(str(path), SQLiteTraceStore(path), tmp_path)


def test_two_processes_on_postgres(postgres_dsn: str, tmp_path: Path) -> None:
    from ariadne_lc.store import PostgresTraceStore

    store = PostgresTraceStore(postgres_dsn)
    try:
        _two_processes(postgres_dsn, store, tmp_path)
    finally:
        store.close()
