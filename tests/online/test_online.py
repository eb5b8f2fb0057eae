"""The online auditor end to end: wrapping, background audits, retries, shutdown, metrics, both modes."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc import (
    AriadneCallbackHandler,
    Auditor,
    ConfigurationError,
    InMemoryTraceStore,
    StoreError,
    Trace,
    TraceError,
)
from ariadne_lc.online import ATTR_ATTEMPT, ATTR_JOB_ID, JobState, OnlineAuditor, RunFilter, SQLiteJobStore
from ariadne_lc.online._worker import retryable_type
from ariadne_lc.semconv import ARIADNE_SAMPLE_RATE
from tests.helpers import ONE_AUDIT, build_agent, record
from tests.online.support import question, slow_model, synthetic_trace

FAST: dict[str, Any] = {"tick_interval": 0.05, "lease": 5.0, "retry_backoff": 0.01, **ONE_AUDIT}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def online_for(graph: Any, tmp_path: Path, **kwargs: Any) -> OnlineAuditor:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return OnlineAuditor(graph, jobs=tmp_path / "jobs.db", **(FAST | kwargs))


def run(graph: Any, i: int, **config: Any) -> Any:
    return graph.invoke({"messages": [("user", question(i))]}, {"configurable": {"thread_id": f"t-{i}"}, **config})


def test_sampled_runs_are_audited_in_the_background(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "create_agent", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0)
    served = online.wrap(graph)
    other = InMemoryTraceStore()
    for i in range(3):  # wrapped; callbacks given at invoke time still run
        run(served, i, callbacks=[AriadneCallbackHandler(store=other, synchronous=True)])
    for i in range(3, 6):  # or the handler in the run config
        run(graph, i, callbacks=[online.handler])
    assert len(other.list_traces()) == 3

    def heads() -> dict[int, tuple[str, int]]:
        out = {}
        for i in range(6):
            cfg = {"configurable": {"thread_id": f"t-{i}"}}
            out[i] = (
                graph.get_state(cfg).config["configurable"]["checkpoint_id"],
                len(list(graph.get_state_history(cfg))),
            )
        return out

    before = heads()
    online.start()
    assert online.force_flush(60)
    results = online.jobs.list_results()
    assert len(results) == 6
    assert all(r.status == "scored" and r.label == "faithful" and r.answer_changed for r in results)
    key = "0:thought:thought->answer:logic_flip:0"  # the planned audit's key
    assert {r.result_id for r in results} == {f"{j.job_id}:{key}" for j in online.jobs.list_jobs()}
    assert heads() == before  # the audits never wrote to a user's thread
    stats = online.stats
    assert (stats.recorded, stats.sampled, stats.accepted, stats.persisted, stats.audited) == (6, 6, 6, 6, 6)
    assert stats.model_calls == 6 and stats.errors == 0 and stats.failed == 0
    report = online.shutdown()
    assert report.clean and report.released == 0


def test_audit_spans_carry_the_sample_rate_and_job(
    tmp_path: Path, saver: SqliteSaver, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    graph = build_agent(slow_model(), "hand", saver)
    with online_for(graph, tmp_path, sample_rate=1.0, tracer_provider=provider) as online:
        run(graph, 0, callbacks=[online.handler])
        online.start()
        assert online.force_flush(60)
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "evaluation causal_faithfulness"]
    (job,) = SQLiteJobStore(tmp_path / "jobs.db").list_jobs()
    assert span.attributes is not None
    assert span.attributes[ARIADNE_SAMPLE_RATE] == 1.0
    assert span.attributes[ATTR_JOB_ID] == job.job_id and span.attributes[ATTR_ATTEMPT] == 1
    assert span.attributes["gen_ai.evaluation.score.label"] == "faithful"


def test_every_decision_is_counted(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    ids = [f"trace-{i}" for i in range(400)]
    a = online_for(graph, tmp_path / "a", sample_rate=0.25)
    b = online_for(graph, tmp_path / "b", sample_rate=0.25)
    for online in (a, b):
        for trace_id in ids:
            online.offer(synthetic_trace(trace_id, agent_name="support"))
        assert online.force_flush(10)
    kept_a = [j.job_id for j in a.jobs.list_jobs()]
    assert kept_a == [j.job_id for j in b.jobs.list_jobs()]  # deterministic by trace id
    s = a.stats
    assert s.recorded == 400 and s.filtered == 0 and s.sampled == len(kept_a) == s.accepted == s.persisted
    assert 50 <= s.sampled <= 150

    limited = online_for(graph, tmp_path / "c", sample_rate=1.0, max_audits_per_minute=60)  # burst 6
    limiter = limited._admission.limiter
    assert limiter is not None
    limiter._clock = lambda: limiter._at  # no refill (1 a second) however slowly a loaded machine offers
    # a trace with no model call seen is reserved at the running mean (before any job: one call per intervention)
    budgeted = online_for(graph, tmp_path / "d", sample_rate=1.0, max_model_calls_per_hour=4)
    filtered = online_for(graph, tmp_path / "e", sample_rate=1.0, run_filter=RunFilter(tags={"web"}))
    for online in (limited, budgeted, filtered):
        for i in range(20):
            online.offer(synthetic_trace(f"x-{i}", tags=("web",) if i % 2 else ()))
    assert (limited.stats.accepted, limited.stats.rate_limited) == (6, 14)
    assert (budgeted.stats.accepted, budgeted.stats.over_budget) == (4, 16)
    assert (filtered.stats.accepted, filtered.stats.filtered) == (10, 10)
    for online in (a, b, limited, budgeted, filtered):
        s = online.stats
        assert s.sampled == s.rate_limited + s.over_budget + s.dropped + s.refused + s.accepted
        report = online.shutdown()  # no workers here: the accepted jobs wait in the store
        assert report.unpersisted == 0 and report.unfinished == s.accepted


def test_a_full_queue_drops_the_newest_and_warns(
    tmp_path: Path, saver: SqliteSaver, caplog: pytest.LogCaptureFixture
) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_queue_size=3)
    for i in range(10):
        online.offer(synthetic_trace(f"q-{i}"))
    assert online.force_flush(10)
    assert (online.stats.accepted, online.stats.dropped, online.stats.max_queue_depth) == (3, 7, 3)
    assert online.queue_depth == 3 and online.unpersisted == 0
    with caplog.at_level(logging.WARNING, logger="ariadne_lc.online"):
        report = online.shutdown(drain=False)
    assert any("queue is full" in r.message and "dropped 7" in r.message for r in caplog.records)
    assert report.unfinished == 3 and report.unpersisted == 0
    assert [j.job_id for j in SQLiteJobStore(tmp_path / "jobs.db").list_jobs()] == ["q-0", "q-1", "q-2"]


def test_a_failing_model_is_retried_with_backoff(tmp_path: Path, saver: SqliteSaver) -> None:
    model = slow_model(fail_replays=2)
    graph = build_agent(model, "create_agent", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=3)
    run(graph, 0, callbacks=[online.handler])
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.DONE and job.attempts == 3
    (result,) = online.jobs.list_results()
    assert result.status == "scored"
    assert (online.stats.retried, online.stats.audited, online.stats.failed) == (2, 1, 0)
    assert online.shutdown().clean


def test_after_the_last_attempt_the_job_is_failed_with_its_error(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(fail_replays=1000), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=2)
    answer = run(graph, 0, callbacks=[online.handler])  # the agent itself is unaffected
    assert "total is" in answer["messages"][-1].text
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.FAILED and job.attempts == 2
    assert job.error is not None and job.error.startswith("ReplayError:") and "model overloaded" in job.error
    (result,) = online.jobs.list_results()
    assert result.status == "failed" and result.error == job.error
    assert (online.stats.retried, online.stats.failed) == (1, 1)
    online.shutdown()


def test_a_timed_out_audit_is_retried_then_failed(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(replay_delay=1.0), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=2, audit_timeout=0.1)
    run(graph, 0, callbacks=[online.handler])
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.FAILED and job.attempts == 2
    assert job.error is not None and job.error.startswith("TimeoutError")
    (result,) = online.jobs.list_results()
    assert result.step_index == -1 and result.status == "failed"
    online.shutdown(drain=False)


def test_an_unreplayable_trace_fails_at_once(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    trace = record(graph)
    gone = trace.model_copy(
        update={
            "trace_id": "gone",
            "steps": tuple(
                s.model_copy(update={"checkpoint": s.checkpoint.model_copy(update={"thread_id": "nowhere"})})
                for s in trace.steps
            ),
        }
    )
    online = online_for(graph, tmp_path, sample_rate=1.0)
    online.offer(gone)
    online.offer(synthetic_trace("nothing-to-audit"))  # no steps: done, with no results
    online.start()
    assert online.force_flush(30)
    assert online.jobs.get("gone").state is JobState.FAILED and online.stats.retried == 0
    assert "NotReplayableError" in (online.jobs.get("gone").error or "")
    assert online.jobs.get("nothing-to-audit").state is JobState.DONE
    results = {r.trace_id: r for r in online.jobs.list_results()}
    assert sorted(results) == ["gone", "nothing-to-audit"]  # no trace leaves no trace: its reason is stored
    assert results["nothing-to-audit"].nothing_to_audit and results["nothing-to-audit"].status == "not_applicable"
    online.shutdown()


class _RunnerWithoutReplayMode:
    """A user's own runner missing a property the bookkeeping reads (the bug behind a hang on CI once)."""

    def __init__(self, auditor: Auditor) -> None:
        self.inner = auditor

    @property
    def replay_mode(self) -> Any:
        raise AttributeError("'_RunnerWithoutReplayMode' object has no attribute 'replay_mode'")

    @property
    def sinks(self) -> tuple[Any, ...]:
        return self.inner.sinks

    def with_sinks(self, sinks: Any) -> _RunnerWithoutReplayMode:
        return _RunnerWithoutReplayMode(self.inner.with_sinks(sinks))

    def audit(self, trace: Trace, step: Any = "auto", interventions: Any = ("logic_flip",)) -> list[Any]:
        raise TraceError(f"trace {trace.trace_id} cannot be audited")

    async def aaudit(self, trace: Trace, step: Any = "auto", interventions: Any = ("logic_flip",)) -> list[Any]:
        return self.audit(trace, step, interventions)


