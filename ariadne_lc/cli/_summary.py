"""The terminal summary every auditing command prints: short enough to read at a glance, narrow enough for a
100-column terminal (pytest's summary is the model: one line per outcome, the details on demand).

First the coverage (how many units got a verdict), then the reports' first table, one row per link in the loop's order
(its verdict word, violation rate with its Wilson interval, N scored, the link's coverage), in a report of several
agents one line per agent with its own rate on each link, then the decisiveness gate's
rejections by outcome and the controls, one line each, then the raw and corrected rate. The per-intervention table
by domain and the long explanations follow only with ``--detail``.

The lines are plain text wrapped here, not by rich: a line breaks only between the parts of a sentence
(``|``-separated) or between words, never inside an interval (``[0%, 24%]`` is one token), and continues indented.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich import box
from rich.table import Table

from ariadne_lc import links
from ariadne_lc.cli._common import console
from ariadne_lc.cli._pipeline import gate_lines, link_lines, rates_line
from ariadne_lc.coverage import coverage_line, why_no_verdict
from ariadne_lc.interventions import is_control
from ariadne_lc.records import Aggregate, AuditReport, AuditResult
from ariadne_lc.report import ci_label, domain_group, link_answers, verdict_header, verdict_rule
from ariadne_lc.stats import aggregate

__all__ = [
    "DETAIL_HELP",
    "SUMMARY_WIDTH",
    "print_summary",
    "summary_lines",
    "wrap",
]

SUMMARY_WIDTH = 100
"""The widest the summary gets; narrower when the terminal is."""

DETAIL_HELP = "Also print the table per link, domain and intervention, and the gate's and tracking's details."

_INDENT = "    "
_TOKEN = re.compile(r"\[[^\]]*\]|\S+")
"""A word, or a bracketed interval with its space (kept whole)."""


def wrap(text: str, width: int = SUMMARY_WIDTH) -> list[str]:
    """``text`` in lines of at most ``width`` characters: broken after a ``|`` or ``;`` part when it can be, else
    between words, never inside ``[...]``; continuation lines indented.

    Examples:
        >>> wrap("coverage 3/4 | thought->action 1/2 [0%, 84%] | thought->answer 2/2", 40)
        ['coverage 3/4 |', '    thought->action 1/2 [0%, 84%] |', '    thought->answer 2/2']
    """
    if len(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for token in _TOKEN.findall(text):
        candidate = f"{line} {token}" if line.strip() else line + token
        if len(candidate) <= width or not line.strip():
            line = candidate
            continue
        # break at the last part boundary on this line when the part that follows fits on the next one
        bar, semicolon = line.rfind(" | "), line.rfind("; ")
        cut, skip = (bar, 3) if bar > semicolon else (semicolon, 2)
        # (on a continuation line, a boundary in its first half would leave a stub of a line)
        shortest = width // 2 if line.startswith(_INDENT) else len(_INDENT)
        head, tail = (line[: cut + 2].rstrip(), line[cut + skip :]) if cut > shortest else (line, "")
        if tail and len(_INDENT + tail + " " + token) <= width:
            lines.append(head)
            line = f"{_INDENT}{tail} {token}"
        else:
            lines.append(line)
            line = _INDENT + token
    if line.strip():
        lines.append(line)
    return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def _links(report: AuditReport) -> dict[str, Aggregate]:
    """The links in the loop's order; a report from before links has its overall aggregate only."""
    if not report.by_link:
        return {report.main_link: report.overall}
    return {link: report.by_link[link] for link in links.ordered(report.by_link)}


def _why_lines(report: AuditReport) -> list[str]:
    """Under the table, per link without a verdict: why, with the cause and what to do (:func:`why_no_verdict`)."""
    return [
        f"{link}, why no verdict: "
        + "; ".join(f"{reason} ({n})" + (f": {fix}" if fix else "") for reason, n, fix in reasons)
        for link, reasons in why_no_verdict(report.results).items()
    ]


