"""Two worker processes audit a batch: every job done, exactly one result set each, threads untouched."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ariadne_lc.distributed import CeleryDispatcher
from ariadne_lc.online import JobState
from tests.distributed.fleet import Serving, wait_until


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