def test_a_bug_in_the_bookkeeping_fails_the_job_once_instead_of_hanging(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    runner = _RunnerWithoutReplayMode(Auditor(graph))
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=3, lease=0.5, auditor=runner)
    run(graph, 0, callbacks=[online.handler])
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.FAILED and job.attempts == 1
    assert (job.error or "").startswith("AttributeError in the online auditor's bookkeeping")
    (result,) = online.jobs.list_results()
    assert result.status == "failed" and result.error_type == "AttributeError"
    assert (online.stats.failed, online.stats.retried) == (1, 0)
    online.shutdown()


class _DropsOnce(SqliteSaver):
    """A saver whose first history read after :attr:`armed` is set fails as a dropped connection does."""

    armed = False

    def list(self, config: Any, **kwargs: Any) -> Any:
        if self.armed:
            type(self).armed = False
            raise sqlite3.OperationalError("server closed the connection unexpectedly")
        return super().list(config, **kwargs)


def test_a_dropped_checkpointer_connection_is_retried_not_failed(tmp_path: Path) -> None:
    """A driver's OperationalError is not one of our types, but a database restart must not lose the audit."""
    conn = sqlite3.connect(tmp_path / "drops.db", check_same_thread=False)
    saver = _DropsOnce(conn)
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=3)
    run(graph, 0, callbacks=[online.handler])
    _DropsOnce.armed = True
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.DONE and job.attempts == 2 and not _DropsOnce.armed
    assert (online.stats.retried, online.stats.audited, online.stats.failed) == (1, 1, 0)
    online.shutdown()
    conn.close()


