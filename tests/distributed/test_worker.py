"""The audit worker in process, on the real PostgreSQL and RabbitMQ."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.distributed import AuditWorker, DispatchLog, Publisher, create_app, open_pool
from ariadne_lc.online import PostgresJobStore
from tests.distributed.fleet import BROKER
from tests.distributed.graph import build_graph


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
    worker = AuditWorker(jobs=jobs, auditor=Auditor(build_graph(InMemorySaver())), publisher=publisher)
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
