"""Faults in the middle of a batch, on real services and real worker processes.

Each test ends with the same checks: every job done, exactly one result set per job, and every
production thread in the PostgresSaver with exactly the checkpoints (head and history) it had.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from typing import Any

import pytest

from ariadne_lc.distributed import BrokerUnavailableError, CeleryDispatcher
from ariadne_lc.online import JobState
from tests.distributed.fleet import Serving, queue_depth, terminate_connections, wait_until


def add(jobs: Any, traces: list[Any]) -> list[str]:
    ids: list[str] = jobs.add(traces, sample_rate=1.0)
    return ids


def done(jobs: Any) -> int:
    return int(jobs.counts()[JobState.DONE])


def check_exactly_once(jobs: Any, serving: Serving, traces: list[Any], before: dict[str, list[str]]) -> None:
    assert jobs.counts()[JobState.DONE] == len(traces), jobs.counts()
    results = jobs.list_results()
    assert Counter(r.trace_id for r in results) == {t.trace_id: 1 for t in traces}
    assert all(r.status == "scored" for r in results), [r.error for r in results]
    assert len({r.result_id for r in results}) == len(results)
    assert serving.threads(traces) == before


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


def test_sigkill_mid_audit_is_redelivered_and_audited_once(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any
) -> None:
    traces = serving.record(6)
    before = serving.threads(traces)
    workers = make_workers(replay_delay=1.5)
    procs = workers.start(2, concurrency=1)
    dispatcher.dispatch(add(jobs, traces))
    running = wait_until(
        lambda: [j for j in jobs.list_jobs(state=JobState.RUNNING) if j.owner], 60, "an audit in flight", workers.logs
    )
    victim = running[0]
    pid = int((victim.owner or "").split(":")[1])
    assert pid in {p.pid for p in procs}
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: done(jobs) == len(traces), 180, "every job done after the kill", workers.logs)
    check_exactly_once(jobs, serving, traces, before)
    redone = jobs.get(victim.job_id)
    assert redone.attempts == 2, redone  # the killed attempt counts, the redelivery finished it
    assert str(pid) not in (redone.owner or "")
    assert sorted(j.attempts for j in jobs.list_jobs()) == [1] * (len(traces) - 1) + [2]
    assert queue_depth(workers.queue) == (0, 0)


def test_broker_restart_mid_batch_loses_nothing_acknowledged(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any
) -> None:
    traces = serving.record(12)
    before = serving.threads(traces)
    workers = make_workers(replay_delay=0.4)
    workers.start(2, concurrency=2)
    dispatcher.dispatch(add(jobs, traces[:8]))
    wait_until(lambda: done(jobs) >= 2, 60, "two jobs done", workers.logs)
    rabbitmqctl("stop_app")
    try:
        # Committed while the broker is down: acknowledged to the serving side, published later.
        late = add(jobs, traces[8:])
        with pytest.raises(BrokerUnavailableError):
            dispatcher.dispatch(late)
        assert dispatcher.stats.failed == 1
    finally:
        rabbitmqctl("start_app")
    wait_until(lambda: done(jobs) == len(traces), 240, "every job done after the restart", workers.logs)
    check_exactly_once(jobs, serving, traces, before)


def test_terminated_database_connections_mid_batch_are_retried(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any, db: str
) -> None:
    traces = serving.record(10)
    before = serving.threads(traces)
    workers = make_workers(replay_delay=0.4)
    workers.start(2, concurrency=2, extra=["--max-attempts", "6"])
    dispatcher.dispatch(add(jobs, traces))
    wait_until(lambda: done(jobs) >= 2, 60, "two jobs done", workers.logs)
    terminated = 0
    for _ in range(3):
        terminated += terminate_connections(db)
        time.sleep(1.0)
    assert terminated >= 2  # the workers' pools held connections to this database
    wait_until(lambda: done(jobs) == len(traces), 240, "every job done after the terminations", workers.logs)
    check_exactly_once(jobs, serving, traces, before)