def test_retryable_types_include_the_drivers_transient_database_errors() -> None:
    import psycopg  # noqa: F401  (loaded, as where a PostgresSaver runs)

    assert retryable_type("OperationalError") and retryable_type("AdminShutdown")
    assert retryable_type("SerializationFailure") and retryable_type("ReplayError")
    assert not retryable_type("ProgrammingError") and not retryable_type("UniqueViolation")
    assert not retryable_type("NotReplayableError") and not retryable_type(None)


def test_a_closed_checkpointer_database_fails_the_job_with_its_error_type(tmp_path: Path) -> None:
    """Not one of our errors, so not known to go away on a retry: the job fails at once, its error and its
    result naming the type."""
    conn = sqlite3.connect(tmp_path / "closing.db", check_same_thread=False)
    graph = build_agent(slow_model(), "hand", SqliteSaver(conn))
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=3)
    run(graph, 0, callbacks=[online.handler])
    conn.close()
    online.start()
    assert online.force_flush(30)
    (job,) = online.jobs.list_jobs()
    assert job.state is JobState.FAILED and job.attempts == 1 and online.stats.retried == 0
    assert (job.error or "").startswith("ProgrammingError: Cannot operate on a closed database")
    (result,) = online.jobs.list_results()
    assert result.status == "failed" and result.error_type == "ProgrammingError"
    online.shutdown()


