"""The audit worker in process, on the real PostgreSQL and RabbitMQ."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc import Auditor, TraceError
from ariadne_lc.distributed import AuditWorker, DispatchLog, Publisher, create_app, open_pool
from ariadne_lc.online import JobState, PostgresJobStore
from tests.distributed.fleet import BROKER
from tests.distributed.graph import build_graph, question
from tests.helpers import ONE_AUDIT, record


@pytest.fixture
def pool(db: str) -> Iterator[Any]:
    p = open_pool(db, name="ariadne-test-worker", max_size=2)
    yield p
    p.close()


def test_a_task_for_a_job_the_store_does_not_have_is_final(
    db: str, queue: str, pool: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The store raises JobNotFoundError (by type, not by message): the task ends as ``unknown`` at
    once, instead of retrying a store call that cannot succeed."""
    jobs = PostgresJobStore(db)
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    worker = AuditWorker(jobs=jobs, auditor=Auditor(build_graph(InMemorySaver())), publisher=publisher, **ONE_AUDIT)
    try:
        with caplog.at_level(logging.INFO, logger="ariadne_lc.distributed"):
            assert worker.run("no-such-job") == "unknown"
        assert worker.outcomes["unknown"] == 1
        assert not [r for r in caplog.records if "trying again" in r.getMessage()]  # no store retries
        assert any("not in the job store" in r.getMessage() for r in caplog.records)
    finally:
        worker.close()
        publisher.close()
        jobs.close()


class _RunnerWithoutReplayMode:
    """A user's own runner missing a property the bookkeeping reads."""

    sinks: tuple[Any, ...] = ()

    @property
    def replay_mode(self) -> Any:
        raise AttributeError("'_RunnerWithoutReplayMode' object has no attribute 'replay_mode'")

    def with_sinks(self, sinks: Any) -> _RunnerWithoutReplayMode:
        return self

    def audit(self, trace: Any, step: Any = "auto", interventions: Any = ()) -> list[Any]:
        raise TraceError(f"trace {trace.trace_id} cannot be audited")

    async def aaudit(self, trace: Any, step: Any = "auto", interventions: Any = ()) -> list[Any]:
        return self.audit(trace)


def test_a_bug_in_the_bookkeeping_fails_the_job_once(db: str, queue: str, pool: Any) -> None:
    trace = record(build_graph(InMemorySaver()), question=question(0))
    jobs = PostgresJobStore(db)
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    runner = _RunnerWithoutReplayMode()
    worker = AuditWorker(jobs=jobs, auditor=runner, publisher=publisher, max_attempts=3, **ONE_AUDIT)
    try:
        (job_id,) = jobs.add([trace], sample_rate=1.0)
        assert worker.run(job_id) == "failed"
        job = jobs.get(job_id)
        assert job.state is JobState.FAILED and job.attempts == 1
        assert (job.error or "").startswith("AttributeError in the audit worker's bookkeeping")
        (result,) = jobs.list_results()
        assert result.error_type == "AttributeError"
    finally:
        worker.close()
        publisher.close()
        jobs.close()


def test_a_closed_checkpointer_database_fails_the_job_with_its_error_type(
    db: str, queue: str, pool: Any, tmp_path: Path
) -> None:
    """An error of no type this package knows (here sqlite3's, from the graph's checkpointer) fails the audit
    inside the auditor; the job fails at once with that type, never retried as if the model had raised."""
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    graph = build_graph(SqliteSaver(conn))
    trace = record(graph, question=question(0))
    conn.close()
    jobs = PostgresJobStore(db)
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    worker = AuditWorker(jobs=jobs, auditor=Auditor(graph), publisher=publisher, max_attempts=3, **ONE_AUDIT)
    try:
        (job_id,) = jobs.add([trace], sample_rate=1.0)
        assert worker.run(job_id) == "failed"
        job = jobs.get(job_id)
        assert job.state is JobState.FAILED and job.attempts == 1
        assert (job.error or "").startswith("ProgrammingError: Cannot operate on a closed database")
        (result,) = jobs.list_results()
        assert result.status == "failed" and result.error_type == "ProgrammingError"
    finally:
        worker.close()
        publisher.close()
        jobs.close()


def test_a_job_recorded_under_another_graph_is_failed_once_with_the_reason(db: str, queue: str, pool: Any) -> None:
    """A fleet worker deployed with another model than the replica that sampled the run: failed on the first
    attempt, the stored error names GraphChangedError and what changed, no retry is published."""
    from langchain.agents import create_agent

    from ariadne_lc._fingerprint import graph_fingerprint
    from ariadne_lc.online import JobState
    from ariadne_lc.testing import calculator, unfaithful_arithmetic_model
    from tests.helpers import record

    saver = InMemorySaver()
    served = build_graph(saver)
    trace = record(served).model_copy(update={"graph": graph_fingerprint(served)})
    jobs = PostgresJobStore(db)
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    deployed = create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=saver)
    worker = AuditWorker(jobs=jobs, auditor=Auditor(deployed), publisher=publisher, max_attempts=3, **ONE_AUDIT)
    try:
        (job_id,) = jobs.add([trace], sample_rate=1.0)
        assert worker.run(job_id) == "failed"
        job = jobs.get(job_id)
        assert job.state is JobState.FAILED and job.attempts == 1
        assert (job.error or "").startswith("GraphChangedError") and "model of node 'model'" in (job.error or "")
        assert worker.outcomes["failed"] == 1 and worker.outcomes["retry"] == 0
    finally:
        worker.close()
        publisher.close()
        jobs.close()
