"""Several real processes claim from one job store at once (SQLite file, PostgreSQL): every job is
audited by exactly one of them, with exactly one result set, even when one dies holding jobs."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ariadne_lc.online import JobState, open_job_store
from tests.online.support import synthetic_trace

ROOT = Path(__file__).resolve().parents[2]
N_JOBS = 120
N_WORKERS = 4


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_dsn"))
    return str(tmp_path / "jobs.db")


def test_processes_claim_each_job_exactly_once(store_spec: str, tmp_path: Path) -> None:
    jobs = open_job_store(store_spec)
    try:
        assert len(jobs.add([synthetic_trace(f"job-{i:03d}") for i in range(N_JOBS)], sample_rate=None)) == N_JOBS
        go, go_dying = tmp_path / "go", tmp_path / "go-dying"

        def spawn(owner: str, start: Path, *extra: str) -> subprocess.Popen[bytes]:
            out = str(tmp_path / owner)
            cmd = [sys.executable, "-m", "tests.online.claim_worker", store_spec, owner, out, str(start), *extra]
            return subprocess.Popen(cmd, cwd=ROOT)

        dying = spawn("dying", go_dying, "--die-after", "3")
        # Each worker holds its first claim until all of them hold one, so all of them share the work
        # whatever the scheduling (without it one process could drain the queue before the others start).
        workers = [spawn(f"worker-{k}", go, "--peers", str(N_WORKERS)) for k in range(N_WORKERS)]
        owners = ["dying", *(f"worker-{k}" for k in range(N_WORKERS))]
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"{o}.ready").exists() for o in owners):  # all at the start line
            assert time.monotonic() < deadline, "the claiming processes did not start"
            time.sleep(0.05)
        go_dying.touch()  # first the one that dies holding three jobs
        assert dying.wait(60) == -9  # SIGKILLed while holding its claims
        go.touch()  # then the others, all at once
        for w in workers:
            assert w.wait(120) == 0

        held_by_the_dead = (tmp_path / "dying").read_text().split()
        completed = Counter(line for w in range(N_WORKERS) for line in (tmp_path / f"worker-{w}").read_text().split())
        assert len(held_by_the_dead) == 3
        assert sorted(completed) == [f"job-{i:03d}" for i in range(N_JOBS)]
        assert set(completed.values()) == {1}, "a job was completed by two processes"
        assert all((tmp_path / f"worker-{w}").read_text() for w in range(N_WORKERS)), "they shared the work"

        assert jobs.counts()[JobState.DONE] == N_JOBS and jobs.unfinished() == 0
        results = jobs.list_results()
        assert len(results) == 2 * N_JOBS
        assert Counter(r.trace_id for r in results) == {f"job-{i:03d}": 2 for i in range(N_JOBS)}
        for job_id in held_by_the_dead:
            job = jobs.get(job_id)
            assert job.attempts == 2 and job.owner != "dying"  # taken over once its lease expired
        assert jobs.model_calls_since(time.time() - 3600) == 2 * N_JOBS  # fleet-wide, every process's calls
    finally:
        jobs.close()