def test_an_interrupted_turn_fails_at_once_and_says_to_resume_it(tmp_path: Path, saver: SqliteSaver) -> None:
    """A job whose trace stopped at an interrupt (put in the store by another process, say) is final:
    one attempt, no retry, and the stored error names the type and what to do."""
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_attempts=3)
    waiting = record(graph).model_copy(update={"trace_id": "waiting", "final_answer": None, "interrupted": True})
    assert online.jobs.add([waiting], sample_rate=1.0) == ["waiting"]
    online.start()
    assert online.force_flush(30)
    job = online.jobs.get("waiting")
    assert job.state is JobState.FAILED and job.attempts == 1 and online.stats.retried == 0
    assert (job.error or "").startswith("TraceNotFinishedError") and "completed in place" in (job.error or "")
    online.shutdown()


def test_a_job_recorded_under_another_graph_fails_at_once_saying_what_changed(
    tmp_path: Path, saver: SqliteSaver
) -> None:
    """A deploy between the sampling and the audit (same node names, another model): the job is failed with
    the named reason on its first attempt and never retried; the serving side's runs carry the fingerprint."""
    from ariadne_lc.testing import unfaithful_arithmetic_model

    before = build_agent(slow_model(), "hand", saver)
    serving = online_for(before, tmp_path / "serving", sample_rate=1.0)
    run(before, 0, callbacks=[serving.handler])
    assert serving.shutdown(drain=False).unpersisted == 0  # persisted, not audited: the job store keeps it

    after = build_agent(unfaithful_arithmetic_model(), "hand", saver)  # the deploy
    worker = online_for(after, tmp_path / "serving", sample_rate=1.0, max_attempts=3)
    (queued,) = worker.jobs.list_jobs()
    assert queued.trace.graph is not None
    worker.start()
    assert worker.force_flush(30)
    job = worker.jobs.get(queued.job_id)
    assert job.state is JobState.FAILED and job.attempts == 1 and worker.stats.retried == 0
    assert (job.error or "").startswith("GraphChangedError") and "model of node 'agent'" in (job.error or "")
    (result,) = worker.jobs.list_results()
    assert result.status == "failed" and result.error_type == "GraphChangedError"
    worker.shutdown()


def test_shutdown_refuses_new_work_and_is_idempotent(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0)
    online.start()
    report = online.shutdown()
    assert report.clean
    run(graph, 0, callbacks=[online.handler])  # the agent still runs; nothing is queued
    assert online.stats.refused == 1 and online.stats.accepted == 0
    assert online.shutdown() is report and online.force_flush() is True
    with pytest.raises(ConfigurationError, match="shut down"):
        online.start()


def test_shutdown_without_draining_leaves_jobs_for_the_next_start(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(replay_delay=0.3), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_concurrency=1)
    for i in range(4):
        run(graph, i, callbacks=[online.handler])
    online.start()
    deadline = time.monotonic() + 10
    while online.jobs.counts()[JobState.RUNNING] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    report = online.shutdown(drain=False)
    assert report.released == 1 and report.unpersisted == 0 and 3 <= report.unfinished <= 4

    again = online_for(graph, tmp_path, sample_rate=1.0)
    again.start()
    assert again.force_flush(30)
    jobs = again.jobs.list_jobs()
    assert [j.state for j in jobs] == [JobState.DONE] * 4
    assert all(j.attempts == 1 for j in jobs)  # the released attempt did not count
    assert sorted(r.trace_id for r in again.jobs.list_results()) == sorted(j.job_id for j in jobs)
    assert again.shutdown().clean


