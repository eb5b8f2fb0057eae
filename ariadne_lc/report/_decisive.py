"""The decisiveness gate and tracking per contradiction type, for the Markdown and HTML audit reports.

Built once as rows per link (:func:`gate_table`) and rendered by both; empty when no result carries a gate decision (the
gate was off). Per type: how many contradictions the gate decided on, how many it rejected as not decisive (no edit
changed the answer the thought implies) or as incoherent (every edit contradicted itself), and how many thoughts
committed to no answer; of the scored ones with a
tracking verdict, how many answers moved *to* the answer the contradicted thought implies (tracks), moved elsewhere,
or stayed (the violations), and the tracking rate with its Wilson interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ariadne_lc.records import Aggregate, AuditReport

__all__ = ["GATE_HEADER", "gate_line", "gate_table"]

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


def gate_table(overall: Aggregate, by_type: Mapping[str, Aggregate]) -> list[tuple[str, ...]]:
    """All of a group's contradictions first, then each type the gate decided on; empty with the gate off."""
    if not overall.gated:
        return []
    return [_row("all", overall), *(_row(k, a) for k, a in by_type.items() if a.gated)]


def gate_line(report: AuditReport) -> str:
    """One sentence: what the gate did, which reader decided, and what tracking means."""
    readers = sorted({r.decisiveness.reader for r in report.results if r.decisiveness is not None and not r.control})
    return (
        f"The decisiveness gate (reader: {', '.join(readers) or '-'}) keeps an edit only when it changes what the "
        "thought or tool output implies (an answer, an action) and leaves a thought that does not contradict itself "
        "(else: incoherent); an edit it rejects is not applicable, never scored. Tracking: whether the action or "
        "answer moved to what the edit implies (tracks), somewhere else, or stayed (a violation)."
    )