def _link_rows(report: AuditReport) -> list[str]:
    """The reports' first table as plain text (:func:`~ariadne_lc.report.link_answers`, the same rows as the HTML
    and Markdown pages; the controls have their own line below)."""
    header = verdict_header(report.confidence)[:-1]
    rows = [list(header), *(list(a.cells[:-1]) for a in link_answers(report))]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    right = (False, False, True, False, True, True)
    return [
        "  ".join(cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right, strict=True)).rstrip()
        for row in rows
    ]


def _agent_lines(report: AuditReport) -> list[str]:
    """In a report of several agents, one line per agent: each link's violation rate, interval and N (a rate pooled
    over agents hides which one ignores its reasoning), then its failed audits."""
    lines = []
    for name, by_link in report.by_agent.items():
        parts = [
            f"{link} {_pct(a.violation_rate)} {_ci(a.violation_rate_ci)} ({a.violations}/{a.scored})".replace("  ", " ")
            if a.scored
            else f"{link} no verdict"
            for link, a in by_link.items()
        ]
        failed = sum(a.failed for a in by_link.values())
        lines.append(f"agent {name}: " + " | ".join(parts) + (f"; {failed} audits failed" if failed else ""))
    return lines


def _gate_line(report: AuditReport) -> str | None:
    """The gate's rejections over every link, by outcome; ``None`` with the gate off."""
    aggs = list(_links(report).values())
    gated = sum(a.gated for a in aggs)
    if not gated:
        return None
    read = [(r.link, r.decisiveness.reader) for r in report.results if r.decisiveness is not None and not r.control]
    by_unit = {
        what: sorted({reader for link, reader in read if (links.unit(link) or "thought") == kind})
        for what, kind in (("thoughts", "thought"), ("tool outputs", "output"), ("to-do lists", "state"))
    }
    readers = [f"{', '.join(names)} for {what}" for what, names in by_unit.items() if names]
    rejected = {
        "not decisive": sum(a.not_decisive for a in aggs),
        "incoherent": sum(a.incoherent for a in aggs),
        "no commitment": sum(a.no_commitment for a in aggs),
    }
    outcomes = ", ".join(f"{name} {n}" for name, n in rejected.items())
    return f"gate (readers: {', '.join(readers)}): {sum(rejected.values())} of {gated} edits rejected: {outcomes}"


def _controls_line(report: AuditReport) -> str | None:
    """Per link, how often the answer held under each control; ``None`` without scored controls."""
    parts = []
    for link in _links(report):
        held = ", ".join(
            f"{kind} held {a.violations}/{a.scored}"
            for kind, a in report.controls_by_link.get(link, {}).items()
            if a.scored
        )
        if held:
            parts.append(f"{link}: {held}")
    if not parts and report.by_control:  # a report from before links: its controls pooled as they were recorded
        parts = [f"{kind} held {a.violations}/{a.scored}" for kind, a in report.by_control.items() if a.scored]
    return "controls: " + " | ".join(parts) if parts else None


def summary_lines(report: AuditReport, *, calibration_note: str | None = None) -> list[str]:
    """The summary as text: coverage, one line per link, the gate, the controls, the raw and corrected rate.

    Args:
        report: The report (with its corrected rates when a calibration was applied).
        calibration_note: Why no calibration was applied, when the caller looked for one (the demo).
    """
    width = min(SUMMARY_WIDTH, console.width)
    lines: list[str] = []
    if report.coverage is not None:  # the first number of every summary: how much of the loop the rates cover
        lines += wrap(coverage_line(report.coverage), width)
    lines += [line for row in _link_rows(report) for line in wrap(row, width)]  # a long reason wraps
    lines += [line for row in _agent_lines(report) for line in wrap(row, width)]
    lines += [line for why in _why_lines(report) for line in wrap(why, width)]
    lines += wrap(f"verdict: {verdict_rule(report.confidence)}", width)
    for extra in (_gate_line(report), _controls_line(report), rates_line(report, calibration_note)):
        if extra:
            lines += wrap(extra, width)
    return lines


