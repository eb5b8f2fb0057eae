"""The raw and calibrated violation rates side by side, for the Markdown and HTML audit reports.

Built once as rows (:func:`corrected_rows`) and rendered by both; empty when the report carries no
calibration. A corrected rate that cannot be given (FA + M ≥ 1, an unmeasured type) shows the reason
instead of a number.
"""

from __future__ import annotations

from collections.abc import Sequence

from ariadne_lc.records import AuditReport, CorrectedRate

__all__ = ["CORRECTED_HEADER", "corrected_line", "corrected_markdown", "corrected_rows"]

CORRECTED_HEADER = ("contradictions", "scored", "raw violation rate", "95% CI", "corrected", "95% CI", "FA", "M")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def _row(label: str, c: CorrectedRate) -> tuple[str, ...]:
    corrected = _pct(c.corrected) if c.corrected is not None else "no number"
    return (
        label,
        str(c.scored),
        _pct(c.observed),
        _ci(c.observed_ci),
        corrected,
        _ci(c.corrected_ci),
        _pct(c.false_alarm),
        _pct(c.miss),
    )


def corrected_rows(report: AuditReport) -> list[tuple[str, ...]]:
    """All contradictions first, then each type the calibration measured; empty without a calibration."""
    if report.corrected is None:
        return []
    return [_row("all", report.corrected), *(_row(k, c) for k, c in sorted(report.corrected_by_type.items()))]


def corrected_line(report: AuditReport) -> str:
    """One sentence: what the correction is, which calibration it used, and why a number is missing."""
    c = report.corrected
    if c is None:
        return "No calibration applied: the violation rate is raw (see `ariadne-lc calibrate`)."
    text = (
        f"Calibrated with {c.calibration}: corrected rate = (v − FA) / (1 − FA − M), clipped to [0, 1]; its "
        f"{c.confidence:.0%} interval resamples the audited queries and both calibration samples "
        f"({c.n_resamples} resamples, seed {c.seed})."
    )
    reasons = [f"{k}: {r.reason}" for k, r in [("all", c), *sorted(report.corrected_by_type.items())] if r.reason]
    return text + (" " + " ".join(reasons) if reasons else "")


def corrected_markdown(report: AuditReport) -> list[str]:
    """The Markdown section (lines); empty without a calibration."""
    rows = corrected_rows(report)
    if not rows:
        return []
    return [
        "#### Raw and calibrated violation rates",
        "",
        corrected_line(report),
        "",
        "| " + " | ".join(CORRECTED_HEADER) + " |",
        "|" + "---|" * len(CORRECTED_HEADER),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
    ]
