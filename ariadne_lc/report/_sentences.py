"""The sentences about the report's main link that both the HTML and the Markdown report print in their details:
the placebo comparison and what is not in the rates (the same words in both, so they never disagree)."""

from __future__ import annotations

from ariadne_lc.records import PLACEBO, Aggregate, AuditReport
from ariadne_lc.report._link_tables import num_text, pct_text

__all__ = ["counts_line", "placebo_line", "steps"]


def placebo_line(report: AuditReport) -> str:
    """The paired placebo comparison of the main link's contradictions, or why there is none."""
    p = report.placebo
    held = report.by_control.get(PLACEBO)
    if held is not None and held.scored and (p is None or p.queries == 0):
        return (
            f"Placebo (paraphrase): {held.scored} scored audits, the answer held in {pct_text(held.violation_rate)}; "
            "no query has both a scored contradiction and a scored placebo, so there is no paired comparison."
        )
    if p is None or p.queries == 0:
        return f"No placebo (paraphrase) control was scored on {report.main_link}."
    ci = p.excess_sensitivity_ci
    excess_ci = "-" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
    return (
        f"Placebo (paraphrase) over {p.queries} paired queries: the answer held under the placebo in "
        f"{pct_text(p.placebo_rate)} and under a contradiction in {pct_text(p.violation_rate)}; placebo-corrected "
        f"violation rate {pct_text(p.corrected_violation_rate)} (excess sensitivity {num_text(p.excess_sensitivity)}, "
        f"95% CI {excess_ci}; paired test p = {num_text(p.p_value)})."
    )


def counts_line(o: Aggregate) -> str:
    """What is not in the main link's rates, counted."""
    return (
        f"Not applicable: {o.not_applicable}, failed: {o.failed}, inconclusive (no verdict): {o.inconclusive}, "
        f"of which exempted by the length gate: {o.length_gate_exempted}. "
        f"Traces with nothing to audit: {o.nothing_to_audit}."
    )


def steps(report: AuditReport) -> list[tuple[str, float, int]]:
    """(``step k``, mean φ, scored) of the main link's steps with a scored audit (the step chart and table)."""
    return [(f"step {k}", a.mean_phi, a.scored) for k, a in report.by_step.items() if a.mean_phi is not None]
