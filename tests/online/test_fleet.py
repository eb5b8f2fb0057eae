"""The online auditor as one replica of a fleet: a Postgres job store from a URI, the dispatch hook
for workers elsewhere, fleet-wide budget and rate counts, the auditor's own result store, and
retries decided by the error's type."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

import ariadne_lc.online._persister as persister_module
from ariadne_lc import Auditor, AuditResult, InMemoryResultStore
from ariadne_lc.online import JobState, OnlineAuditor, PostgresJobStore, SQLiteJobStore, retryable_error
from ariadne_lc.online._worker import retryable_type
from tests.helpers import ONE_AUDIT, build_agent
from tests.online.support import question, slow_model, synthetic_trace

FAST: dict[str, Any] = {"tick_interval": 0.05, "lease": 5.0, "retry_backoff": 0.01, **ONE_AUDIT}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def run(graph: Any, i: int, online: OnlineAuditor) -> str:
    out = graph.invoke(
        {"messages": [("user", question(i))]}, {"configurable": {"thread_id": f"t-{i}"}, "callbacks": [online.handler]}
    )
    return str(out["messages"][-1].text)


class Recording:
    """A dispatcher that records what it is given; it can fail its first calls or block until released."""

    def __init__(self, *, fail_first: int = 0, block: threading.Event | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_first = fail_first
        self.block = block
        self.entered = threading.Event()

    def dispatch(self, job_ids: Sequence[str]) -> None:
        self.entered.set()
        if self.block is not None:
            self.block.wait(60)
        if self.fail_first > 0:
            self.fail_first -= 1
            raise ConnectionError("broker unreachable")
        self.calls.append(list(job_ids))


def test_a_postgres_uri_gives_a_fleet_job_store(postgres_dsn: str, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "create_agent", saver)
    online = OnlineAuditor(graph, jobs=postgres_dsn, sample_rate=1.0, **FAST)
    assert isinstance(online.jobs, PostgresJobStore)
    for i in range(3):
        assert "total is" in run(graph, i, online)
    online.start()
    assert online.force_flush(60)
    results = online.jobs.list_results()
    assert len(results) == 3 and all(r.status == "scored" for r in results)
    assert online.shutdown().clean
    replica = PostgresJobStore(postgres_dsn)  # another process's view: the same jobs and results
    assert replica.counts()[JobState.DONE] == 3 and replica.list_results() == results
    replica.close()


def test_the_dispatcher_gets_each_committed_job(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    dispatcher = Recording()
    online = OnlineAuditor(graph, jobs=tmp_path / "jobs.db", sample_rate=1.0, dispatcher=dispatcher, **FAST)
    for i in range(4):
        online.offer(synthetic_trace(f"d-{i}"))
    online.offer(synthetic_trace("d-0"))  # offered again: still one job, announced once
    assert online.force_flush(10)
    dispatched = [job_id for call in dispatcher.calls for job_id in call]
    assert dispatched == [j.job_id for j in online.jobs.list_jobs()] == ["d-0", "d-1", "d-2", "d-3"]
    assert online.stats.dispatched == 4 and online.stats.dispatch_errors == 0
    assert online.shutdown(drain=False).unfinished == 4  # no local workers: pending for the broker's


def test_a_failing_dispatcher_leaves_jobs_pending_and_offers_them_again(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    dispatcher = Recording(fail_first=2)
    online = OnlineAuditor(graph, jobs=tmp_path / "jobs.db", sample_rate=1.0, dispatcher=dispatcher, **FAST)
    for i in range(3):
        assert "total is" in run(graph, i, online)  # the agent never hears of it
    assert online.force_flush(10)
    assert online.jobs.counts()[JobState.PENDING] == 3  # committed before the dispatch, and kept
    deadline = time.monotonic() + 30
    while online.stats.dispatched < 3:  # offered again on later ticks
        assert time.monotonic() < deadline, online.stats
        time.sleep(0.02)
    assert online.stats.dispatch_errors == 2 and online.stats.errors == 0
    assert sorted(j for call in dispatcher.calls for j in call) == sorted(j.job_id for j in online.jobs.list_jobs())
    online.start()  # local workers poll the store as well: the jobs are audited once each
    assert online.force_flush(60)
    assert online.jobs.counts()[JobState.DONE] == 3 and len(online.jobs.list_results()) == 3
    online.shutdown()


def _failures_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "ariadne_lc.online" and "dispatching" in r.getMessage()]


def _dispatch_errors_reach(online: OnlineAuditor, count: int) -> None:
    deadline = time.monotonic() + 30
    while online.stats.dispatch_errors < count:  # one failure a tick: the ids are offered again
        assert time.monotonic() < deadline, online.stats
        time.sleep(0.02)


def test_a_broker_that_stays_down_is_logged_once_with_its_traceback(
    tmp_path: Path, saver: SqliteSaver, caplog: pytest.LogCaptureFixture
) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    dispatcher = Recording(fail_first=10**6)
    online = OnlineAuditor(graph, jobs=tmp_path / "jobs.db", sample_rate=1.0, dispatcher=dispatcher, **FAST)
    with caplog.at_level(logging.INFO, logger="ariadne_lc.online"):
        online.offer(synthetic_trace("down"))
        _dispatch_errors_reach(online, 6)
        online.shutdown(drain=False)
    logged = _failures_logged(caplog)
    assert len(logged) == 1 and logged[0].exc_info is not None  # the first, with its traceback; then quiet
    assert online.stats.dispatch_errors >= 6  # every failure counted all the same


def test_a_broker_that_stays_down_gets_one_line_warnings_with_the_count(
    tmp_path: Path, saver: SqliteSaver, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(persister_module, "_WARN_INTERVAL", 0.0)  # every repeat is due: the lines are visible
    graph = build_agent(slow_model(), "hand", saver)
    dispatcher = Recording(fail_first=4)
    online = OnlineAuditor(graph, jobs=tmp_path / "jobs.db", sample_rate=1.0, dispatcher=dispatcher, **FAST)
    with caplog.at_level(logging.INFO, logger="ariadne_lc.online"):
        online.offer(synthetic_trace("down"))
        deadline = time.monotonic() + 30
        while online.stats.dispatched < 1:  # down four times, then up again
            assert time.monotonic() < deadline, online.stats
            time.sleep(0.02)
        online.shutdown(drain=False)
    logged = _failures_logged(caplog)
    assert [r.exc_info is not None for r in logged] == [True, False, False, False, False]
    repeats = [r.getMessage() for r in logged[1:4]]
    assert all("still failing: 1 more failure(s)" in m and "ConnectionError: broker unreachable" in m for m in repeats)
    assert [f"({n} in a row" in m for n, m in zip((2, 3, 4), repeats, strict=True)] == [True] * 3
    assert "works again after 4 failure(s)" in logged[4].getMessage() and logged[4].levelno == logging.INFO
    assert online.stats.dispatch_errors == 4 and online.stats.dispatched == 1


def test_a_blocked_dispatcher_never_blocks_the_agent(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    release = threading.Event()
    dispatcher = Recording(block=release)
    online = OnlineAuditor(
        graph, jobs=tmp_path / "jobs.db", sample_rate=1.0, dispatcher=dispatcher, max_queue_size=4, **FAST
    )
    assert "total is" in run(graph, 0, online)
    assert dispatcher.entered.wait(30)  # the persister is now stuck in dispatch()
    for i in range(1, 8):  # the agent goes on; sampled runs wait in the bounded queue, the rest is counted
        assert "total is" in run(graph, i, online)
    assert not release.is_set() and online.stats.accepted + online.stats.dropped == 8
    assert online.stats.dropped >= 4 and online.queue_depth <= 4
    release.set()
    assert online.force_flush(30)
    assert online.jobs.unfinished() == online.stats.accepted
    online.shutdown(drain=False)


def test_the_fleet_budget_counts_other_replicas(postgres_dsn: str, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    other = PostgresJobStore(postgres_dsn)  # another replica's workers spent the budget
    other.add([synthetic_trace("elsewhere")], sample_rate=None)
    job = other.claim("other-host:1:x", lease=60)
    assert job is not None and other.complete(job, [], model_calls=300)
    # each offered run is reserved at 3 calls (its plan's cost at most): 100 of them before this replica alone could
    # exhaust 300; the first tick reads the fleet's 300 long before
    online = OnlineAuditor(graph, jobs=postgres_dsn, sample_rate=1.0, max_model_calls_per_hour=300, **FAST)
    deadline = time.monotonic() + 10
    while online.stats.over_budget == 0:  # once a tick has read the fleet's count
        assert time.monotonic() < deadline, online.stats
        online.offer(synthetic_trace(f"b-{time.monotonic_ns()}"))
        time.sleep(0.02)
    before = online.stats.accepted
    for i in range(5):
        online.offer(synthetic_trace(f"late-{i}"))
    assert online.stats.accepted == before and online.stats.over_budget >= 6
    online.shutdown(drain=False)
    other.close()


class OfferingWhileCounted:
    """A job store (forwarding to a SQLite one) that has runs offered while the persister counts the
    fleet's jobs, as an agent thread can at any moment: those runs are accepted but not committed yet."""

    def __init__(self, inner: SQLiteJobStore) -> None:
        self._inner = inner
        self.offer: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def added_since(self, since: float) -> int:
        count = self._inner.added_since(since)
        offer, self.offer = self.offer, None
        if offer is not None:
            for i in range(2):
                offer(synthetic_trace(f"during-count-{i}"))
        return int(count)


