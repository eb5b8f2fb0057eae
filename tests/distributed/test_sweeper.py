"""The sweeper, in process, on the real PostgreSQL and RabbitMQ: it finds the unfinished jobs without
reading a single trace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ariadne_lc.distributed import DispatchLog, Publisher, Sweeper, create_app, open_pool
from ariadne_lc.online import Job, JobState, PostgresJobStore
from tests.distributed.fleet import BROKER, queue_depth
from tests.online.support import synthetic_trace


class _NoTraceReads(PostgresJobStore):
    """A job store that refuses every call that loads traces, so that a sweep using one fails loudly."""

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        raise AssertionError("the sweeper loaded every unfinished job's trace (list_jobs)")

    def get(self, job_id: str) -> Job:
        raise AssertionError("the sweeper loaded a trace (get)")


@pytest.fixture
def pool(db: str) -> Iterator[Any]:
    p = open_pool(db, name="ariadne-test-sweeper", max_size=2)
    yield p
    p.close()


def test_a_sweep_republishes_unfinished_jobs_without_loading_their_traces(db: str, queue: str, pool: Any) -> None:
    jobs = _NoTraceReads(db)
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    try:
        jobs.add([synthetic_trace(x) for x in ("a", "b", "c", "d")], sample_rate=None)
        done = jobs.claim("w", lease=60)
        assert done is not None and done.job_id == "a" and jobs.complete(done, [], model_calls=0)
        running = jobs.claim("w", lease=60)
        assert running is not None and running.job_id == "b"
        sweeper = Sweeper(jobs, publisher, DispatchLog(pool), pool, grace=0.0, redeliver_after=600.0)
        assert sweeper.sweep() == 3  # b (running), c and d (pending); never the done one
        assert set(DispatchLog(pool).last_published(["a", "b", "c", "d"])) == {"b", "c", "d"}
        assert sweeper.sweep() == 0  # published just now: not again before redeliver_after
        assert queue_depth(queue)[0] == 3
    finally:
        publisher.close()
        jobs.close()