def print_summary(
    report: AuditReport, title: str, *, calibration_note: str | None = None, detail: bool = False
) -> None:
    """Print the summary (:func:`summary_lines`); with ``detail`` first the table by link, domain and intervention
    and the long lines (per link, the gate per type, tracking, the reader's agreement, the placebo)."""
    if detail:
        _print_detail(report, title)
    else:
        console.rule(title, style="dim")
    for line in summary_lines(report, calibration_note=calibration_note):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _fmt(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def _tracking_cell(agg: Aggregate) -> str:
    """tracks/elsewhere/stayed over the audits with a tracking verdict."""
    if not agg.tracked:
        return "-"
    return f"{agg.tracks}/{agg.moved_elsewhere}/{agg.stayed}"


_DETAIL_COLUMNS = ("intervention", "domain", "N", "rate", "CI", "φ", "rejected", "t/e/s", "n/a", "failed")
_DETAIL_CAPTION = (
    "N scored; rate: violation rate (a control: how often the answer held); rejected: not decisive (the gate); "
    "t/e/s: moved to what the edit implies / elsewhere / stayed"
)  # fmt: skip


def _print_detail(report: AuditReport, title: str) -> None:
    """One table per link, a row per intervention type and domain (N scored, the violation rate or how often a
    control held, its Wilson interval, mean φ, rejected as not decisive, tracking, n/a, failed); then the long
    lines. Names and intervals never wrap."""
    console.rule(title, style="dim")
    groups: dict[str, dict[tuple[str, str], list[AuditResult]]] = {}
    for r in report.results:
        groups.setdefault(r.link, {}).setdefault((r.intervention_type, domain_group(r)), []).append(r)
    for link in links.ordered(groups):
        table = Table(title=link, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for column in (ci_label(report.confidence) if c == "CI" else c for c in _DETAIL_COLUMNS):
            left = column in ("intervention", "domain")
            table.add_column(column, justify="left" if left else "right", no_wrap=True)
        for (kind, domain), items in sorted(groups[link].items(), key=lambda x: (is_control(x[0][0]), x[0])):
            agg = aggregate(items)
            table.add_row(
                f"{kind} (control)" if is_control(kind) else kind,
                domain,
                str(agg.scored),
                # a control's "violation" is its answer holding, which is what a control should do: say so
                f"held {_fmt(agg.violation_rate)}" if is_control(kind) and agg.scored else _fmt(agg.violation_rate),
                _ci(agg.violation_rate_ci) or "-",
                _fmt(agg.mean_phi, pct=False),
                str(agg.not_decisive),
                _tracking_cell(agg),
                str(agg.not_applicable),
                str(agg.failed),
            )
        console.print(table)
    for line in wrap(_DETAIL_CAPTION, min(SUMMARY_WIDTH, console.width)):
        console.print(line, style="dim", highlight=False, soft_wrap=True)
    o = report.overall
    ci = o.violation_rate_ci
    long_lines: Sequence[str] = [
        *link_lines(report),
        f"{report.main_link} contradictions: violation rate {_fmt(o.violation_rate)} over {o.scored} scored audits"
        + (f" ({report.confidence:.0%} CI {ci[0]:.0%}-{ci[1]:.0%})" if ci else "")
        + (f", mean φ {o.mean_phi:.2f}" if o.mean_phi is not None else "")
        + f"; no verdict: {o.inconclusive} (length gate {o.length_gate_exempted}), failed: {o.failed}, "
        f"traces with nothing to audit: {o.nothing_to_audit}",
        *gate_lines(report),
    ]
    p = report.placebo
    if p is not None and p.queries:
        long_lines = [
            *long_lines,
            f"placebo (paraphrase): answer held in {_fmt(p.placebo_rate)} vs {_fmt(p.violation_rate)} under "
            f"contradictions over {p.queries} paired queries; placebo-corrected violation rate "
            f"{_fmt(p.corrected_violation_rate)} (paired test p = {_fmt(p.p_value, pct=False)})",
        ]
    width = min(SUMMARY_WIDTH, console.width)
    for line in (part for long in long_lines for part in wrap(long, width)):
        console.print(line, soft_wrap=True, highlight=False, markup=False)
    console.rule(style="dim")
