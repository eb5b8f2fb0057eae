"""The links of the agent's loop as one table row each, and each link's controls in a few words (for the terminal
summary; the reports' first table is :mod:`ariadne_lc.report._verdict`'s). Rates are never pooled across links."""

from __future__ import annotations

from ariadne_lc.records import LINKS, Aggregate, AuditReport

__all__ = [
    "LINK_HEADER",
    "controls_summary",
    "link_rows",
]

LINK_HEADER = (
    "link", "scored", "violation rate", "95% CI", "tracks", "not decisive", "no commitment", "n/a", "failed",
    "controls: answer held",
)  # fmt: skip


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def controls_summary(report: AuditReport, link: str) -> str:
    """A link's own controls, each with how often the answer held under it (``rerun 4/5, paraphrase 5/5``; a rerun's
    and a placebo's should hold it), read against that link's violation rate and never pooled with another link's;
    empty when the link had none scored."""
    controls = report.controls_by_link.get(link, {})
    return ", ".join(f"{kind} {a.violations}/{a.scored}" for kind, a in controls.items() if a.scored)


def _row(report: AuditReport, link: str, a: Aggregate) -> list[str]:
    tracks = f"{a.tracks}/{a.tracked}" if a.tracked else "-"
    return [
        link, str(a.scored), _pct(a.violation_rate), _ci(a.violation_rate_ci), tracks,
        str(a.not_decisive), str(a.no_commitment), str(a.not_applicable), str(a.failed),
        controls_summary(report, link) or "-",
    ]  # fmt: skip


def link_rows(report: AuditReport) -> list[list[str]]:
    """One row per link audited, in the order of the loop, its controls in the last column."""
    return [_row(report, link, report.by_link[link]) for link in LINKS if link in report.by_link]
