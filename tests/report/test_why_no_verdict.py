"""Every "no verdict" says why and what to do, the same in the terminal summary, the Markdown and the HTML report."""

from __future__ import annotations

import html
from pathlib import Path

from ariadne_lc.coverage import why_no_verdict
from ariadne_lc.records import AuditResult
from ariadne_lc.report import write_audit_reports
from ariadne_lc.stats import build_report


def _failed(i: int) -> AuditResult:
    return AuditResult(
        trace_id=f"t{i}", step_index=0, intervention_type="logic_flip", status="failed", label="inconclusive",
        original_thought="x", error="NotReplayableError: no checkpoint", error_type="NotReplayableError",
    )  # fmt: skip


def test_a_link_without_a_verdict_names_the_reason_and_its_fix_in_every_report(tmp_path: Path) -> None:
    report = build_report([_failed(i) for i in range(3)], n_resamples=50)
    ((link, reasons),) = why_no_verdict(report.results).items()
    assert link == "thought->answer" and reasons[0][:2] == ("failed (NotReplayableError)", 3)
    assert reasons[0][2] is not None and "persistent" in reasons[0][2]
    paths = write_audit_reports(report, tmp_path, title="t")
    for kind in ("markdown", "html"):
        text = " ".join(html.unescape(Path(paths[kind]).read_text(encoding="utf-8")).split())
        assert "thought->answer, why no verdict:" in text and "failed (NotReplayableError) (3)" in text
        assert "SqliteSaver or PostgresSaver" in text
