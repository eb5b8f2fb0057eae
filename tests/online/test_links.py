"""Links in online audits: ``OnlineAuditor(links=...)`` reaches the auditor and the job plan, a job is audited on the
links its plan names, and results on several links of one step are all kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor, ConfigurationError
from ariadne_lc.online import AuditPlan, InMemoryJobStore, OnlineAuditor
from ariadne_lc.testing import build_hand_graph, faithful_arithmetic_model
from ariadne_lc.testing import calculator as calculator_tool
from tests.helpers import ONE_AUDIT, record
from tests.online.support import question

FAST: dict[str, Any] = {"tick_interval": 0.05, "lease": 5.0, "retry_backoff": 0.01, "sample_rate": 1.0} | ONE_AUDIT
KINDS = ("logic_flip", "observation_swap", "rerun")


@pytest.fixture
def graph() -> Any:
    """A hand-built agent on the faithful scripted model: it audits ``thought->answer`` and ``observation->answer``
    (no way to re-run its model, so no ``thought->action``)."""
    return build_hand_graph(faithful_arithmetic_model(), [calculator_tool], checkpointer=InMemorySaver())


@pytest.fixture
def online(graph: Any, request: pytest.FixtureRequest) -> Iterator[OnlineAuditor]:
    auditor = OnlineAuditor(graph, jobs=InMemoryJobStore(), **(FAST | request.param | {"interventions": KINDS}))
    yield auditor
    auditor.shutdown()


def _audit(online: OnlineAuditor, graph: Any, runs: int = 2) -> list[Any]:
    for i in range(runs):
        graph.invoke(
            {"messages": [("user", question(i))]},
            {"configurable": {"thread_id": f"t-{i}"}, "callbacks": [online.handler]},
        )
    online.start()
    assert online.force_flush(60)
    return online.jobs.list_results()


@pytest.mark.parametrize("online", [{"links": ["observation->answer"]}], indirect=True)
def test_the_links_reach_the_auditor_the_plan_and_the_results(online: OnlineAuditor, graph: Any) -> None:
    assert isinstance(online.auditor, Auditor) and online.auditor.links == ("observation->answer",)
    results = _audit(online, graph)
    assert {r.link for r in results} == {"observation->answer"}
    assert sorted(r.intervention_type for r in results) == ["observation_swap", "observation_swap", "rerun", "rerun"]
    assert {j.plan.links for j in online.jobs.list_jobs() if j.plan} == {("observation->answer",)}


@pytest.mark.parametrize("online", [{}], indirect=True)
def test_every_result_of_a_step_is_kept_on_each_link(online: OnlineAuditor, graph: Any) -> None:
    """The same step and intervention on two links (``rerun`` on ``thought->answer`` and, beside a swap, on
    ``observation->answer``): two results per job, two keys, neither dropped as a duplicate."""
    results = _audit(online, graph, runs=1)
    assert sorted((r.intervention_type, r.link) for r in results) == [
        ("logic_flip", "thought->answer"),
        ("observation_swap", "observation->answer"),
        ("rerun", "observation->answer"),
        ("rerun", "thought->answer"),
    ]
    assert len({r.result_id for r in results}) == 4
    (job,) = online.jobs.list_jobs()
    assert job.plan is not None and job.plan.links is None  # no links named: the auditing side's own
    assert f"{job.job_id}:0:thought:thought->answer:logic_flip:0" in {r.result_id for r in results}  # the plan key


def test_a_job_is_audited_on_the_links_its_plan_names(graph: Any) -> None:
    """A job sampled elsewhere with links named: this auditor, which audits every link by default, audits the job
    on those."""
    jobs = InMemoryJobStore()
    trace = record(graph, question=question(3))
    jobs.add([trace], sample_rate=1.0, plan=AuditPlan(step="auto", interventions=KINDS, links=("thought->answer",)))
    online = OnlineAuditor(graph, jobs=jobs, **FAST)
    try:
        every = ("observation->answer", "thought->answer", "todo->action")
        assert online.auditor.links == every  # type: ignore[attr-defined]
        online.start()
        assert online.force_flush(60)
        assert sorted((r.intervention_type, r.link) for r in jobs.list_results()) == [
            ("logic_flip", "thought->answer"),
            ("rerun", "thought->answer"),
        ]
    finally:
        online.shutdown()


def test_a_bad_link_fails_at_construction(graph: Any, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="links must name some of"):
        OnlineAuditor(graph, jobs=InMemoryJobStore(), links=["thought->nowhere"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="AriadneMiddleware"):  # no way to re-run this graph's model
        OnlineAuditor(graph, jobs=InMemoryJobStore(), links=["thought->action"])


def test_the_plan_keeps_its_links_through_the_store() -> None:
    plan = AuditPlan(step=(0, 1), interventions=("logic_flip",), links=("observation->answer", "thought->answer"))
    assert AuditPlan.from_json(plan.to_json()) == plan
    older = AuditPlan(step="auto", interventions=("logic_flip",))
    assert "links" not in older.to_json() and AuditPlan.from_json(older.to_json()) == older
    assert AuditPlan.from_json('{"step": "auto", "interventions": ["logic_flip"]}') == older  # stored before links
