"""Every trace given to an audit appears in its result: the answer step refused by name, traces with
nothing to audit reported with the reason, a broken checkpointer failing one audit and never the batch,
and a synchronous audit inside an async saver's loop told to await ``aaudit``."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryResultStore, InMemoryTraceStore, TraceError
from ariadne_lc.audit import FinishedAudit
from ariadne_lc.errors import AsyncSaverError, ConfigurationError, FinalStepError
from ariadne_lc.testing import ScriptedChatModel, faithful_arithmetic_model, unfaithful_arithmetic_model
from tests.helpers import QUESTION, build_agent, record, two_step_model


def _answers_at_once() -> ScriptedChatModel:
    return ScriptedChatModel(script=lambda messages: AIMessage(content="There are 42 apples in the six boxes."))


# -- the answer step --------------------------------------------------------------------------------


def test_the_answer_step_is_refused_by_name(builder: str, saver: Any) -> None:
    graph = build_agent(unfaithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    assert len(trace.steps) == 2
    with pytest.raises(FinalStepError, match=r"step 1 of trace .* last model turn, which gave its answer") as refused:
        Auditor(graph).audit(trace, step=1, interventions=["logic_flip"])
    assert isinstance(refused.value, TraceError)
    with pytest.raises(FinalStepError):
        Auditor(graph).audit(trace, step=[0, 1], interventions=["logic_flip"])
    report = Auditor(graph).audit_batch([trace], step=1, interventions=["logic_flip"])
    (result,) = report.results
    assert result.status == "failed" and result.error_type == "FinalStepError" and not result.violation
    assert report.violation_rate is None


def test_a_step_followed_by_more_of_the_run_is_audited_even_without_a_tool_call() -> None:
    """The refusal is about the last model turn, not about tool calls: a thought that a later node reads
    (no tool call of its own) stays auditable by index."""
    graph = build_agent(two_step_model(), "hand", InMemorySaver())
    trace = record(graph, question="How many apples are in 6 boxes of 7, with 5 loose apples more?")
    results = Auditor(graph, decisive=False).audit(trace, step=1, interventions=["logic_flip"])
    assert [r.status for r in results] == ["scored"]


# -- nothing to audit -------------------------------------------------------------------------------


def test_a_trace_with_no_step_to_audit_gives_a_result_with_the_reason(builder: str) -> None:
    graph = build_agent(_answers_at_once(), builder, InMemorySaver())
    trace = record(graph)
    assert len(trace.steps) == 1 and trace.final_answer
    for step in ("auto", "all"):
        (result,) = Auditor(graph).audit(trace, step=step, interventions=["logic_flip"])
        assert (result.status, result.label, result.nothing_to_audit) == ("not_applicable", "inconclusive", True)
        assert result.trace_id == trace.trace_id and result.step_index == -1 and not result.violation
        assert result.inconclusive_reason is not None and "the agent answered at once" in result.inconclusive_reason


def test_a_thought_too_short_for_auto_is_named_as_the_reason() -> None:
    graph = build_agent(faithful_arithmetic_model(), "hand", InMemorySaver())
    trace = record(graph)
    (result,) = Auditor(graph, min_thought_chars=500).audit(trace, step="auto", interventions=["logic_flip"])
    assert result.nothing_to_audit and result.inconclusive_reason is not None
    assert "500 non-space characters" in result.inconclusive_reason


def test_batches_count_traces_with_nothing_to_audit() -> None:
    graph = build_agent(_answers_at_once(), "hand", InMemorySaver())
    at_once = record(graph, thread_id="t-at-once")
    agent = build_agent(unfaithful_arithmetic_model(), "hand", InMemorySaver())
    audited = record(agent, thread_id="t-audited")
    # one auditor for both: the trace with nothing to audit never reaches its graph
    results = InMemoryResultStore()
    auditor = Auditor(agent, result_store=results)
    for report in (
        auditor.audit_batch([at_once, audited], interventions=["logic_flip"]),
        asyncio.run(auditor.aaudit_batch([at_once, audited], interventions=["logic_flip"])),
    ):
        assert {r.trace_id for r in report.results} == {at_once.trace_id, audited.trace_id}
        assert report.nothing_to_audit == 1 and report.overall.not_applicable == 1
        assert report.overall.scored == 1 and report.violation_rate == 1.0  # nothing to audit is not "faithful"
    assert sum(r.nothing_to_audit for r in results.list_results()) == 2  # the sinks got it too


# -- a broken checkpointer fails one audit, never the batch ------------------------------------------


class _ClosesTheDatabase:
    """A sink that closes the checkpointer's database after the first finished audit (a database going away
    in the middle of a batch)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.seen: list[str] = []

    def accept(self, finished: FinishedAudit) -> None:
        self.seen.append(finished.result.trace_id)
        self.conn.close()


@pytest.fixture
def sqlite_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield conn
    conn.close()


def test_a_closed_checkpointer_database_fails_one_audit_and_the_batch_goes_on(
    sqlite_conn: sqlite3.Connection,
) -> None:
    graph = build_agent(unfaithful_arithmetic_model(), "create_agent", SqliteSaver(sqlite_conn))
    traces = [record(graph, thread_id=f"t-{i}") for i in range(3)]
    closer = _ClosesTheDatabase(sqlite_conn)
    report = Auditor(graph, sinks=[closer]).audit_batch(traces, max_concurrency=1, interventions=["logic_flip"])
    assert [r.trace_id for r in report.results] == [t.trace_id for t in traces]  # nothing lost, in order
    first, *rest = report.results
    assert first.status == "scored" and first.violation  # finished before the database went away: kept
    for r in rest:
        assert r.status == "failed" and r.error_type == "ProgrammingError"
        assert r.error is not None and "closed database" in r.error
    assert report.overall.failed == 2 and report.violation_rate == 1.0
    assert closer.seen == [t.trace_id for t in traces]  # every result reached the sinks
    # a single audit records it the same way
    (single,) = Auditor(graph).audit(traces[0], interventions=["logic_flip"])
    assert single.status == "failed" and single.error_type == "ProgrammingError"


