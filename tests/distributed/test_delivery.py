"""Two worker processes audit a batch: every job done, exactly one result set each, threads untouched."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ariadne_lc.distributed import CeleryDispatcher, create_app
from ariadne_lc.online import JobState
from tests.distributed.fleet import REDIS, Serving, delete_redis_queue, require, wait_until


def add(jobs: Any, traces: list[Any]) -> list[str]:
    ids: list[str] = jobs.add(traces, sample_rate=1.0)
    return ids


def test_two_workers_audit_every_job_exactly_once(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any
) -> None:
    traces = serving.record(8)
    before = serving.threads(traces)
    workers = make_workers(replay_delay=0.3)
    workers.start(2, concurrency=2)
    ids = add(jobs, traces)
    dispatcher.dispatch(ids)
    assert dispatcher.stats.dispatched == 8
    wait_until(lambda: jobs.counts()[JobState.DONE] == 8, 120, "8 jobs done", workers.logs)
    results = jobs.list_results()
    assert Counter(r.trace_id for r in results) == {t.trace_id: 1 for t in traces}
    assert all(r.status == "scored" for r in results), [r.error for r in results]
    assert {j.attempts for j in jobs.list_jobs()} == {1}
    assert serving.threads(traces) == before


def test_a_redis_broker_delivers_the_same_way(
    serving: Serving, jobs: Any, db: str, queue: str, make_workers: Any
) -> None:
    require("Redis", "127.0.0.1", 6379)
    traces = serving.record(4)
    before = serving.threads(traces)
    dispatcher = CeleryDispatcher(app=create_app(REDIS, queue=queue, audit_timeout=30), jobs_url=db)
    try:
        workers = make_workers(replay_delay=0.3, broker=REDIS)
        workers.start(2, concurrency=2, extra=["--audit-timeout", "30"])
        dispatcher.dispatch(add(jobs, traces))
        wait_until(lambda: jobs.counts()[JobState.DONE] == 4, 120, "4 jobs done over Redis", workers.logs)
        results = jobs.list_results()
        assert Counter(r.trace_id for r in results) == {t.trace_id: 1 for t in traces}
        assert serving.threads(traces) == before
    finally:
        dispatcher.close()
        delete_redis_queue(queue)
