"""The server poller against a real ``langgraph dev``: exactly once per turn across a restart."""

from __future__ import annotations

from pathlib import Path

from ariadne_lc.online import JobState, SQLiteJobStore
from ariadne_lc.online._worker import retryable_type
from ariadne_lc.server import RemoteAuditor, ServerPoller
from tests.helpers import ONE_AUDIT
from tests.server import deployed
from tests.server.conftest import Server
from tests.server.test_remote_audit import _ask, _snapshot, sdk


def _poller(server: Server, jobs: Path) -> ServerPoller:
    remote = RemoteAuditor(deployed.polled, server.url, allow_unchecked=True)
    return ServerPoller(remote, assistant="polled", jobs=jobs, sample_rate=1.0, max_threads_per_poll=2, **ONE_AUDIT)


def _drain(poller: ServerPoller) -> int:
    threads = 0
    while True:
        report = poller.poll()
        threads += report.threads
        if not report.more:
            return threads


def test_poller_restart_in_the_middle_audits_every_turn_once(langgraph_server: Server, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.db"
    threads = [
        _ask(langgraph_server, "polled", f"How many apples are in {a} boxes of {b}?")
        for a, b in [(6, 7), (3, 5), (2, 9)]
    ]
    first = _poller(langgraph_server, jobs)
    report = first.poll()
    assert (report.threads, report.offered, report.more) == (2, 2, True)  # bounded: one thread left
    first.shutdown(drain=False)  # the process stops; nothing was audited yet
    first.remote.close()

    # traffic while no poller runs: new threads, and a second turn on a thread already polled
    threads += [
        _ask(langgraph_server, "polled", f"How many pears are in {a} crates of {b}?") for a, b in [(4, 4), (5, 8)]
    ]
    with sdk(langgraph_server) as client:
        client.runs.wait(threads[0], "polled", input={"messages": [{"role": "user", "content": "And 7 bags of 3?"}]})
    before = {t: _snapshot(langgraph_server, t) for t in threads}

    second = _poller(langgraph_server, jobs)
    _drain(second)
    second.online.start()
    assert second.online.force_flush(600)
    assert _drain(second) >= 0  # polling again after the audits adds nothing
    second.online.force_flush(600)
    second.shutdown()
    second.remote.close()

    with RemoteAuditor(deployed.polled, langgraph_server.url, allow_unchecked=True) as remote:
        mine = {t.trace_id for thread in threads for t in remote.traces(thread)}
        # every turn of the assistant on the server (other tests may have added threads to it)
        everything = remote.server.threads(metadata={"graph_id": "polled"}, limit=1000)
        turns = {t.trace_id for thread in everything for t in remote.traces(str(thread["thread_id"]))}
    assert len(mine) == 6 and mine <= turns
    store = SQLiteJobStore(jobs)
    done = store.list_jobs()
    assert sorted(j.job_id for j in done) == sorted(turns)  # nothing missed, nothing twice
    assert {j.state for j in done} == {JobState.DONE} and {j.attempts for j in done} == {1}
    results = store.list_results()
    assert sorted(r.trace_id for r in results) == sorted(turns)  # one audit per turn
    assert all(r.violation for r in results)  # the polled agent is the unfaithful one
    assert store.cursor(second.cursor_name) is not None
    store.close()
    assert {t: _snapshot(langgraph_server, t) for t in threads} == before


def test_server_errors_are_classified_for_retries() -> None:
    assert retryable_type("ServerUnavailableError")  # the server may come back
    assert not retryable_type("ThreadNotFoundError")  # a deleted thread does not
    assert not retryable_type("GraphMismatchError")  # nor does other graph code


def test_a_thread_deleted_before_its_audit_fails_its_job_once(langgraph_server: Server, tmp_path: Path) -> None:
    thread = _ask(langgraph_server, "polled", "How many apples are in 8 boxes of 2?")
    poller = _poller(langgraph_server, tmp_path / "jobs.db")
    _drain(poller)
    with sdk(langgraph_server) as client:
        client.threads.delete(thread)
    poller.online.start()
    assert poller.online.force_flush(600)
    poller.shutdown()
    poller.remote.close()
    store = SQLiteJobStore(tmp_path / "jobs.db")
    (job,) = [j for j in store.list_jobs() if j.trace.thread_id == thread]
    assert (job.state, job.attempts) == (JobState.FAILED, 1)
    assert "ThreadNotFoundError" in (job.error or "") and thread in (job.error or "")
    store.close()
