"""The serving side: OnlineAuditor on the Postgres job store with the Celery dispatcher.

Publishing happens on the persister thread; with the broker unreachable the agent's runs still
succeed, the sampled runs are committed as pending jobs and the failures counted, and the workers'
sweeper gets them audited anyway.
"""

from __future__ import annotations

import socket
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ariadne_lc import Trace
from ariadne_lc.distributed import CeleryDispatcher, create_app
from ariadne_lc.online import JobState, OnlineAuditor
from tests.distributed.fleet import BROKER, Serving, wait_until
from tests.distributed.graph import question
from tests.helpers import ONE_AUDIT


class ThreadRecordingDispatcher(CeleryDispatcher):
    """The real dispatcher, noting which thread calls it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.threads: set[str] = set()

    def dispatch(self, job_ids: Sequence[str]) -> None:
        self.threads.add(threading.current_thread().name)
        super().dispatch(job_ids)


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(online: OnlineAuditor, serving: Serving, n: int, prefix: str) -> list[Any]:
    answers = []
    for i in range(n):
        state = serving.graph.invoke(
            {"messages": [("user", question(i))]},
            {"configurable": {"thread_id": f"{prefix}-{i}"}, "callbacks": [online.handler]},
        )
        answers.append(state["messages"][-1].content)
    return answers


def threads_of(serving: Serving, online: OnlineAuditor) -> tuple[list[Trace], dict[str, list[str]]]:
    traces = [j.trace for j in online.jobs.list_jobs()]
    return traces, serving.threads(traces)


def test_sampled_runs_are_published_on_the_persister_thread_and_audited_once(
    serving: Serving, db: str, queue: str, make_workers: Any
) -> None:
    workers = make_workers(replay_delay=0.2)
    workers.start(2, concurrency=2)
    dispatcher = ThreadRecordingDispatcher(app=create_app(BROKER, queue=queue), jobs_url=db)
    online = OnlineAuditor(serving.graph, jobs=db, sample_rate=1.0, dispatcher=dispatcher, **ONE_AUDIT)
    try:
        serve(online, serving, 6, "served")
        assert online.force_flush(60)
        traces, before = threads_of(serving, online)
        wait_until(lambda: online.jobs.counts()[JobState.DONE] == 6, 120, "6 jobs done", workers.logs)
        assert dispatcher.stats.dispatched == 6 and online.stats.dispatch_errors == 0
        assert dispatcher.threads == {"ariadne-online-persist"}
        results = online.jobs.list_results()
        assert Counter(r.trace_id for r in results) == {t.trace_id: 1 for t in traces}
        assert serving.threads(traces) == before
    finally:
        online.shutdown(30, drain=False)
        dispatcher.close()


def test_an_unreachable_broker_never_fails_the_agent_and_loses_no_sampled_run(
    serving: Serving, db: str, queue: str, make_workers: Any
) -> None:
    dead = create_app(f"amqp://guest:guest@127.0.0.1:{closed_port()}//", queue=queue)
    dispatcher = ThreadRecordingDispatcher(app=dead, jobs_url=db)
    online = OnlineAuditor(
        serving.graph, jobs=db, sample_rate=1.0, dispatcher=dispatcher, tick_interval=0.2, **ONE_AUDIT
    )
    try:
        answers = serve(online, serving, 10, "outage")
        assert len(answers) == 10 and all(isinstance(a, str) and a for a in answers)
        assert online.force_flush(60)  # committed: acknowledged, although nothing could be published
        assert online.jobs.counts()[JobState.PENDING] == 10
        wait_until(lambda: online.stats.dispatch_errors >= 2, 30, "the dispatch failures counted")
        assert dispatcher.stats.dispatched == 0 and dispatcher.stats.failed >= 1
        assert dispatcher.threads == {"ariadne-online-persist"}
        traces, before = threads_of(serving, online)
        workers = make_workers(replay_delay=0.2)
        workers.start(2, concurrency=2)  # their sweeper publishes what the serving side could not
        wait_until(lambda: online.jobs.counts()[JobState.DONE] == 10, 120, "10 jobs done", workers.logs)
        results = online.jobs.list_results()
        assert Counter(r.trace_id for r in results) == {t.trace_id: 1 for t in traces}
        assert serving.threads(traces) == before
    finally:
        online.shutdown(30, drain=False)
        dispatcher.close()


def test_the_serving_sides_interventions_travel_with_each_job(
    serving: Serving, db: str, queue: str, make_workers: Any
) -> None:
    """``OnlineAuditor(interventions=...)`` on the serving side decides what each job's audit does,
    not the workers' ``--interventions`` (here the default, ``logic_flip``)."""
    workers = make_workers(replay_delay=0.1)
    workers.start(1, concurrency=2)
    dispatcher = CeleryDispatcher(app=create_app(BROKER, queue=queue), jobs_url=db)
    online = OnlineAuditor(
        serving.graph, jobs=db, sample_rate=1.0, dispatcher=dispatcher, interventions=["premise_negation"]
    )
    try:
        serve(online, serving, 3, "planned")
        assert online.force_flush(60)
        wait_until(lambda: online.jobs.counts()[JobState.DONE] == 3, 120, "3 jobs done", workers.logs)
        results = online.jobs.list_results()
        assert len(results) == 3
        assert {r.intervention_type for r in results} == {"premise_negation"}, [r.error for r in results]
    finally:
        online.shutdown(30, drain=False)
        dispatcher.close()
