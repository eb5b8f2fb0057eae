"""Races of a fleet, forced with barriers and repeated, on the real PostgreSQL and RabbitMQ.

- Workers started at the same moment on a fresh database all set it up (the checkpointer's
  migrations included).
- Two redelivered messages of a dead worker's jobs, handled at once by two threads of one worker
  while the sweeper reclaims: both jobs are audited, none is left pending for the sweeper's
  ``redeliver_after``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.distributed import AuditWorker, DispatchLog, Publisher, WorkerConfig, create_app, open_pool
from ariadne_lc.distributed._runtime import WorkerProcess
from ariadne_lc.online import JobState, PostgresJobStore
from ariadne_lc.online._jobs import owner_alive
from tests.distributed.fleet import BROKER, database
from tests.distributed.graph import build_graph
from tests.helpers import ONE_AUDIT
from tests.online.support import synthetic_trace

STARTS = 12
"""Rounds of simultaneous start-ups, each on a fresh database."""
WORKERS = 4
"""Worker start-ups per round."""
REDELIVERIES = 40
"""Rounds of two redelivered messages handled at once."""


def together(n: int, fn: Callable[[int], Any]) -> list[BaseException | None]:
    """Run ``fn(i)`` on ``n`` threads released by one barrier; each thread's exception (or ``None``)."""
    barrier = threading.Barrier(n)
    errors: list[BaseException | None] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            fn(i)
        except BaseException as exc:
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_workers_started_together_on_a_fresh_database_all_start(queue: str) -> None:
    """Each round: a new database, then WORKERS worker start-ups (what ``ariadne-lc worker`` does
    before it consumes: the graph on a set-up PostgresSaver, the job store, the distributed tables)
    released at once. Without a lock around ``PostgresSaver.setup()`` some fail with
    ``UniqueViolation`` (``checkpoint_migrations_pkey`` or ``pg_type_typname_nsp_index``)."""
    app = create_app(BROKER, queue=queue)
    failures: Counter[str] = Counter()
    for _ in range(STARTS):
        with database() as url:
            config = WorkerConfig(
                graph="tests.distributed.graph:build_graph",
                jobs_url=url,
                concurrency=1,
                interventions=("logic_flip",),
                step="auto",
            )
            processes = [WorkerProcess(config, app) for _ in range(WORKERS)]
            try:
                errors = together(WORKERS, lambda i, ps=processes: ps[i].get())
            finally:
                for p in processes:
                    p.close()
            failures.update(f"{type(e).__name__}: {str(e).splitlines()[0][:120]}" for e in errors if e is not None)
    assert not failures, f"start-ups that failed over {STARTS} rounds x {WORKERS}: {dict(failures)}"


@pytest.fixture
def pool(db: str) -> Iterator[Any]:
    p = open_pool(db, name="ariadne-test-races", max_size=2)
    yield p
    p.close()


def dead_owner() -> str:
    """The owner identity of a worker process on this host that has exited (and been reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    pid = int(proc.stdout)
    assert not owner_alive(f"{socket.gethostname()}:{pid}:x")
    return f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:12]}"


def test_two_redelivered_jobs_of_a_dead_worker_handled_at_once_are_both_audited(db: str, queue: str, pool: Any) -> None:
    """A worker holding two jobs is SIGKILLed; the broker redelivers both messages to a worker with
    concurrency 2, whose two threads handle them at once while its sweeper reclaims the dead
    worker's jobs. Every message must end with its job claimed: a message dropped as ``duplicate``
    or ``not_due`` while its job is pending and due leaves the job to the sweeper's
    ``redeliver_after`` (600 s by default)."""
    jobs = PostgresJobStore(db)
    sweeper_jobs = PostgresJobStore(db)  # the sweeper's own store and connections, as in a worker
    publisher = Publisher(create_app(BROKER, queue=queue), DispatchLog(pool))
    worker = AuditWorker(jobs=jobs, auditor=Auditor(build_graph(InMemorySaver())), publisher=publisher, **ONE_AUDIT)
    lost: list[tuple[int, dict[str, str]]] = []
    outcomes: Counter[str] = Counter()
    try:
        for round_ in range(REDELIVERIES):
            traces = [synthetic_trace(f"r{round_}-{k}-{uuid.uuid4().hex[:6]}") for k in range(2)]
            ids = jobs.add(traces, sample_rate=1.0)
            owner = dead_owner()
            for job_id in ids:
                assert jobs.claim_job(job_id, owner, lease=600) is not None
            ended: dict[str, str] = {}

            def handle(i: int, ids: list[str] = ids, ended: dict[str, str] = ended) -> None:
                if i < 2:
                    ended[ids[i]] = worker.run(ids[i], redelivered=True)
                else:
                    sweeper_jobs.reclaim(owner_alive)

            errors = together(3, handle)
            assert errors == [None, None, None], errors
            outcomes.update(ended.values())
            left = {job_id: jobs.get(job_id).state for job_id in ids}
            if any(state is JobState.PENDING for state in left.values()):
                lost.append((round_, ended))
    finally:
        worker.close()
        publisher.close()
        jobs.close()
        sweeper_jobs.close()
    assert not lost, f"{len(lost)} of {REDELIVERIES} rounds left a job pending; outcomes {dict(outcomes)}: {lost[:5]}"
    assert set(outcomes) <= {"done", "failed"}, outcomes


def test_a_zombie_worker_counts_as_dead() -> None:
    """A SIGKILLed worker its supervisor has not reaped yet still answers ``kill(pid, 0)``; its jobs
    must be reclaimed at once all the same, not after the lease."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner = f"{socket.gethostname()}:{proc.pid}:x"
        assert owner_alive(owner)
        os.kill(proc.pid, 9)
        # Not reaped yet: a zombie. Wait for the state change without reaping (waitid with WNOWAIT).
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        assert not owner_alive(owner)
    finally:
        proc.wait()
