"""One conformance suite for every job store: the state machine, claim tokens, leases, exactly-once
results, the fleet counts. Run against the in-memory reference, SQLite (a file and ``:memory:``)
and PostgreSQL (the real server)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ariadne_lc import AuditResult, StoreError
from ariadne_lc.errors import JobNotFoundError
from ariadne_lc.online import (
    AuditPlan,
    InMemoryJobStore,
    JobState,
    JobStore,
    PostgresJobStore,
    SQLiteJobStore,
    open_job_store,
)
from ariadne_lc.online._jobs import new_owner, owner_alive
from tests.online.support import synthetic_trace

BACKENDS = ["memory", "sqlite-file", "sqlite-memory", "postgres"]


@pytest.fixture(params=BACKENDS)
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    store: JobStore
    if request.param == "memory":
        store = InMemoryJobStore()
    elif request.param == "postgres":
        store = PostgresJobStore(request.getfixturevalue("postgres_dsn"))
    else:
        store = SQLiteJobStore(tmp_path / "jobs.db" if request.param == "sqlite-file" else ":memory:")
    yield store
    store.close()


def _result(trace_id: str, kind: str = "logic_flip", calls: int = 1) -> AuditResult:
    return AuditResult(
        trace_id=trace_id,
        step_index=0,
        intervention_type=kind,
        status="scored",
        label="faithful",
        original_thought="t",
        model_calls=calls,
    )


def test_is_a_job_store(jobs: JobStore) -> None:
    assert isinstance(jobs, JobStore)


def test_add_is_idempotent_per_trace_and_returns_the_new_ids(jobs: JobStore) -> None:
    a = synthetic_trace("a", query="q — ünïcode", steps=(), tags=("x",), metadata={"user_id": "u", "n": [1, 2.5]})
    assert jobs.add([a, synthetic_trace("b")], sample_rate=0.1) == ["a", "b"]
    assert jobs.add([synthetic_trace("c"), synthetic_trace("b"), synthetic_trace("c")], sample_rate=0.1) == ["c"]
    assert jobs.add([], sample_rate=None) == []
    assert [j.job_id for j in jobs.list_jobs()] == ["a", "b", "c"]
    assert jobs.counts()[JobState.PENDING] == 3 and jobs.unfinished() == 3
    job = jobs.get("a")
    assert job.trace == a and job.sample_rate == 0.1 and job.attempts == 0 and job.state is JobState.PENDING
    assert job.next_attempt_at <= time.time()
    with pytest.raises(JobNotFoundError, match="no job 'zzz'") as info:
        jobs.get("zzz")
    assert info.value.job_id == "zzz" and isinstance(info.value, StoreError)


def test_each_job_keeps_the_audit_plan_it_was_added_with(jobs: JobStore) -> None:
    """The side that samples a run decides its audit; the plan travels with the job to any worker."""
    flip = AuditPlan(step="auto", interventions=("logic_flip",))
    steps = AuditPlan(step=(0, 2), interventions=("premise_negation", "logic_flip"))
    jobs.add([synthetic_trace("a")], sample_rate=None, plan=flip)
    jobs.add([synthetic_trace("b")], sample_rate=None, plan=steps)
    jobs.add([synthetic_trace("c")], sample_rate=None)
    assert [jobs.get(x).plan for x in "abc"] == [flip, steps, None]
    claimed = jobs.claim_job("b", "w", lease=60)
    assert claimed is not None and claimed.plan == steps
    assert {j.job_id: j.plan for j in jobs.list_jobs()} == {"a": flip, "b": steps, "c": None}


def test_a_sqlite_store_made_before_jobs_kept_a_plan_gains_the_column(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    SQLiteJobStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE ariadne_online_jobs DROP COLUMN audit_plan")
    store = SQLiteJobStore(path)
    try:
        store.add([synthetic_trace("a")], sample_rate=None, plan=AuditPlan(step=1, interventions=("logic_flip",)))
        assert store.get("a").plan == AuditPlan(step=1, interventions=("logic_flip",))
    finally:
        store.close()


def test_claims_are_fifo_and_counted(jobs: JobStore) -> None:
    jobs.add([synthetic_trace(x) for x in "abc"], sample_rate=None)
    claimed = [jobs.claim("w", lease=60) for _ in range(4)]
    assert [j.job_id if j else None for j in claimed] == ["a", "b", "c", None]
    assert all(j is not None and j.state is JobState.RUNNING and j.attempts == 1 for j in claimed[:3])
    assert len({j.claim for j in claimed if j}) == 3
    assert jobs.unfinished() == 3 and jobs.max_seq() >= 3
    assert jobs.counts() == {JobState.PENDING: 0, JobState.RUNNING: 3, JobState.DONE: 0, JobState.FAILED: 0}


def test_results_are_stored_exactly_once(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    job = jobs.claim("w", lease=60)
    assert job is not None
    results = [_result("a"), _result("a", "premise_negation")]
    assert jobs.complete(job, results, model_calls=2)
    # A second completion of the same attempt, or of a stale copy, stores nothing.
    assert not jobs.complete(job, results, model_calls=2)
    assert not jobs.fail(job, "late", results, model_calls=2)
    stored = jobs.list_results(trace_id="a")
    assert [r.result_id for r in stored] == ["a:0:logic_flip", "a:0:premise_negation"]
    assert stored[0].model_copy(update={"result_id": results[0].result_id}) == results[0]
    assert jobs.get("a").state is JobState.DONE and jobs.unfinished() == 0
    assert jobs.model_calls_since(time.time() - 60) == 2
    assert jobs.model_calls_since(time.time() + 60) == 0
    assert jobs.list_results(trace_id="other") == []


def test_fail_stores_the_error_with_its_results(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a"), synthetic_trace("b")], sample_rate=None)
    a = jobs.claim("w", lease=60)
    assert a is not None
    assert jobs.fail(a, "TraceError: no thought", [_result("a")], model_calls=0)
    failed = jobs.get("a")
    assert failed.state is JobState.FAILED and failed.error == "TraceError: no thought" and failed.claim is None
    assert [r.trace_id for r in jobs.list_results()] == ["a"]
    assert [j.job_id for j in jobs.list_jobs(state=JobState.FAILED)] == ["a"]
    assert jobs.unfinished() == 1 and jobs.unfinished(up_to_seq=a.seq) == 0


def test_retry_waits_for_its_backoff(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    job = jobs.claim("w", lease=60)
    assert job is not None
    assert jobs.retry(job, "ReplayError: overloaded", delay=30, model_calls=1)
    assert jobs.claim("w", lease=60) is None
    assert jobs.claim_job("a", "w", lease=60) is None  # backing off
    due = jobs.next_due()
    assert due is not None and due > time.time() + 20
    pending = jobs.get("a")
    assert pending.state is JobState.PENDING and pending.error == "ReplayError: overloaded"
    assert pending.next_attempt_at == pytest.approx(due)
    assert not jobs.retry(job, "again", delay=0, model_calls=0)  # the claim is gone
    assert jobs.model_calls_since(time.time() - 60) == 1


def test_an_expired_lease_moves_the_job_and_voids_the_old_claim(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    first = jobs.claim("w1", lease=60)
    assert first is not None and first.claim is not None
    assert jobs.claim("w2", lease=60) is None  # still leased (a long lease: no stall of the machine can end it)
    assert jobs.heartbeat([first.claim], lease=0.05) == 1  # now let it run out
    time.sleep(0.1)
    second = jobs.claim("w2", lease=60)
    assert second is not None and second.owner == "w2" and second.attempts == 2
    assert second.error is not None and "lease of w1 expired" in second.error
    assert not jobs.complete(first, [_result("a")], model_calls=1)  # the slow first worker loses
    assert jobs.complete(second, [_result("a")], model_calls=1)
    assert len(jobs.list_results()) == 1


def test_claim_job_takes_one_named_job(jobs: JobStore) -> None:
    jobs.add([synthetic_trace(x) for x in "abc"], sample_rate=0.5)
    b = jobs.claim_job("b", "w1", lease=60)
    assert b is not None and b.job_id == "b" and b.state is JobState.RUNNING and b.attempts == 1 and b.claim
    assert b.sample_rate == 0.5 and b.owner == "w1"
    assert jobs.claim_job("b", "w2", lease=60) is None  # held by a live claim
    assert jobs.complete(b, [_result("b")], model_calls=1)
    assert jobs.claim_job("b", "w2", lease=60) is None  # done
    a = jobs.claim("w1", lease=60)
    assert a is not None and a.job_id == "a"  # claim() skipped the taken job, not its elders
    assert jobs.fail(a, "final", [], model_calls=0)
    assert jobs.claim_job("a", "w2", lease=60) is None  # failed
    c = jobs.claim_job("c", "w1", lease=0.05)
    assert c is not None
    time.sleep(0.1)
    again = jobs.claim_job("c", "w2", lease=60)  # its lease expired: the worker is presumed dead
    assert again is not None and again.attempts == 2 and again.error is not None and "lease of w1" in again.error
    assert not jobs.complete(c, [_result("c")], model_calls=1)
    with pytest.raises(JobNotFoundError, match="no job 'zzz'") as info:
        jobs.claim_job("zzz", "w", lease=60)
    assert info.value.job_id == "zzz"


def test_unfinished_ids_lists_pending_and_running_jobs_without_their_traces(jobs: JobStore) -> None:
    assert jobs.unfinished_ids() == {}
    before = time.time()
    jobs.add([synthetic_trace(x) for x in "abcd"], sample_rate=None)
    a = jobs.claim("w", lease=60)
    b = jobs.claim("w", lease=60)
    assert a is not None and b is not None and jobs.complete(b, [_result("b")], model_calls=1)
    c = jobs.claim("w", lease=60)
    assert c is not None and jobs.fail(c, "final", [], model_calls=0)
    unfinished = jobs.unfinished_ids()
    assert list(unfinished) == ["a", "d"]  # running and pending, in insertion order; done and failed left out
    assert unfinished == {j: jobs.get(j).created_at for j in ("a", "d")}
    assert all(before - 1 <= created <= time.time() + 1 for created in unfinished.values())
    assert len(unfinished) == jobs.unfinished()


def test_heartbeat_keeps_a_lease(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a"), synthetic_trace("b")], sample_rate=None)
    kept, lapsed = jobs.claim("w1", lease=60), jobs.claim("w1", lease=60)  # long: no stall of the machine ends them
    assert kept is not None and kept.claim is not None and lapsed is not None and lapsed.claim is not None
    assert jobs.heartbeat([kept.claim], lease=600) == 1  # renewed for long
    assert jobs.heartbeat([lapsed.claim], lease=0.05) == 1  # renewed for a moment only
    time.sleep(0.1)  # past the short lease (the clock only moves forward), long before the other
    again = jobs.claim("w2", lease=60)
    assert again is not None and again.job_id == "b"  # only the lapsed one moved
    assert jobs.claim("w2", lease=60) is None
    assert jobs.heartbeat([], lease=1) == 0 and jobs.heartbeat(["unknown"], lease=1) == 0


def test_release_hands_back_without_counting_the_attempt(jobs: JobStore) -> None:
    jobs.add([synthetic_trace("a"), synthetic_trace("b")], sample_rate=None)
    a, b = jobs.claim("w", lease=60), jobs.claim("w", lease=60)
    assert a is not None and b is not None and a.claim and b.claim
    assert jobs.release([a.claim, b.claim]) == 2
    assert jobs.release([]) == 0
    again = jobs.claim("w", lease=60)
    assert again is not None and again.job_id == "a" and again.attempts == 1
    assert not jobs.complete(a, [], model_calls=0)  # a released claim is void


def test_reclaim_frees_the_jobs_of_dead_workers(jobs: JobStore) -> None:
    jobs.add([synthetic_trace(x) for x in "abc"], sample_rate=None)
    for owner in ("dead", "alive", "dead"):
        assert jobs.claim(owner, lease=600) is not None
    assert jobs.reclaim(lambda owner: owner != "dead") == 2
    assert [j.job_id for j in jobs.list_jobs(state=JobState.PENDING)] == ["a", "c"]
    assert jobs.get("a").error == "the worker dead died during attempt 1"
    assert jobs.claim("x", lease=60) is not None
    assert jobs.reclaim(lambda owner: True) == 0


def test_fleet_counts(jobs: JobStore) -> None:
    before = time.time() - 1
    assert jobs.added_since(before) == 0 and jobs.next_due() is None and jobs.max_seq() == 0
    jobs.add([synthetic_trace(x) for x in "ab"], sample_rate=None)
    assert jobs.added_since(before) == 2 and jobs.added_since(time.time() + 60) == 0
    due = jobs.next_due()
    assert due is not None and due <= time.time()


def test_concurrent_claims_from_threads_never_share_a_job(jobs: JobStore) -> None:
    jobs.add([synthetic_trace(f"j{i}") for i in range(40)], sample_rate=None)
    taken: list[str] = []
    lock = threading.Lock()

    def work(owner: str) -> None:
        while (job := jobs.claim(owner, lease=60)) is not None:
            assert jobs.complete(job, [_result(job.job_id)], model_calls=1)
            with lock:
                taken.append(job.job_id)

    threads = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(f"j{i}" for i in range(40))
    assert len(jobs.list_results()) == 40 and jobs.unfinished() == 0


def test_postgres_jobs_survive_terminated_connections(postgres_dsn: str) -> None:
    import psycopg

    jobs = PostgresJobStore(postgres_dsn)
    jobs.add([synthetic_trace("a")], sample_rate=None)
    job = jobs.claim("w", lease=60)
    assert job is not None
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # only this test's own database
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert jobs.complete(job, [_result("a")], model_calls=1)  # on a fresh connection: the claim still holds
    assert jobs.get("a").state is JobState.DONE and len(jobs.list_results()) == 1
    jobs.close()


def test_open_job_store_reads_paths_and_uris(tmp_path: Path, postgres_dsn: str) -> None:
    memory = InMemoryJobStore()
    assert open_job_store(memory) is memory
    sqlite = open_job_store(tmp_path / "j.db")
    assert isinstance(sqlite, SQLiteJobStore)
    sqlite.close()
    pg = open_job_store(postgres_dsn)
    assert isinstance(pg, PostgresJobStore)
    pg.close()


def test_owner_alive_detects_a_dead_process() -> None:
    me = new_owner()
    assert owner_alive(me)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    host, _, _ = me.partition(":")
    assert not owner_alive(f"{host}:{child.pid}:abc")
    assert owner_alive(f"another-host:{child.pid}:abc")  # unknown hosts are left to their lease


def test_cursors_are_saved_per_name_and_survive_reopening(jobs: JobStore) -> None:
    assert jobs.cursor("server:a") is None
    jobs.set_cursor("server:a", "2026-01-01T00:00:00+00:00")
    jobs.set_cursor("server:b", "x")
    jobs.set_cursor("server:a", "2026-01-02T00:00:00+00:00")
    assert (jobs.cursor("server:a"), jobs.cursor("server:b")) == ("2026-01-02T00:00:00+00:00", "x")


def test_sqlite_cursor_survives_a_restart(tmp_path: Path) -> None:
    first = SQLiteJobStore(tmp_path / "jobs.db")
    first.set_cursor("poller", "42")
    first.close()
    again = SQLiteJobStore(tmp_path / "jobs.db")
    assert again.cursor("poller") == "42"
    again.close()