class _TerminatesTheConnection:
    """A sink that has PostgreSQL terminate the checkpointer's connection after the first finished audit."""

    def __init__(self, dsn: str, pid: int) -> None:
        self.dsn, self.pid = dsn, pid

    def accept(self, finished: FinishedAudit) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (self.pid,))


def test_a_dropped_postgres_connection_fails_one_audit_and_the_batch_goes_on(postgres_dsn: str) -> None:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    conn = psycopg.connect(postgres_dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    try:
        saver = PostgresSaver(conn)
        saver.setup()
        graph = build_agent(unfaithful_arithmetic_model(), "create_agent", saver)
        traces = [record(graph, thread_id=f"t-{i}") for i in range(3)]
        dropper = _TerminatesTheConnection(postgres_dsn, conn.info.backend_pid)
        report = Auditor(graph, sinks=[dropper]).audit_batch(traces, max_concurrency=1, interventions=["logic_flip"])
        assert [r.trace_id for r in report.results] == [t.trace_id for t in traces]
        first, *rest = report.results
        assert first.status == "scored" and first.violation
        # psycopg's own types (AdminShutdown on the first query after the kill, then a closed connection)
        assert [r.status for r in rest] == ["failed", "failed"]
        assert {r.error_type for r in rest} <= {"AdminShutdown", "OperationalError"}
    finally:
        conn.close()


class _DroppedConnection(InMemorySaver):
    """An in-memory saver whose reads of one thread fail the way a dropped database connection does."""

    def __init__(self, broken_thread: str) -> None:
        super().__init__()
        self.broken_thread = broken_thread

    def _check(self, config: Any) -> None:
        if config and config.get("configurable", {}).get("thread_id") == self.broken_thread:
            raise sqlite3.OperationalError("server closed the connection unexpectedly")

    async def alist(self, config: Any, **kwargs: Any) -> Any:
        self._check(config)
        async for item in super().alist(config, **kwargs):
            yield item

    def list(self, config: Any, **kwargs: Any) -> Any:
        self._check(config)
        return super().list(config, **kwargs)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_dropped_connection_in_one_audit_is_recorded_with_its_type(mode: str) -> None:
    saver = _DroppedConnection(broken_thread="t-1")
    graph = build_agent(unfaithful_arithmetic_model(), "hand", saver)
    traces = [record(graph, thread_id=f"t-{i}") for i in range(3)]
    auditor = Auditor(graph)
    if mode == "sync":
        report = auditor.audit_batch(traces, max_concurrency=2, interventions=["logic_flip"])
    else:
        report = asyncio.run(auditor.aaudit_batch(traces, max_concurrency=2, interventions=["logic_flip"]))
    by_trace = {r.trace_id: r for r in report.results}
    assert set(by_trace) == {t.trace_id for t in traces}
    broken = by_trace[traces[1].trace_id]
    assert broken.status == "failed" and broken.error_type == "OperationalError"
    assert broken.error == "OperationalError: server closed the connection unexpectedly"
    assert all(by_trace[t.trace_id].status == "scored" for t in (traces[0], traces[2]))
    assert report.overall.failed == 1 and report.overall.scored == 2


def test_a_component_that_raises_anything_fails_its_audit_not_the_batch() -> None:
    """A user's scorer with a bug: the audit is failed with the error's type, the batch goes on."""

    class Broken:
        def score(self, original: str, counterfactual: str, **kwargs: Any) -> Any:
            raise KeyError("no such metric")

    graph = build_agent(unfaithful_arithmetic_model(), "hand", InMemorySaver())
    trace = record(graph)
    report = Auditor(graph, scorer=Broken(), decisive=False).audit_batch([trace], interventions=["logic_flip", "rerun"])
    assert [(r.status, r.error_type) for r in report.results] == [("failed", "KeyError"), ("failed", "KeyError")]
    assert all(r.counterfactual_answer for r in report.results)  # the replay's answer is kept for reading


# -- a synchronous audit inside an async saver's loop -----------------------------------------------


def test_a_sync_audit_inside_the_async_savers_loop_says_to_use_aaudit(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
            graph = build_agent(unfaithful_arithmetic_model(), "create_agent", saver)
            store = InMemoryTraceStore()
            handler = AriadneCallbackHandler(store=store, synchronous=True)
            await graph.ainvoke(
                {"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "t-1"}, "callbacks": [handler]}
            )
            (trace,) = store.list_traces()
            auditor = Auditor(graph)
            with pytest.raises(AsyncSaverError, match=r"use 'await aaudit\(\.\.\.\)'") as refused:
                auditor.audit(trace, interventions=["logic_flip"])
            assert isinstance(refused.value, ConfigurationError)
            assert "AsyncSqliteSaver" in str(refused.value)
            with pytest.raises(AsyncSaverError, match="aaudit_batch"):
                auditor.audit_batch([trace], interventions=["logic_flip"])  # would otherwise block the loop forever
            (result,) = await auditor.aaudit(trace, interventions=["logic_flip"])  # the way that works
            assert result.status == "scored" and result.violation
            # from another thread the saver serves synchronous calls, and so does the auditor
            (threaded,) = await asyncio.to_thread(auditor.audit, trace, "auto", ["logic_flip"])
            assert threaded.status == "scored"

    asyncio.run(main())
