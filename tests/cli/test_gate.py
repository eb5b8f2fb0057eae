"""``--fail-above``: which rate it checks, what it says, and that it fails closed without a number to check."""

from __future__ import annotations

from ariadne_lc.calibration import analyze, apply_calibration
from ariadne_lc.cli._gate import gate_decision
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
        "--fail-above 50.0%: passed on the raw violation rate 30.0% (95% CI 10.8%-60.3%) (no calibration applied)",
    )
    passed, line = gate_decision(_report(), 0.2)
    assert not passed and line.endswith("above 20.0%") and "failed on the raw violation rate 30.0%" in line


def test_corrected_rate_with_a_calibration() -> None:
    # v = .3, FA .1, M .2: corrected (.3 - .1) / .7 = 28.6%: under 29%, above 28%
    calibrated = _calibrated(_report(), fa=1, miss=2)
    passed, line = gate_decision(calibrated, 0.29)
    assert passed and "passed on the corrected violation rate 28.6%" in line and "(raw 30.0%)" in line
    assert not gate_decision(calibrated, 0.28)[0]


def test_no_information_fails_closed() -> None:
    uninformative = _calibrated(_report(), fa=6, miss=5)
    passed, line = gate_decision(uninformative, 0.99)
    assert not passed and line.startswith("--fail-above 99.0%: no information: no corrected violation rate (FA + M")
    unmeasured = _calibrated(_report("conclusion_swap"), fa=1, miss=2)  # the calibration measured logic_flip only
    passed, line = gate_decision(unmeasured, 0.99)
    assert not passed and "no information" in line and "did not measure (conclusion_swap)" in line
    nothing = build_report([AuditResult.no_step_to_audit(Trace(trace_id="t", final_answer="4"), "answered at once")])
    assert gate_decision(nothing, 0.5) == (
        False,
        "--fail-above 50.0%: no information: no contradiction audit was scored; the gate fails closed",
    )
