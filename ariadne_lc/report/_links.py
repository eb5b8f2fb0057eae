"""The links of the agent's loop in a report (docs/method.md#links): coverage first, then one card, one table row
and one colour per link. Rates are never pooled across links."""

from __future__ import annotations

from ariadne_lc.records import LINKS, Aggregate, AuditReport
from ariadne_lc.report._plots import RateBar, rate_bars
from ariadne_lc.stats import aggregate

__all__ = [
    "LINK_HEADER",
    "controls_summary",
    "coverage_line",
    "link_cards",
    "link_rows",
    "link_svg",
    "links_markdown",
]

LINK_HEADER = (
    "link", "scored", "violation rate", "95% CI", "tracks", "not decisive", "no commitment", "n/a", "failed",
    "controls: answer held",
)  # fmt: skip


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def coverage_line(report: AuditReport) -> str:
    """The coverage sentence (the first line of every summary); empty for a report built before links."""
    return "" if report.coverage is None else report.coverage.summary().capitalize() + "."


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


def link_cards(report: AuditReport) -> list[tuple[str, str]]:
    """(label, value) cards: coverage, then each link's violation rate with its interval."""
    cards: list[tuple[str, str]] = []
    c = report.coverage
    if c is not None and c.units:
        cards.append(("units with a verdict (coverage)", f"{_pct(c.rate)} ({c.with_verdict}/{c.units})"))
    for link in LINKS:
        a = report.by_link.get(link)
        if a is not None:
            cards.append(
                (f"{link} violation rate ({a.scored} scored)", f"{_pct(a.violation_rate)} {_ci(a.violation_rate_ci)}")
            )
    return cards


def link_svg(report: AuditReport) -> str:
    """Violation rate per contradiction type, one bar (and one colour) per link; empty with a single link."""
    if len(report.by_link) < 2:
        return ""
    bars = []
    for r_link in LINKS:
        results = [r for r in report.results if r.link == r_link and not r.control]
        for kind in sorted({r.intervention_type for r in results}):
            a = aggregate(r for r in results if r.intervention_type == kind)
            bars.append(RateBar(kind, r_link, a.violation_rate, a.violation_rate_ci, a.scored))
    return rate_bars(bars, title="violation rate by link (Wilson 95% intervals)") if bars else ""


def links_markdown(report: AuditReport) -> list[str]:
    """The links section of the Markdown report (empty for a single-link report without coverage)."""
    if report.coverage is None:
        return []
    lines = [coverage_line(report), ""]
    if report.by_link:
        lines += ["| " + " | ".join(LINK_HEADER) + " |", "|" + "---|" * len(LINK_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in link_rows(report)]
        lines.append("")
    return lines
