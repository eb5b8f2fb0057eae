"""Links across the fleet: ``ariadne-lc worker --link`` reaches the worker's auditor, and the serving side's
``OnlineAuditor(links=...)`` travels with each job to whichever worker process claims it."""

from __future__ import annotations

from typing import Any

import pytest

from ariadne_lc.distributed import CeleryDispatcher, WorkerConfig, create_app
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.online import JobState, OnlineAuditor
from tests.distributed.fleet import BROKER, Serving, wait_until
from tests.distributed.test_serving import serve

KINDS = ["logic_flip", "observation_swap"]


def test_a_worker_config_with_no_or_unknown_links_is_refused() -> None:
    for links in [("thought->nowhere",), ()]:
        with pytest.raises(ConfigurationError, match="links must name some of"):
            WorkerConfig(graph="tests.distributed.graph:build_graph", jobs_url="postgresql://x/y", links=links)  # type: ignore[arg-type]


def _audited(serving: Serving, db: str, queue: str, workers: Any, **online: Any) -> set[tuple[str, str]]:
    dispatcher = CeleryDispatcher(app=create_app(BROKER, queue=queue), jobs_url=db)
    auditor = OnlineAuditor(
        serving.graph, jobs=db, sample_rate=1.0, dispatcher=dispatcher, interventions=KINDS, **online
    )
    try:
        serve(auditor, serving, 2, "linked")
        assert auditor.force_flush(60)
        wait_until(lambda: auditor.jobs.counts()[JobState.DONE] == 2, 120, "2 jobs done", workers.logs)
        results = auditor.jobs.list_results()
        assert all(r.status == "scored" for r in results), [r.error for r in results]
        assert all(r.input_checked for r in results)  # each worker's replay gave the model the recorded input
        return {(r.intervention_type, r.link) for r in results}
    finally:
        auditor.shutdown(30, drain=False)
        dispatcher.close()


def test_the_workers_own_links_audit_jobs_stored_without_any(
    serving: Serving, db: str, queue: str, make_workers: Any
) -> None:
    workers = make_workers(replay_delay=0.0)
    workers.start(1, concurrency=2, extra=["--link", "observation->answer"])
    assert _audited(serving, db, queue, workers) == {("observation_swap", "observation->answer")}


def test_the_serving_sides_links_travel_with_each_job(serving: Serving, db: str, queue: str, make_workers: Any) -> None:
    """The workers audit every link they can (no ``--link``); the jobs name ``thought->answer``: only that."""
    workers = make_workers(replay_delay=0.0)
    workers.start(1, concurrency=2)
    assert _audited(serving, db, queue, workers, links=["thought->answer"]) == {("logic_flip", "thought->answer")}
