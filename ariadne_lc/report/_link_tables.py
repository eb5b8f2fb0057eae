"""The detail tables of one link, built once as rows and rendered by the HTML and the Markdown report alike.

Every table is about one link (rates are never pooled across links, docs/method.md#links) and about its
contradictions or its controls, never both: a control's number is how often the answer held (as it should), so it is
shown as "held k/n" in a table of its own, never beside a violation rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ariadne_lc import links
from ariadne_lc.records import Aggregate, AuditReport, AuditResult
from ariadne_lc.report._decisive import GATE_HEADER, gate_table
from ariadne_lc.stats import UNSPECIFIED_DOMAIN, aggregate

__all__ = ["LinkDetail", "Table", "ci_text", "link_detail", "num_text", "pct_text"]


def pct_text(value: float | None) -> str:
    """A share as the reports print it: ``57%``; ``-`` when there is none."""
    return "-" if value is None else f"{value:.0%}"


def ci_text(ci: Sequence[float] | None) -> str:
    """An interval as the reports print it: ``[41%, 73%]``; ``-`` when there is none."""
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def num_text(value: float | None) -> str:
    """A mean (φ, S) to two decimals; ``-`` when there is none."""
    return "-" if value is None else f"{value:.2f}"


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of text cells, with a sentence under the title when it needs one."""

    title: str
    header: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    note: str = ""
    keys: int = 1
    """How many leading columns are labels (left-aligned), not numbers."""


@dataclass(frozen=True, slots=True)
class LinkDetail:
    """What the details of one link hold: its tables, and the numbers its charts are drawn from."""

    link: str
    tables: list[Table] = field(default_factory=list)
    by_type: dict[str, Aggregate] = field(default_factory=dict)
    """The link's contradictions per intervention type (the bars of its chart)."""
    phis: dict[str, list[float]] = field(default_factory=dict)
    """φ of each scored contradiction, per type (its histogram)."""
    violations: list[AuditResult] = field(default_factory=list)
    """The first violations on the link, for the list under its tables."""


TYPE_HEADER = (
    "intervention", "scored", "violation rate", "95% CI", "mean φ", "mean S", "n/a", "failed", "inconclusive",
)  # fmt: skip
DOMAIN_HEADER = ("domain", "intervention", "scored", "violation rate", "95% CI", "mean φ")
CONTROL_HEADER = ("control", "scored", "held", "95% CI of held", "mean S")


def _type_row(kind: str, a: Aggregate) -> tuple[str, ...]:
    return (
        kind, str(a.scored), pct_text(a.violation_rate), ci_text(a.violation_rate_ci), num_text(a.mean_phi),
        num_text(a.mean_similarity), str(a.not_applicable), str(a.failed), str(a.inconclusive),
    )  # fmt: skip


def _reader_note(a: Aggregate) -> str:
    """Where the gate's reader read the original thought otherwise than the agent answered (docs/method.md#tracking):
    the violations there are as much the reader's claim as the agent's."""
    if not a.reader_checked:
        return ""
    agreed = a.reader_checked - a.reader_disagreed
    return (
        f"Reader and agent: violations {a.violations_reader_agreed} of {agreed} where the gate's reader read the "
        f"original thought as the agent answered, {a.violations_reader_disagreed} of {a.reader_disagreed} where it "
        "did not (read those as the reader's claim as much as the agent's)."
    )


def _held(a: Aggregate) -> str:
    """A control's outcome: how often the action or answer held under it (a control's "violation")."""
    return f"held {a.violations}/{a.scored}" if a.scored else "none scored"


def _grouped(results: Sequence[AuditResult], *, domain: bool) -> dict[tuple[str, str], list[AuditResult]]:
    out: dict[tuple[str, str], list[AuditResult]] = defaultdict(list)
    for r in results:
        out[(r.domain or UNSPECIFIED_DOMAIN if domain else "", r.intervention_type)].append(r)
    return dict(sorted(out.items()))


def link_detail(report: AuditReport, link: str) -> LinkDetail:
    """The detail tables of ``link``: per intervention, per domain, the gate, the controls."""
    mine = [r for r in report.results if r.link == link and r.step_index >= 0]
    contradictions = [r for r in mine if not r.control]

    def agg(group: Sequence[AuditResult]) -> Aggregate:
        return aggregate(group, report.confidence, seed=report.seed)

    by_type = {kind: agg(v) for (_, kind), v in _grouped(contradictions, domain=False).items()}
    tables = [
        Table(
            "Per intervention",
            TYPE_HEADER,
            [_type_row(kind, a) for kind, a in by_type.items()],
            "Violation rate: the share of scored edits the agent ignored; n/a: nothing to edit, or the gate said no.",
        )
    ]
    domains = {d for d, _ in _grouped(contradictions, domain=True)}
    if len(domains) > 1:
        rows: list[tuple[str, ...]] = [
            (d, kind, str(a.scored), pct_text(a.violation_rate), ci_text(a.violation_rate_ci), num_text(a.mean_phi))
            for (d, kind), v in _grouped(contradictions, domain=True).items()
            for a in [agg(v)]
        ]
        tables.append(Table("Per domain", DOMAIN_HEADER, rows, keys=2))
    every = agg(contradictions)
    gate = gate_table(every, by_type)
    if gate:
        tables.append(Table("Decisiveness gate and tracking", GATE_HEADER, gate, _reader_note(every)))
    controls = report.controls_by_link.get(link, {})
    if controls:
        rows = [
            (kind, str(a.scored), _held(a), ci_text(a.violation_rate_ci), num_text(a.mean_similarity))
            for kind, a in controls.items()
        ]
        what = links.words(link)[1]
        note = f"A control changes nothing that matters: the {what} should hold under it every time."
        tables.append(Table("Controls", CONTROL_HEADER, rows, note))
    phis: dict[str, list[float]] = defaultdict(list)
    for r in contradictions:
        if r.phi is not None and r.status == "scored":
            phis[r.intervention_type].append(r.phi)
    violations = [r for r in contradictions if r.violation and r.status == "scored"][:20]
    return LinkDetail(link, tables, by_type, dict(phis), violations)
