"""The audit report's raw and calibrated rates, in JSON and Markdown."""

from __future__ import annotations

import re
from pathlib import Path

from ariadne_lc.calibration import analyze, apply_calibration
from ariadne_lc.records import AuditReport
from ariadne_lc.report import audit_document, audit_html, audit_markdown, load_report, write_audit_reports
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
    assert "model=scripted, critic=rule, scorer=answer, tau=0.8, lambda=10, gate=off, method=ariadne" in text
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


def _row(page: str) -> dict[str, str]:
    row = re.search(r'<tr data-link="thought-&gt;answer">(.*?)</tr>', page, flags=re.S)
    assert row is not None
    return dict(re.findall(r'<td class="([\w-]+)">(?:<[^>]*>)*([^<]*)', row.group(1)))


def test_the_verdict_row_carries_the_corrected_rate_beside_the_raw_one() -> None:
    page = audit_html(_calibrated())
    # v = 8/14 = 57%; pooled FA .35, M .35 -> (0.571 - 0.35) / 0.3 = 74%
    assert "<th>calibrated</th>" in page
    cells = _row(page)
    assert cells["rate"] == "57%" and cells["corrected"].endswith("%") and cells["corrected"] != "57%"
    assert "<th>calibrated</th>" not in audit_html(_report())  # no calibration: the raw rate alone


def test_no_information() -> None:
    items = [*audits("coupled", violations=6, n=10), *audits("bypass", violations=5, n=10)]  # FA + M >= 1
    calibrated = apply_calibration(_report(), analyze(items, CONFIG, n_resamples=50), CONFIG, n_resamples=50)
    assert _row(audit_html(calibrated))["corrected"] == "no information"
    assert "57% (calibrated: no information)" in audit_markdown(calibrated)


def test_load_report_reads_the_corrected_rates_back(tmp_path: Path) -> None:
    calibrated = _calibrated()
    paths = write_audit_reports(calibrated, tmp_path)
    loaded = load_report(paths["json"])
    assert loaded.corrected == calibrated.corrected and loaded.corrected_by_type == calibrated.corrected_by_type
    assert loaded.overall.violation_rate_ci == calibrated.overall.violation_rate_ci  # the same results, rebuilt
    assert load_report(tmp_path / "report.json").corrected is not None
