"""SIGKILL a worker in the middle of a batch of audits, restart it: nothing lost, nothing done twice."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
N = 12


def _query(db: Path, sql: str) -> list[Any]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _worker(mode: str, folder: Path, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.online.crash_worker", mode, str(folder), *args],
        cwd=ROOT,
        text=True,
        **kwargs,
    )


def test_a_killed_worker_resumes_every_job_exactly_once(tmp_path: Path) -> None:
    jobs_db, checkpoints_db = tmp_path / "jobs.db", tmp_path / "checkpoints.db"
    with open(tmp_path / "record.log", "w") as log:
        proc = _worker("record", tmp_path, str(N), stdout=log, stderr=subprocess.STDOUT)
        try:
            # Wait until the audits are well under way: some done, some in flight, some still queued.
            deadline = time.monotonic() + 300
            while True:
                assert proc.poll() is None, (tmp_path / "record.log").read_text()
                assert time.monotonic() < deadline, "the worker made no progress"
                if jobs_db.exists():
                    try:
                        states = dict(_query(jobs_db, "SELECT state, COUNT(*) FROM ariadne_online_jobs GROUP BY state"))
                    except sqlite3.OperationalError:  # the schema is not there yet
                        states = {}
                    if sum(states.values()) == N and states.get("done", 0) >= 3 and states.get("running", 0) >= 1:
                        break
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    at_kill = {
        job: (state, attempts)
        for job, state, attempts in _query(jobs_db, "SELECT job_id, state, attempts FROM ariadne_online_jobs")
    }
    done_before = dict(_query(jobs_db, "SELECT job_id, data FROM ariadne_online_results"))
    killed = {job for job, (state, _) in at_kill.items() if state == "running"}
    assert len(at_kill) == N and killed and len(done_before) >= 3
    assert {job for job, (state, _) in at_kill.items() if state == "done"} == set(done_before)
    checkpoints_before = _query(checkpoints_db, "SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id")

    resumed = subprocess.run(
        [sys.executable, "-m", "tests.online.crash_worker", "resume", str(tmp_path)],
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary == {"flushed": True, "clean": True, "audited": N - len(done_before)}

    final = {
        job: (state, attempts)
        for job, state, attempts in _query(jobs_db, "SELECT job_id, state, attempts FROM ariadne_online_jobs")
    }
    assert set(final) == set(at_kill) and all(state == "done" for state, _ in final.values())
    rows = _query(jobs_db, "SELECT job_id, result_key, data FROM ariadne_online_results")
    assert sorted(job for job, _, _ in rows) == sorted(final)  # exactly one result per job, none missing
    key_of_plan = "0:thought:thought->answer:logic_flip:0"  # the planned audit's key
    assert all(key == key_of_plan and json.loads(data)["status"] == "scored" for _, key, data in rows)
    for job, _, data in rows:
        if job in done_before:
            assert data == done_before[job]  # audited before the kill: not redone
    for job, (_, attempts) in final.items():
        # The attempt the kill interrupted counts; nothing else ran twice.
        assert attempts == (2 if job in killed else 1), (job, attempts, at_kill[job])
    # Audits fork into their own saver: the users' threads have exactly the checkpoints they had.
    assert (
        _query(checkpoints_db, "SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id") == checkpoints_before
    )
