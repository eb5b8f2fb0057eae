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

from ariadne_lc.distributed import BrokerUnavailableError, CeleryDispatcher, DispatchLog, open_pool
from ariadne_lc.online import JobState
from tests.distributed.fleet import BrokerProxy, Serving, queue_depth, terminate_connections, wait_until


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


def test_a_worker_that_loses_its_broker_for_good_exits_with_a_failure_status(make_workers: Any) -> None:
    """After ``--reconnect-tries`` failed reconnections Celery gives up ("Unrecoverable error"); the
    process must then exit non-zero so that a supervisor restarts it (``app.worker_main`` dropped the
    status: it exited 0). The broker is cut through a proxy, so the shared RabbitMQ is not touched."""
    proxy = BrokerProxy()
    workers = make_workers(broker=proxy.url)
    (proc,) = workers.start(1, concurrency=1, extra=["--reconnect-tries", "2", "--sweep-interval", "0"])
    proxy.cut()
    try:
        status = proc.wait(timeout=300)  # a hang guard, not a measurement: two tries take seconds
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the worker still runs after the broker was cut:\n{workers.logs()}") from None
    assert status == 1, workers.logs()
    assert "Unrecoverable error" in workers.log(0)


def test_sigkill_of_a_worker_holding_two_jobs_redelivers_both_at_once(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any, db: str
) -> None:
    """Concurrency 2: the survivor gets both redelivered messages at once. Both jobs must be claimed
    from those messages, none left for the sweeper: each job's message was published exactly once
    (a dropped redelivery shows as a second publish, the sweeper's or a watch task's)."""
    traces = serving.record(4)
    before = serving.threads(traces)
    workers = make_workers(replay_delay=2.0)
    procs = workers.start(2, concurrency=2)
    dispatcher.dispatch(add(jobs, traces))

    def holder_of_two() -> int | None:
        owners = Counter(j.owner for j in jobs.list_jobs(state=JobState.RUNNING) if j.owner)
        return next((int(o.split(":")[1]) for o, n in owners.items() if n == 2), None)

    pid = wait_until(holder_of_two, 60, "a worker holding two running jobs", workers.logs)
    assert pid in {p.pid for p in procs}
    killed = {j.job_id for j in jobs.list_jobs(state=JobState.RUNNING) if f":{pid}:" in (j.owner or "")}
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: done(jobs) == len(traces), 180, "every job done after the kill", workers.logs)
    check_exactly_once(jobs, serving, traces, before)
    assert {j.job_id: j.attempts for j in jobs.list_jobs() if j.job_id in killed} == dict.fromkeys(killed, 2)
    pool = open_pool(db, name="ariadne-test-faults", max_size=1)
    try:
        log = DispatchLog(pool)
        assert {t.trace_id: log.publishes(t.trace_id) for t in traces} == {t.trace_id: 1 for t in traces}, (
            workers.logs()
        )
    finally:
        pool.close()
