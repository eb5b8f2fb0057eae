"""The audit report's raw and calibrated rates, in JSON and Markdown."""

from __future__ import annotations

from ariadne_lc.calibration import analyze, apply_calibration
from ariadne_lc.records import AuditReport
from ariadne_lc.report import audit_document, audit_markdown
from ariadne_lc.stats import build_report
from tests.calibration.builders import CONFIG, audits, result


def _report() -> AuditReport:
    results = [result(violation=i < 6, trace_id=f"t{i}") for i in range(10)]
    results += [result(violation=i < 2, trace_id=f"f{i}", kind="fact_reversal") for i in range(4)]
    return build_report(results, n_resamples=200)


def _calibrated() -> AuditReport:
    items = [*audits("coupled", violations=1, n=10), *audits("bypass", violations=8, n=10)]  # FA .1, M .2
    items += [*audits("coupled", violations=6, n=10, kind="fact_reversal", prefix="cf")]
    items += [*audits("bypass", violations=5, n=10, kind="fact_reversal", prefix="bf")]  # FA .6, M .5
    return apply_calibration(_report(), analyze(items, CONFIG, n_resamples=100), CONFIG, n_resamples=300)


def test_markdown_shows_raw_and_corrected_side_by_side() -> None:
    text = audit_markdown(_calibrated())
    assert "## Raw and calibrated violation rates" in text
    assert "model=scripted, critic=rule, scorer=answer, tau=0.8, lambda=10, method=ariadne" in text
    # logic_flip: v = 0.6, corrected (0.6 - 0.1) / 0.7 = 71%; fact_reversal: FA + M >= 1, no number
    assert "| logic_flip | 10 | 60% |" in text and "| 71% |" in text
    assert "| fact_reversal | 4 | 50% |" in text and "| no number |" in text
    assert "fact_reversal: FA + M = 0.60 + 0.50 >= 1" in text


def test_json_document_carries_the_corrected_rates() -> None:
    document = audit_document(_calibrated())
    corrected = document["aggregate"]["corrected"]
    assert corrected["observed"] == 8 / 14 and corrected["informative"] is True
    assert document["aggregate"]["corrected_by_type"]["fact_reversal"]["corrected"] is None


def test_without_calibration_there_is_no_section() -> None:
    report = _report()
    assert report.corrected is None and "calibrated" not in audit_markdown(report)
    assert audit_document(report)["aggregate"]["corrected"] is None
