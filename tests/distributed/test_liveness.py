"""A worker that is alive but takes no work is reported: heartbeats and a self-ping in Postgres.

The fault is injected, not waited for: the test graph's module blocks the worker's consumer (its main
thread) as soon as a task arrives while a flag file exists, which is what a consumer stuck in Celery's
prefetch-count restore after a broker restart looked like. The broker still counts it as a consumer,
and its process is alive; ``ariadne-lc workers`` must say it is stalled, then ok once it moves again,
and gone once it is killed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.distributed import CeleryDispatcher
from ariadne_lc.online import JobState
from tests.distributed.fleet import Serving, wait_until

runner = CliRunner()


def health(db: str, queue: str) -> tuple[int, str]:
    """``ariadne-lc workers`` for this test's queue: its exit status and its output on one line."""
    result = runner.invoke(app, ["workers", "--jobs", db, "--queue", queue, "--stall-after", "4"])
    return result.exit_code, " ".join(result.output.split())


def wait_health(db: str, queue: str, status: str, workers: Any) -> str:
    """Wait until the only worker's line starts with ``status``; return the output."""
    found = wait_until(
        lambda: (lambda h: h if h[1].startswith(status) else None)(health(db, queue)),
        60,
        f"the worker reported {status}",
        lambda: f"{health(db, queue)}\n{workers.logs()}",
    )
    code, text = found
    assert code == (1 if status in ("stalled", "gone") else 0), found
    return str(text)


def test_a_worker_whose_consumer_is_blocked_is_reported_stalled_then_ok_then_gone(
    serving: Serving, jobs: Any, dispatcher: CeleryDispatcher, make_workers: Any, db: str, queue: str, tmp_path: Path
) -> None:
    flag = tmp_path / "block-consumer"
    workers = make_workers(replay_delay=0.2, ARIADNE_TEST_BLOCK_CONSUMER=str(flag))
    (proc,) = workers.start(1, concurrency=1, extra=["--beat-interval", "1"])
    wait_health(db, queue, "ok", workers)
    traces = serving.record(1)
    flag.touch()
    dispatcher.dispatch(jobs.add(traces, sample_rate=1.0))
    text = wait_health(db, queue, "stalled", workers)
    assert "its consumer has not answered a ping" in text, text
    assert proc.poll() is None  # alive all along
    assert jobs.counts()[JobState.PENDING] == 1  # its prefetched message is held, never claimed
    flag.unlink()
    wait_until(lambda: jobs.counts()[JobState.DONE] == 1, 60, "the job done once the consumer moves", workers.logs)
    assert "1 handled" in wait_health(db, queue, "ok", workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert "no heartbeat for" in wait_health(db, queue, "gone", workers)
