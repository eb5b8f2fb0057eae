"""The decisiveness gate and tracking per contradiction type, for the Markdown and HTML audit reports.

Built once as rows (:func:`gate_rows`) and rendered by both; empty when no result carries a gate decision (the
gate was off). Per type: how many contradictions the gate decided on, how many it rejected as not decisive (no edit
changed the answer the thought implies) or as incoherent (every edit contradicted itself), and how many thoughts
committed to no answer; of the scored ones with a
tracking verdict, how many answers moved *to* the answer the contradicted thought implies (tracks), moved elsewhere,
or stayed (the violations), and the tracking rate with its Wilson interval.
"""

from __future__ import annotations

from collections.abc import Sequence

from ariadne_lc.records import Aggregate, AuditReport

__all__ = ["GATE_HEADER", "gate_cards", "gate_line", "gate_markdown", "gate_rows"]

GATE_HEADER = (
    "contradictions",
    "gated",
    "not decisive",
    "incoherent",
    "no commitment",
    "scored",
    "tracks",
    "elsewhere",
    "stayed",
    "tracking rate",
    "95% CI",
)


def _share(k: int, n: int) -> str:
    return f"{k} ({k / n:.0%})" if n else str(k)


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def _row(label: str, a: Aggregate) -> tuple[str, ...]:
    return (
        label,
        str(a.gated),
        _share(a.not_decisive, a.gated),
        _share(a.incoherent, a.gated),
        _share(a.no_commitment, a.gated),
        str(a.scored),
        str(a.tracks),
        str(a.moved_elsewhere),
        str(a.stayed),
        "-" if a.tracking_rate is None else f"{a.tracking_rate:.0%}",
        _ci(a.tracking_rate_ci),
    )


def gate_rows(report: AuditReport) -> list[tuple[str, ...]]:
    """All contradictions first, then each type the gate decided on; empty with the gate off."""
    if not report.overall.gated:
        return []
    return [_row("all", report.overall), *(_row(k, a) for k, a in report.by_type.items() if a.gated)]


def gate_line(report: AuditReport) -> str:
    """One sentence: what the gate did, which reader decided, and what tracking means."""
    readers = sorted({r.decisiveness.reader for r in report.results if r.decisiveness is not None and not r.control})
    return (
        f"The decisiveness gate (reader: {', '.join(readers) or '-'}) replays a contradiction only when it changes "
        "the answer the thought implies and leaves a thought that does not contradict itself (else: incoherent); a "
        "contradiction it rejects is not applicable, never scored. Tracking: "
        "whether the counterfactual answer moved to the answer the contradicted thought implies (tracks), somewhere "
        "else, or stayed (a violation)."
    )


def gate_markdown(report: AuditReport) -> list[str]:
    """The Markdown section (lines); empty with the gate off."""
    rows = gate_rows(report)
    if not rows:
        return []
    return [
        "## Decisiveness gate and tracking",
        "",
        gate_line(report),
        "",
        "| " + " | ".join(GATE_HEADER) + " |",
        "|" + "---|" * len(GATE_HEADER),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
    ]


def gate_cards(o: Aggregate) -> list[tuple[str, str]]:
    """The headline cards of the gate: its rejections, where scored answers went, and the violations whose reader
    read the original thought otherwise than the agent (none with the gate off)."""
    cards: list[tuple[str, str]] = []
    if o.gated:
        cards.append(("rejected as not decisive", f"{o.not_decisive / o.gated:.0%} ({o.not_decisive}/{o.gated})"))
        cards.append(("rejected as incoherent", f"{o.incoherent / o.gated:.0%} ({o.incoherent}/{o.gated})"))
    if o.tracked:
        rate = "-" if o.tracking_rate is None else f"{o.tracking_rate:.0%}"
        cards.append(("answer tracked the contradiction", f"{rate} ({o.tracks}/{o.tracked})"))
    if o.reader_disagreed:
        value = f"{o.violations_reader_disagreed}/{o.reader_disagreed} (of {o.reader_checked} checked)"
        cards.append(("violations where the reader read the thought otherwise than the agent", value))
    return cards
