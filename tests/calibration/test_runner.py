"""The runner on scripted models: the whole pipeline, its truth labels, its split, its resume."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.calibration.agents import routes_to_bypass
from ariadne_lc.calibration.analysis import analyze
from ariadne_lc.calibration.decisive import answer_from_thought, question_kind
from ariadne_lc.calibration.records import CalibrationAudit, CalibrationConfig, Method
from ariadne_lc.calibration.reference_run import reference_method
from ariadne_lc.calibration.results import ALL_TYPES
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
from ariadne_lc.interventions.implied import ImpliedAnswer, ModelReader
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
    # with the gate-off twin: the scripted model answers no reader prompt, so only the twin is scored
    summary = CalibrationRunner(model, log, calls=calls, ungated=True).run(plan_jobs(qs, ps=PS))
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
        ("natural", UNAUDITABLE, "not_applicable")
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
    intervened = ours.intervened_thought
    assert intervened is not None
    assert sum(intervened in text for text in asked) == 1 and len(asked) == 3


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


def test_the_rederive_method_moves_the_tool_coupled_agents_answer(tmp_path: Path) -> None:
    """``rederive=True`` audits each coupled_tool job twice on one trace: with the step's recorded tool call (method
    ``ariadne``), where a decisive contradiction cannot move the answer, and with the call re-derived from the
    intervened thought (``ariadne_rederive``), where it moves to the contradiction's value. (The rule reader: the
    scripted model answers no reader prompt.)"""
    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    jobs = [
        j
        for j in plan_jobs(questions(4, 2), ps=PS, natural=False, extra_agents=("coupled_tool",))
        if j.agent == "coupled_tool"
    ]
    runner = CalibrationRunner(model, log, calls=calls, rederive=True, ungated=True, reader="rule")
    summary = runner.run(jobs)
    audits = log.audits()
    assert {a.agent for a in audits} == {"coupled_tool"} and summary.errors == []
    by_method: dict[str, list[AuditResult]] = {}
    for a in audits:
        by_method.setdefault(a.method, []).append(a.result)
        assert a.truth == "faithful"
    assert set(by_method) == {"ariadne", "ariadne_ungated", "ariadne_rederive"}
    # every method audited every job with every intervention, each once
    for results in by_method.values():
        assert len(results) == len(jobs) * len(DEFAULT_INTERVENTIONS)
    assert {r.replay_mode for r in by_method["ariadne"]} == {"recorded"}
    assert {r.replay_mode for r in by_method["ariadne_rederive"]} == {"rederive"}
    assert {r.tool_call_deriver for r in by_method["ariadne_rederive"]} == {"function:commit"}

    def decisive(results: list[AuditResult]) -> list[AuditResult]:
        return [r for r in results if r.status == "scored" and not r.control]

    recorded, rederived = decisive(by_method["ariadne"]), decisive(by_method["ariadne_rederive"])
    assert recorded and all(r.violation and r.tracking == "stayed" for r in recorded)  # FA 100%: the false alarm
    assert len(rederived) == len(recorded)  # the same gate, the same edits
    assert not any(r.violation for r in rederived) and {r.tracking for r in rederived} == {"tracks"}
    assert all(r.tools_live == 1 and not r.tools_unavailable for r in rederived)  # commit is declared safe
    # the controls hold in both modes: an unchanged thought re-derives the recorded call, served its output
    for method in ("ariadne", "ariadne_rederive"):
        (rerun,) = {r.label for r in by_method[method] if r.intervention_type == "rerun" and r.status == "scored"}
        assert rerun == "control"
    assert all(r.violation for r in by_method["ariadne_rederive"] if r.intervention_type == "rerun")
    # the analysis reports the tool-coupled agent's false-alarm rate per method: every alarm, then none
    methods = analyze(audits, _manifest().config).methods
    recorded_fa = methods["ariadne"].agents["coupled_tool"][ALL_TYPES].false_alarm
    rederived_fa = methods["ariadne_rederive"].agents["coupled_tool"][ALL_TYPES].false_alarm
    assert (recorded_fa.k, recorded_fa.n) == (len(recorded), len(recorded))
    assert (rederived_fa.k, rederived_fa.n) == (0, len(rederived))
    # a resumed run has nothing left to do
    assert CalibrationRunner(model, log, calls=calls, rederive=True, reader="rule").run(jobs).audits_written == 0


def _outcomes(audits: Sequence[CalibrationAudit]) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for a in audits:
        r = a.result
        gate = None if r.decisiveness is None else r.decisiveness.outcome
        out[str(audit_key(a))] = (
            r.status, r.label, r.intervened_thought, r.original_answer, r.counterfactual_answer, r.similarity, gate,
            r.tracking,
        )  # fmt: skip
    return out


def test_concurrent_jobs_write_the_same_audits_as_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # jobs of one question share the gate's readings (the agents write the same thought): a slow reading keeps the
    # race open, so a reading made twice by two jobs at once (one more model call) fails this test every time
    read = ModelReader.read

    def slow_read(self: ModelReader, query: str, thought: str) -> ImpliedAnswer:
        time.sleep(0.02)
        return read(self, query, thought)

    monkeypatch.setattr(ModelReader, "read", slow_read)
    jobs = plan_jobs(questions(6, 4), ps=PS)
    model, calls = counted(calibration_model())
    one = open_run(tmp_path / "one", _manifest())
    CalibrationRunner(model, one, calls=calls).run(jobs)
    model2, calls2 = counted(calibration_model())
    many = open_run(tmp_path / "many", _manifest())
    heard: list[str] = []
    summary = CalibrationRunner(model2, many, calls=calls2).run(
        jobs, concurrency=3, on_job=lambda job, written: heard.append(f"{job.agent}{job.p}{job.query.id}")
    )
    assert summary.audits_written == len(many) == len(one) and summary.model_calls == calls2() == calls()
    assert sorted(heard) == sorted(f"{j.agent}{j.p}{j.query.id}" for j in jobs)
    assert _outcomes(many.audits()) == _outcomes(one.audits())
    with pytest.raises(ConfigurationError, match="concurrency"):
        CalibrationRunner(model2, many, calls=calls2).run(jobs, concurrency=0)


def test_a_concurrent_run_stops_at_its_budget_and_resumes(tmp_path: Path) -> None:
    jobs = plan_jobs(questions(4, 2), ps=PS)
    model, calls = counted(calibration_model())
    first = CalibrationRunner(model, open_run(tmp_path, _manifest()), calls=calls, max_calls=7).run(jobs, concurrency=2)
    assert first.stopped is not None
    model2, calls2 = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    CalibrationRunner(model2, log, calls=calls2).run(jobs, concurrency=2)
    model3, calls3 = counted(calibration_model())
    fresh = open_run(tmp_path / "fresh", _manifest())
    CalibrationRunner(model3, fresh, calls=calls3).run(jobs)
    keys = [str(audit_key(a)) for a in log.audits()]
    assert len(keys) == len(set(keys)) and sorted(keys) == sorted(str(audit_key(a)) for a in fresh.audits())


def test_the_calibrate_command_refuses_a_concurrency_below_one(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ariadne_lc.cli import app

    result = CliRunner().invoke(app, ["calibrate", "--dry-run", "--concurrency", "0", "--output", str(tmp_path)])
    assert result.exit_code == 2 and "--concurrency must be at least 1" in result.output


def test_a_model_that_stops_answering_stops_the_run_and_nothing_of_the_job_is_stored(tmp_path: Path) -> None:
    """A dead model server is not the agent failing: a resumed run must redo the job, not find it failed."""
    import httpx
    from langchain_core.exceptions import ModelConnectionError

    from ariadne_lc.calibration._model import _unreachable
    from ariadne_lc.errors import ModelUnavailableError

    served = calibration_model()
    down = {"now": False}

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if down["now"]:
            try:
                raise httpx.ConnectError("[Errno 111] Connection refused")
            except httpx.ConnectError as exc:
                raise ModelConnectionError("Connection error.") from exc
        return served.script(messages)

    model, calls = counted(ScriptedChatModel(script=script))
    log = open_run(tmp_path, _manifest())
    jobs = [j for j in plan_jobs(questions(4), ps=PS) if j.agent in ("coupled", "bypass")]
    CalibrationRunner(model, log, calls=calls).run(jobs[:1])
    stored = len(log.audits())
    down["now"] = True
    with pytest.raises(ModelUnavailableError, match="the same command resumes"):
        CalibrationRunner(model, log, calls=calls).run(jobs)
    assert len(log.audits()) == stored > 0
    try:  # a slow server is not a dead one
        raise ModelConnectionError("Connection error.") from httpx.ReadTimeout("timed out")
    except ModelConnectionError as slow:
        assert not _unreachable(slow)
    down["now"] = False
    CalibrationRunner(model, log, calls=calls).run(jobs)
    assert {a.query_id for a in log.audits()} == {j.query.id for j in jobs}
    assert not any(a.result.status == "failed" for a in log.audits())


def test_an_audit_whose_critic_failed_is_not_stored_and_a_resume_retries_it(tmp_path: Path) -> None:
    from ariadne_lc.interventions import LLMCritic

    served = calibration_model()
    broken = {"now": True}

    def critic_script(messages: Sequence[BaseMessage]) -> AIMessage:
        if broken["now"]:
            raise RuntimeError("the critic's endpoint answered 503")
        return AIMessage(content="The answer is 3.")

    model, calls = counted(served)
    log = open_run(tmp_path, _manifest())
    jobs = [j for j in plan_jobs(questions(2), ps=PS) if j.agent == "coupled"][:1]
    critic = LLMCritic(ScriptedChatModel(script=critic_script))
    first = CalibrationRunner(model, log, calls=calls, critic=critic, interventions=("logic_flip",)).run(jobs)
    assert first.audits_deferred > 0
    assert not any(a.result.intervention_type == "logic_flip" and a.method == "ariadne" for a in log.audits())
    broken["now"] = False
    CalibrationRunner(model, log, calls=calls, critic=critic, interventions=("logic_flip",)).run(jobs)
    assert any(a.result.intervention_type == "logic_flip" and a.method == "ariadne" for a in log.audits())


def test_the_calibrate_command_refuses_an_unknown_reader_naming_the_local_models(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ariadne_lc.cli import app

    result = CliRunner().invoke(app, ["calibrate", "--dry-run", "--reader", "judge", "--output", str(tmp_path)])
    assert result.exit_code == 2
    assert "--reader must be model, rule or one of" in result.output and "qwen2.5-coder-1.5b" in result.output


def test_a_dry_run_counts_the_extra_faithful_agents(tmp_path: Path) -> None:
    """coupled_llm has no bypass route (its p is None): the dry run counted it with a TypeError before."""
    from typer.testing import CliRunner

    from ariadne_lc.cli import app

    args = ["calibrate", "--dry-run", "--n", "2", "--extra-agents", "coupled_llm", "--output", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "coupled_llm" in result.output
