"""Conformance tests of the job store: the state machine, claim tokens, leases, exactly-once results."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ariadne_lc import AuditResult, StoreError
from ariadne_lc.online import JobState, JobStore, SQLiteJobStore
from ariadne_lc.online._jobs import new_owner, owner_alive
from tests.online.support import synthetic_trace


@pytest.fixture(params=["file", "memory"])
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLiteJobStore]:
    store = SQLiteJobStore(tmp_path / "jobs.db" if request.param == "file" else ":memory:")
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


def test_is_a_job_store(jobs: SQLiteJobStore) -> None:
    assert isinstance(jobs, JobStore)


def test_add_is_idempotent_per_trace(jobs: SQLiteJobStore) -> None:
    a = synthetic_trace("a", query="q", steps=(), tags=("x",), metadata={"user_id": "u"})
    assert jobs.add([a, synthetic_trace("b")], sample_rate=0.1) == 2
    assert jobs.add([synthetic_trace("b"), synthetic_trace("c")], sample_rate=0.1) == 1
    assert [j.job_id for j in jobs.list_jobs()] == ["a", "b", "c"]
    assert jobs.counts()[JobState.PENDING] == 3 and jobs.unfinished() == 3
    job = jobs.get("a")
    assert job.trace == a and job.sample_rate == 0.1 and job.attempts == 0
    with pytest.raises(StoreError, match="no job"):
        jobs.get("zzz")


def test_claims_are_fifo_and_counted(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace(x) for x in "abc"], sample_rate=None)
    claimed = [jobs.claim("w", lease=60) for _ in range(4)]
    assert [j.job_id if j else None for j in claimed] == ["a", "b", "c", None]
    assert all(j is not None and j.state is JobState.RUNNING and j.attempts == 1 for j in claimed[:3])
    assert len({j.claim for j in claimed if j}) == 3
    assert jobs.unfinished() == 3 and jobs.max_seq() == 3


def test_results_are_stored_exactly_once(jobs: SQLiteJobStore) -> None:
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
    assert jobs.get("a").state is JobState.DONE and jobs.unfinished() == 0
    assert jobs.model_calls_since(time.time() - 60) == 2


def test_retry_waits_for_its_backoff(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    job = jobs.claim("w", lease=60)
    assert job is not None
    assert jobs.retry(job, "ReplayError: overloaded", delay=30, model_calls=1)
    assert jobs.claim("w", lease=60) is None
    due = jobs.next_due()
    assert due is not None and due > time.time() + 20
    pending = jobs.get("a")
    assert pending.state is JobState.PENDING and pending.error == "ReplayError: overloaded"
    assert not jobs.retry(job, "again", delay=0, model_calls=0)  # the claim is gone


def test_an_expired_lease_moves_the_job_and_voids_the_old_claim(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    first = jobs.claim("w1", lease=0.05)
    assert first is not None
    assert jobs.claim("w2", lease=60) is None  # still leased
    time.sleep(0.1)
    second = jobs.claim("w2", lease=60)
    assert second is not None and second.owner == "w2" and second.attempts == 2
    assert second.error is not None and "lease of w1 expired" in second.error
    assert not jobs.complete(first, [_result("a")], model_calls=1)  # the slow first worker loses
    assert jobs.complete(second, [_result("a")], model_calls=1)
    assert len(jobs.list_results()) == 1


def test_heartbeat_keeps_a_lease(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace("a")], sample_rate=None)
    job = jobs.claim("w1", lease=0.2)
    assert job is not None and job.claim is not None
    for _ in range(3):
        time.sleep(0.1)
        assert jobs.heartbeat([job.claim], lease=0.2) == 1
    assert jobs.claim("w2", lease=60) is None


def test_release_hands_back_without_counting_the_attempt(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace("a"), synthetic_trace("b")], sample_rate=None)
    a, b = jobs.claim("w", lease=60), jobs.claim("w", lease=60)
    assert a is not None and b is not None and a.claim and b.claim
    assert jobs.release([a.claim, b.claim]) == 2
    again = jobs.claim("w", lease=60)
    assert again is not None and again.job_id == "a" and again.attempts == 1


def test_reclaim_frees_the_jobs_of_dead_workers(jobs: SQLiteJobStore) -> None:
    jobs.add([synthetic_trace(x) for x in "abc"], sample_rate=None)
    for owner in ("dead", "alive", "dead"):
        assert jobs.claim(owner, lease=600) is not None
    assert jobs.reclaim(lambda owner: owner != "dead") == 2
    assert [j.job_id for j in jobs.list_jobs(state=JobState.PENDING)] == ["a", "c"]
    assert jobs.get("a").error == "the worker dead died during attempt 1"
    assert jobs.claim("x", lease=60) is not None


def test_owner_alive_detects_a_dead_process() -> None:
    me = new_owner()
    assert owner_alive(me)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    host, _, _ = me.partition(":")
    assert not owner_alive(f"{host}:{child.pid}:abc")
    assert owner_alive(f"another-host:{child.pid}:abc")  # unknown hosts are left to their lease