def test_metrics_go_to_the_injected_meter_provider(tmp_path: Path, saver: SqliteSaver) -> None:
    reader = InMemoryMetricReader()
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, meter_provider=MeterProvider(metric_readers=[reader]))
    for i in range(3):
        run(graph, i, callbacks=[online.handler])
    online.start()
    assert online.force_flush(30)
    online.shutdown()
    data = reader.get_metrics_data()
    assert data is not None
    points: dict[str, Any] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "ariadne_lc.online"
            for metric in scope.metrics:
                points[metric.name] = list(metric.data.data_points)
    for name, value in [("recorded", 3), ("sampled", 3), ("persisted", 3), ("audited", 3), ("model_calls", 3)]:
        (point,) = points[f"ariadne.online.{name}"]
        assert point.value == value and point.attributes["ariadne.online.name"] == online.name
    (depth,) = points["ariadne.online.queue.depth"]
    assert depth.value == 0
    (duration,) = points["ariadne.online.audit.duration"]
    assert duration.count == 3 and duration.attributes["ariadne.online.outcome"] == "done"
    assert "ariadne.online.dropped" not in points  # nothing dropped, nothing reported


class _BrokenStore(SQLiteJobStore):
    def add(self, traces: Any, *, sample_rate: float | None, plan: Any = None) -> int:
        raise StoreError("disk full")


def test_a_broken_store_never_reaches_the_agent(
    tmp_path: Path, saver: SqliteSaver, caplog: pytest.LogCaptureFixture
) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    store = _BrokenStore(tmp_path / "broken.db")
    online = OnlineAuditor(graph, jobs=store, sample_rate=1.0, **FAST)
    with caplog.at_level(logging.ERROR, logger="ariadne_lc.online"):
        for i in range(3):
            assert "total is" in run(graph, i, callbacks=[online.handler])["messages"][-1].text
        assert not online.force_flush(0.3)
        report = online.shutdown(timeout=0.3)
    assert online.stats.errors >= 1 and report.unpersisted == 3
    assert any("persisting" in r.message for r in caplog.records)
    store.close()


def test_bad_settings_fail_early(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    for kwargs, match in [
        ({"max_queue_size": 0}, "max_queue_size"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"audit_timeout": 0}, "audit_timeout"),
        ({"lease": 0.05}, "lease"),
        ({"interventions": ["flip_it"]}, "flip_it"),
        ({"sample_rate": 2}, "sample_rate"),
    ]:
        with pytest.raises(ConfigurationError, match=match):
            online_for(graph, tmp_path, **kwargs)


async def test_loop_mode_audits_as_tasks_in_the_apps_loop(tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.db")) as saver:
        graph = build_agent(slow_model(replay_delay=0.01), "create_agent", saver)
        online = online_for(graph, tmp_path, sample_rate=1.0, max_concurrency=3)
        await online.astart()
        served = online.wrap(graph)
        await asyncio.gather(
            *(
                served.ainvoke({"messages": [("user", question(i))]}, {"configurable": {"thread_id": f"a-{i}"}})
                for i in range(8)
            )
        )
        with pytest.raises(ConfigurationError, match="aforce_flush"):
            online.force_flush()
        assert await online.aforce_flush(30)
        results = online.jobs.list_results()
        assert len(results) == 8 and all(r.status == "scored" and r.label == "faithful" for r in results)
        report = await online.ashutdown()
        assert report.clean and online.stats.audited == 8


def test_traces_without_an_answer_are_not_sampled(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    online = online_for(graph, tmp_path, sample_rate=1.0)
    online.offer(Trace(trace_id="i", interrupted=True))
    assert online.stats.filtered == 1 and online.stats.sampled == 0
    online.shutdown()


def test_a_run_is_reserved_at_what_its_plan_costs_before_its_trace_is_built(tmp_path: Path, saver: SqliteSaver) -> None:
    from langchain.agents import create_agent

    from ariadne_lc.testing import lookup, lookup_model, lookup_question

    # 5 model calls a run: the plan spends at most cost_bound(5, 3.0) = min(2 x 15 + 3 x 5, 5²) = 25, whatever its seed
    graph = create_agent(lookup_model(4), [lookup], checkpointer=saver)
    online = online_for(graph, tmp_path, sample_rate=1.0, max_model_calls_per_hour=40)  # no workers: jobs wait
    served = online.wrap(graph)
    for i in range(3):
        served.invoke({"messages": [("user", lookup_question(4, i))]}, {"configurable": {"thread_id": f"l-{i}"}})
    # the first run fits (25 <= 40); a second would reserve 25 more: over the budget, though no job has finished
    assert (online.stats.accepted, online.stats.over_budget) == (1, 2)
    online.shutdown(drain=False)
