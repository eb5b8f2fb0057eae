"""The runner on scripted models: the whole pipeline, its truth labels, its split, its resume."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.calibration.agents import routes_to_bypass
from ariadne_lc.calibration.decisive import answer_from_thought, question_kind
from ariadne_lc.calibration.records import CalibrationConfig, Method
from ariadne_lc.calibration.reference_run import reference_method
from ariadne_lc.calibration.runner import (
    DEFAULT_INTERVENTIONS,
    UNAUDITABLE,
    CalibrationRunner,
    counted,
    plan_jobs,
    split_queries,
)
from ariadne_lc.calibration.storage import RunManifest, audit_key, open_run
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import Trace

from .scripts import calibration_model, questions

PS = (0.0, 0.5, 1.0)


def _manifest() -> RunManifest:
    return RunManifest(
        config=CalibrationConfig(model="scripted", critic="rule", scorer="answer", tau=0.8, lam=0),
        seed=0,
        n_per_domain=8,
        domains=("math", "science"),
        ps=PS,
        interventions=DEFAULT_INTERVENTIONS,
        agents=("ground_truth", "natural"),
    )


def test_the_split_holds_out_half_of_each_domain() -> None:
    qs = questions(6, 4)
    splits = split_queries(qs)
    by = Counter((q.domain, splits[q.id]) for q in qs)
    assert by == {
        ("math", "calibrate"): 3,
        ("math", "validate"): 3,
        ("science", "calibrate"): 2,
        ("science", "validate"): 2,
    }
    jobs = plan_jobs(qs, ps=PS)
    for job in jobs:
        assert job.split == splits[job.query.id]
        assert (job.split == "calibrate") == (job.agent in ("coupled", "bypass"))
    with pytest.raises(ConfigurationError):
        plan_jobs(qs[:1])
    with pytest.raises(ConfigurationError):
        plan_jobs(qs, ps=(1.5,))


def test_the_whole_pipeline_labels_every_audit_with_its_truth(tmp_path: Path) -> None:
    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    qs = questions(8, 4)
    summary = CalibrationRunner(model, log, calls=calls).run(plan_jobs(qs, ps=PS))
    audits = log.audits()
    assert summary.audits_written == len(audits) and summary.model_calls == calls() > 0
    keys = [audit_key(a) for a in audits]
    assert len(keys) == len(set(keys))
    for a in audits:
        r = a.result
        if a.agent == "natural":
            assert a.truth is None and a.decisive_changed is None
            continue
        rate = {"coupled": 0.0, "bypass": 1.0}.get(a.agent, a.p)
        assert rate is not None
        assert a.truth == ("unfaithful" if routes_to_bypass(r.query, rate) else "faithful")
        if r.status != "scored":
            continue
        if a.truth == "unfaithful":  # a bypass audit never moves
            assert r.violation
        elif not r.control:  # a coupled audit moves exactly when the answer its thought implies moved
            kind = question_kind(r.query)
            assert r.intervened_thought is not None
            same = answer_from_thought(r.intervened_thought, kind) == answer_from_thought(r.original_thought, kind)
            assert r.violation is same
            if a.decisive_changed is False:
                assert r.violation
    flagged = Counter(
        (a.truth, a.result.violation) for a in audits if a.result.status == "scored" and not a.result.control
    )
    assert flagged[("faithful", False)] > 0 and flagged[("unfaithful", False)] == 0
    mixture = [a for a in audits if a.agent == "mixture" and a.p == 0.5]
    assert {a.truth for a in mixture} == {"faithful", "unfaithful"}


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    qs = questions(4, 2)
    jobs = plan_jobs(qs, ps=PS)
    model, calls = counted(calibration_model())
    first = CalibrationRunner(model, open_run(tmp_path, _manifest()), calls=calls, max_calls=7).run(jobs)
    assert first.stopped is not None
    partial = open_run(tmp_path, _manifest()).audits()
    model2, calls2 = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    second = CalibrationRunner(model2, log, calls=calls2).run(jobs)
    assert second.stopped is None and log.audits()[: len(partial)] == partial
    keys = [audit_key(a) for a in log.audits()]
    assert len(keys) == len(set(keys))
    # a complete run of the same jobs in a fresh directory writes exactly the same set of audits
    model3, calls3 = counted(calibration_model())
    fresh = open_run(tmp_path / "fresh", _manifest())
    CalibrationRunner(model3, fresh, calls=calls3).run(jobs)
    assert sorted(map(str, keys)) == sorted(str(audit_key(a)) for a in fresh.audits())
    # and running it again does nothing at all
    third = CalibrationRunner(model3, fresh, calls=calls3).run(jobs)
    assert third.audits_written == 0 and third.jobs_skipped == len(jobs)


def test_the_reference_method_audits_the_same_contradictions(tmp_path: Path) -> None:
    seen: list[tuple[str, str | None]] = []

    def reference(trace: Trace, ours: AuditResult) -> Sequence[tuple[Method, AuditResult]]:
        seen.append((ours.intervention_type, ours.intervened_thought))
        return [("reference_strict", ours), ("reference_lenient", ours)]

    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    CalibrationRunner(model, log, calls=calls, reference=reference).run(
        plan_jobs(questions(2), ps=(0.5,), natural=False)
    )
    methods = Counter(a.method for a in log.audits())
    assert methods["reference_strict"] == methods["reference_lenient"] == len(seen) > 0
    assert all(kind not in ("rerun", "paraphrase") and thought for kind, thought in seen)


def test_a_run_that_cannot_be_audited_is_recorded_once(tmp_path: Path) -> None:
    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    jobs = [j for j in plan_jobs(questions(2), ps=PS) if j.agent == "natural"]
    CalibrationRunner(model, log, calls=calls).run(jobs)
    assert [(a.agent, a.result.intervention_type, a.result.status) for a in log.audits()] == [
        ("natural", UNAUDITABLE, "failed")
    ]
    assert CalibrationRunner(model, log, calls=calls).run(jobs).audits_written == 0


def test_reference_method_runs_both_judges_on_our_contradiction() -> None:
    asked: list[str] = []
    inner = calibration_model()

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        asked.append(messages[-1].text)
        return inner.script(messages)

    run = reference_method(ScriptedChatModel(script=script), tau=0.8, lam=0)
    trace = Trace(trace_id="t", query=questions(1)[0].question, final_answer="Final Answer: 6")
    ours = AuditResult(
        trace_id="t",
        step_index=0,
        intervention_type="fact_reversal",
        status="scored",
        label="faithful",
        original_thought="There are 2 boxes. The answer is 2 * 3.",
        intervened_thought="There are 4 boxes. The answer is 4 * 5.",
    )
    results = dict(run(trace, ours))
    assert set(results) == {"reference_strict", "reference_lenient"}
    for r in results.values():
        assert r.intervention_type == "fact_reversal" and r.intervened_thought == ours.intervened_thought
        assert r.original_answer == "6" and r.trace_id == "t"
    # the re-prompt (which shows the intervened thought) is asked once and shared; each judge is asked once
    assert sum(ours.intervened_thought in text for text in asked) == 1 and len(asked) == 3


def test_report_only_analyses_a_stopped_run_without_a_model(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ariadne_lc.cli import app

    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    CalibrationRunner(model, log, calls=calls).run(plan_jobs(questions(6, 4), ps=PS, natural=False))
    result = CliRunner().invoke(app, ["calibrate", "--report-only", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "calibration.json").read_text())
    assert document["config"]["model"] == "scripted" and document["audits"] == len(log.audits())
    assert {p.name for p in tmp_path.iterdir()} >= {"calibration.md", "calibration.html", "audits.jsonl", "run.json"}
    missing = CliRunner().invoke(app, ["calibrate", "--report-only", "--output", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "holds no calibration run" in missing.output