def test_runs_accepted_while_the_fleet_is_counted_count_too(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    store = OfferingWhileCounted(SQLiteJobStore(tmp_path / "jobs.db"))
    store.add([synthetic_trace(f"o-{i}") for i in range(58)], sample_rate=None)  # the fleet's last minute
    online = OnlineAuditor(graph, jobs=store, sample_rate=1.0, max_audits_per_minute=60, **FAST)  # type: ignore[arg-type]
    limiter = online._admission.limiter
    assert limiter is not None
    store.offer = online.offer  # the next count: 58, with two more accepted meanwhile
    deadline = time.monotonic() + 10
    while store.offer is not None or limiter._fleet is None:  # until that count was handed to the limiter
        assert time.monotonic() < deadline, online.stats
        time.sleep(0.01)
    for i in range(4):  # 58 + 2 = 60 a minute: no room left, whether the two are committed yet or not
        online.offer(synthetic_trace(f"r-{i}"))
    assert (online.stats.accepted, online.stats.rate_limited) == (2, 4)
    online.shutdown(drain=False)


def test_the_fleet_rate_limit_counts_other_replicas(postgres_dsn: str, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(), "hand", saver)
    other = PostgresJobStore(postgres_dsn)
    other.add([synthetic_trace(f"o-{i}") for i in range(58)], sample_rate=None)  # the fleet's last minute
    online = OnlineAuditor(graph, jobs=postgres_dsn, sample_rate=1.0, max_audits_per_minute=60, **FAST)
    limiter = online._admission.limiter
    assert limiter is not None
    deadline = time.monotonic() + 10
    while limiter._fleet is None:  # until a tick of the persister has read the fleet's count
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for i in range(6):  # the bucket alone would allow 6
        online.offer(synthetic_trace(f"r-{i}"))
    assert (online.stats.accepted, online.stats.rate_limited) == (2, 4)
    online.shutdown(drain=False)
    other.close()


def test_results_reach_the_auditors_result_store_once_after_the_commit(tmp_path: Path, saver: SqliteSaver) -> None:
    graph = build_agent(slow_model(fail_replays=1), "create_agent", saver)
    results = InMemoryResultStore()
    auditor = Auditor(graph, result_store=results)
    online = OnlineAuditor(graph, jobs=tmp_path / "jobs.db", auditor=auditor, sample_rate=1.0, **FAST)
    for i in range(2):
        run(graph, i, online)
    online.start()
    assert online.force_flush(60)
    assert online.stats.retried == 1  # the first attempt failed: its result never reached the store
    committed = online.jobs.list_results()
    assert len(committed) == 2 and all(r.status == "scored" for r in committed)
    assert sorted(results.list_results(), key=lambda r: r.result_id) == sorted(committed, key=lambda r: r.result_id)
    online.shutdown()


def _failed(error: str, error_type: str | None) -> AuditResult:
    return AuditResult(
        trace_id="t",
        step_index=0,
        intervention_type="logic_flip",
        status="failed",
        label="inconclusive",
        original_thought="x",
        error=error,
        error_type=error_type,
    )


def test_retries_are_decided_by_the_errors_type_never_its_text() -> None:
    assert retryable_error([_failed("ReplayError: the replayed graph raised", "ReplayError")])
    assert retryable_error([_failed("CriticError: overloaded", "CriticError")])
    assert retryable_error([_failed("the model timed out", "TimeoutError")])
    # A message that looks retryable does not make a final error retryable, nor an unknown type.
    assert retryable_error([_failed("ReplayError: looks like it", "NotReplayableError")]) is None
    assert retryable_error([_failed("ReplayError: no type carried", None)]) is None
    assert retryable_error([_failed("x", "SomethingUnheardOf")]) is None
    assert not retryable_type("ReplayDidNotFinishError") and not retryable_type("NoCheckpointerError")
    assert not retryable_type("StepNotFoundError")  # a TraceError
    assert not retryable_type("TraceNotFinishedError")  # waiting at an interrupt: a retry cannot answer it
