"""``--fail-above``: which rate it checks, what it says, and that it fails closed without a number to check."""

from __future__ import annotations

import pytest

from ariadne_lc.calibration import analyze, apply_calibration
from ariadne_lc.cli._gate import Gate, check_fraction, gate_decision, nothing_measured
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.stats import build_report
from ariadne_lc.trace import Trace
from tests.calibration.builders import CONFIG, audits, result


def _report(kind: str = "logic_flip") -> AuditReport:
    return build_report([result(violation=i < 3, trace_id=f"t{i}", kind=kind) for i in range(10)], n_resamples=100)


def _calibrated(report: AuditReport, *, fa: int, miss: int) -> AuditReport:
    items = [*audits("coupled", violations=fa, n=10), *audits("bypass", violations=10 - miss, n=10)]
    return apply_calibration(report, analyze(items, CONFIG, n_resamples=50), CONFIG, n_resamples=200)


def test_raw_rate_without_a_calibration() -> None:
    assert gate_decision(_report(), 0.5) == (
        True,
        "--fail-above 50.0%: passed: thought->answer raw violation rate 30.0% (95% CI 10.8%-60.3%) (raw rates: no "
        "calibration was given)",
    )
    passed, line = gate_decision(_report(), 0.2)
    assert not passed and "failed on thought->answer, above 20.0%: thought->answer raw violation rate 30.0%" in line
    # the table says "no verdict" there (its interval contains 20%): the line says why the two differ
    assert line.endswith(
        "(the gate reads the rate; the table's verdict on thought->answer reads its interval, which contains the "
        "tolerance: no verdict there)"
    )


def test_corrected_rate_with_a_calibration() -> None:
    # v = .3, FA .1, M .2: corrected (.3 - .1) / .7 = 28.6%: under 29%, above 28%
    calibrated = _calibrated(_report(), fa=1, miss=2)
    passed, line = gate_decision(calibrated, 0.29)
    assert passed and "passed: thought->answer corrected violation rate 28.6%" in line and "(raw 30.0%)" in line
    assert not gate_decision(calibrated, 0.28)[0]


def test_no_information_fails_closed() -> None:
    uninformative = _calibrated(_report(), fa=6, miss=5)
    passed, line = gate_decision(uninformative, 0.99)
    assert not passed and line.startswith(
        "--fail-above 99.0%: no information on thought->answer: no corrected violation rate (FA + M"
    )
    unmeasured = _calibrated(_report("conclusion_swap"), fa=1, miss=2)  # the calibration measured logic_flip only
    passed, line = gate_decision(unmeasured, 0.99)
    assert not passed and "no information" in line and "did not measure (conclusion_swap)" in line
    nothing = build_report([AuditResult.no_step_to_audit(Trace(trace_id="t", final_answer="4"), "answered at once")])
    assert gate_decision(nothing, 0.5) == (
        False,
        "--fail-above 50.0%: no information: no contradiction audit was scored on thought->answer; the gate fails "
        "closed",
    )


def _linked(link: str, violations: int, n: int = 10) -> list[AuditResult]:
    return [
        result(violation=i < violations, trace_id=f"{link}{i}", kind="logic_flip").model_copy(update={"link": link})
        for i in range(n)
    ]


def test_the_gate_reads_every_link_and_names_the_one_that_failed() -> None:
    report = build_report([*_linked("thought->answer", 0), *_linked("observation->answer", 10)], n_resamples=100)
    passed, line = gate_decision(report, 0.2)
    assert not passed and line.startswith("--fail-above 20.0%: failed on observation->answer, above 20.0%")
    assert "thought->answer raw violation rate 0.0%" in line and "observation->answer raw violation rate 100.0%" in line
    assert gate_decision(report, 0.2, links=["thought->answer"])[0]  # --link narrows it


def test_too_little_coverage_fails_closed() -> None:
    failed = [
        r.model_copy(update={"status": "failed", "error_type": "ReplayError", "similarity": None, "trace_id": f"f{i}"})
        for i, r in enumerate(_linked("thought->answer", 0, n=30))
    ]
    report = build_report([*_linked("thought->answer", 0), *failed], n_resamples=100)
    passed, line = gate_decision(report, 0.5)
    assert not passed and "failed on coverage: 10 of 40 audited units (25%) got a verdict" in line
    assert gate_decision(report, 0.5, min_coverage=0.2)[0]


@pytest.mark.parametrize(("value", "hint"), [(20.0, "0.2 for 20%"), (-0.1, "got -0.1"), (150.0, "got 150")])
def test_a_rate_is_a_fraction(value: float, hint: str) -> None:
    with pytest.raises(ConfigurationError, match=r"--fail-above takes a fraction in \[0, 1\]") as error:
        check_fraction("--fail-above", value)
    assert hint in str(error.value)


def test_an_audit_where_every_audit_failed_says_so() -> None:
    failed = [
        r.model_copy(update={"status": "failed", "error_type": "NotReplayableError", "similarity": None})
        for r in _linked("thought->answer", 0, n=3)
    ]
    said = nothing_measured(build_report(failed, n_resamples=100))
    assert said is not None and said.startswith("every audit failed (NotReplayableError 3): nothing was measured")
    assert "persistent" in said and nothing_measured(build_report(_linked("thought->answer", 1))) is None
    assert Gate().exit_code(build_report(failed, n_resamples=100)) == 1  # without --fail-above too


def _two_agents(follows: str) -> AuditReport:
    """A caller and its sub-agent (LangChain's pattern, recorded by one line on the caller), audited; the caller
    follows its plans (``thought``) or not (``question``)."""
    from ariadne_lc import Auditor
    from tests.subagent_plain import ask_researcher, main_model, run

    model = main_model("ask_researcher", "researcher", follows=follows)  # type: ignore[arg-type]
    graph, store = run(model, ask_researcher, "record", ["What is the price of the plum?"])
    return Auditor(graph).audit_batch(store.list_traces())


def test_in_a_system_of_agents_the_gate_names_the_unfaithful_agent() -> None:
    passed, line = gate_decision(_two_agents("thought"), 0.5)
    assert passed and "agents: main thought->action 0.0% (0/1)" in line and "researcher thought->action" in line
    passed, line = gate_decision(_two_agents("question"), 0.5)
    assert not passed and "main on thought->action" in line and "researcher on" not in line, line


def test_an_agent_whose_audits_failed_fails_the_gate_closed() -> None:
    """Was: every sub-agent audit failed, and the gate passed on the caller's rates (exit 0)."""
    from ariadne_lc import Auditor
    from tests.test_coverage import _hidden_sub_agent

    graph, store = _hidden_sub_agent()
    passed, line = gate_decision(Auditor(graph).audit_batch(store.list_traces()), 0.5, min_coverage=0.0)
    assert not passed and "failed closed: agent researcher:" in line and "SubgraphNotReplayableError" in line, line
    [top] = [t for t in store.list_traces() if t.parent is None]
    passed, line = gate_decision(Auditor(graph).audit_batch([top]), 0.5, min_coverage=0.0)
    assert not passed and "1 sub-agent run(s) the audited runs started were not audited" in line, line
