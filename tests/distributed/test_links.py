"""Links across the fleet: ``ariadne-lc worker --link`` reaches the worker's auditor, and the serving side's
``OnlineAuditor(links=...)`` travels with each job to whichever worker process claims it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ariadne_lc import links
from ariadne_lc.distributed import CeleryDispatcher, WorkerConfig, create_app
from ariadne_lc.distributed._needs import check_job_links, named_links
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.online import AuditPlan, JobState, OnlineAuditor, open_job_store
from ariadne_lc.trace import Trace
from tests.distributed.fleet import BROKER, Serving, database, wait_until
from tests.distributed.test_serving import serve

KINDS = ["logic_flip", "observation_swap"]


def test_a_worker_config_with_no_or_unknown_links_is_refused() -> None:
    for named in [("thought->nowhere",), ()]:
        with pytest.raises(ConfigurationError, match="links must name some of"):
            WorkerConfig(graph="tests.distributed.graph:build_graph", jobs_url="postgresql://x/y", links=named)  # type: ignore[arg-type]


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


def test_a_worker_refuses_to_start_while_jobs_name_a_link_it_has_not_registered(db: str) -> None:
    """A link the serving side registered by an import the worker lacks: one line at start-up naming it and what to
    do, not a failure inside each job's audit; once registered here, the worker starts."""
    jobs = open_job_store(db)
    spec = dataclasses.replace(links.THOUGHT_ANSWER, name="thought->verdict", evaluation_name="ariadne.verdict")
    with links.temporarily(spec):  # the serving side's process, which imports the module that registers it
        plan = AuditPlan(step="auto", interventions=("logic_flip",), links=("thought->verdict", "thought->answer"))
        jobs.add([Trace(trace_id="t-links", query="q")], sample_rate=1.0, plan=plan)
    assert named_links(db) == {"thought->verdict", "thought->answer"}
    with pytest.raises(ConfigurationError) as refused:
        check_job_links(db, graph="tests.distributed.graph:build_graph")
    said = str(refused.value)
    assert "jobs name links this worker does not know: thought->verdict (registered here: " in said
    assert "import that module from the --graph module" in said and "thought->answer," not in said.split("(")[0]
    with links.temporarily(spec):
        check_job_links(db, graph="tests.distributed.graph:build_graph")


def test_a_fresh_job_database_names_no_links() -> None:
    with database() as url:
        assert named_links(url) == set()
        check_job_links(url, graph="tests.distributed.graph:build_graph")
