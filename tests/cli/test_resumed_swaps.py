"""A resumed ``ariadne-lc audit`` serves each unit the swap an uninterrupted run serves it (issue 34): the values a
swap takes come from the unit's own run and a reference pool built from every trace given, audited or not, never from
the traces the process happened to audit before. The agent is the agentic RAG tutorial's, whose outputs are passages:
their only other values are other runs' passages, so the pool decides every swap."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore, SQLiteResultStore, SQLiteTraceStore
from ariadne_lc.cli import app
from tests.tutorial_agents import RAG, shape_model

runner = CliRunner()


def rag() -> Any:
    """The graph, as ``--graph tests.cli.test_resumed_swaps:rag`` loads it (recording only when asked to)."""
    checkpoints = SqliteSaver(sqlite3.connect(os.environ["ARIADNE_TEST_CHECKPOINTS"], check_same_thread=False))
    traces = os.environ.get("ARIADNE_TEST_TRACES")
    store = SQLiteTraceStore(traces) if traces else InMemoryTraceStore()
    return create_agent(shape_model(RAG), list(RAG.tools), checkpointer=checkpoints,
                        middleware=[AriadneMiddleware(store)])  # fmt: skip


def _swaps(db: Path) -> dict[tuple[str, str | None], tuple[str | None, str | None]]:
    return {
        (r.trace_id, r.plan_key): (r.observation.swapped, r.intervention_method)
        for r in SQLiteResultStore(db).list_results()
        if r.observation is not None
    }


def test_a_resumed_audit_swaps_what_an_uninterrupted_one_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    monkeypatch.setenv("ARIADNE_TEST_TRACES", str(tmp_path / "traces.db"))
    graph = rag()
    for i, q in enumerate(RAG.questions):
        graph.invoke({"messages": [("user", q)]}, {"configurable": {"thread_id": f"rag-{i}"}})
    monkeypatch.delenv("ARIADNE_TEST_TRACES")  # the audit's own graph records nothing
    args = ["audit", "--graph", "tests.cli.test_resumed_swaps:rag", "--traces", str(tmp_path / "traces.db")]
    args += ["--interventions", "observation_swap", "--step", "all"]
    whole = runner.invoke(app, [*args, "--output", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    served = _swaps(tmp_path / "whole" / "results.db")
    assert len(served) == len(RAG.questions) and all(s is not None for s, _ in served.values()), served
    # an interrupted run that stored two traces' results ...
    kept = sorted({trace for trace, _ in served})[:2]
    (tmp_path / "resumed").mkdir()
    resumed_db = SQLiteResultStore(tmp_path / "resumed" / "results.db")
    for r in SQLiteResultStore(tmp_path / "whole" / "results.db").list_results():
        if r.trace_id in kept:
            resumed_db.put_result(r)
    resumed = runner.invoke(app, [*args, "--output", str(tmp_path / "resumed")])
    assert resumed.exit_code == 0, resumed.output
    assert "resuming: 2 traces already audited" in resumed.output
    # ... then resumed, audits the others with the values the uninterrupted run gave them
    assert _swaps(tmp_path / "resumed" / "results.db") == served
