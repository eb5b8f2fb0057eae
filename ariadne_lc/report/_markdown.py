"""The Markdown audit report: the HTML page's order and numbers, as text (see :mod:`ariadne_lc.report._html_page`).

Coverage, one row per link with its verdict, one example audit per link (the edit as ``~~removed~~ **added**``),
then per link its detail tables, then the main link's calibration, placebo and steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from ariadne_lc.coverage import coverage_line, why_no_verdict
from ariadne_lc.records import AuditReport
from ariadne_lc.report._corrected import corrected_markdown
from ariadne_lc.report._decisive import gate_line
from ariadne_lc.report._examples import Segment, before_after, edited_text, example_for, unchanged, why_none
from ariadne_lc.report._link_tables import Table, link_detail, num_text, pct_text
from ariadne_lc.report._sentences import counts_line, placebo_line, steps
from ariadne_lc.report._verdict import (
    LinkAnswer,
    agent_header,
    agent_rows,
    link_answers,
    verdict_header,
    verdict_rule,
)

__all__ = ["audit_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows),
        "",
    ]


def diff_markdown(segments: Sequence[Segment]) -> str:
    """A word diff as Markdown: ``~~removed~~`` and ``**added**`` (spaces kept outside the marks)."""
    out = []
    for kind, text in segments:
        mark = {"same": "", "del": "~~", "ins": "**"}[kind]
        core = text.strip()
        if not mark or not core:
            out.append(text)
            continue
        lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
        out.append(f"{lead}{mark}{core}{mark}{trail}")
    return "".join(out).replace("\n", " ")


def _verdict_row(a: LinkAnswer) -> tuple[str, ...]:
    link, verdict, *rest = a.cells
    return (link, f"**{verdict}** ({a.why})", *rest)


def _examples(report: AuditReport, answers: Sequence[LinkAnswer]) -> list[str]:
    lines = ["## One example audit per link", ""]
    for a in answers:
        ex = example_for(report, a.link)
        if ex is None:
            lines += [f"### {a.link}", "", f"No example: {why_none(report, a.link)}.", ""]
            continue
        lines += [
            f"### {a.link}: {ex.heading}",
            "",
            f"- query: {ex.result.query[:300]}",
            f"- {ex.edited}, edited: {diff_markdown(ex.edit)}",
            *([f"- the edit now implies: `{ex.implied}`"] if ex.implied else []),
            f"- {ex.before_label} before: `{ex.before}`",
            f"- {ex.before_label} after the edit: "
            + (f"`{ex.after}` (unchanged)" if unchanged(ex.change) else diff_markdown(ex.change)),
            f"- tracked? **{ex.outcome}**: {ex.sentence} (φ {num_text(ex.result.phi)})",
            "",
        ]
    return lines


def _details(report: AuditReport, answers: Sequence[LinkAnswer]) -> list[str]:
    lines = ["## Details", ""]
    if any(r.decisiveness is not None for r in report.results):
        lines += [gate_line(report), ""]
    for a in answers:
        detail = link_detail(report, a.link)
        lines += [f"### {a.link}", ""]
        table: Table
        for table in detail.tables:
            lines += [f"#### {table.title}", ""]
            lines += [table.note, ""] if table.note else []
            lines += _table(table.header, table.rows)
        if detail.violations:
            lines += [f"#### Violations (first {len(detail.violations)})", ""]
            for r in detail.violations:
                label, before, after = before_after(r)
                lines += [
                    f"- **{r.intervention_type}** at step {r.step_index} of `{r.trace_id}`: {r.query[:120]!r}",
                    f"  - edited: {edited_text(r)[:200]}",
                    f"  - {label} {before[:120]!r} → {after[:120]!r}",
                ]
            lines.append("")
    lines += [
        f"### {report.main_link} (the report's main link)",
        "",
        "The main link is `thought->answer` when it has a verdict, else the first link that has one: the calibration, "
        "the placebo comparison and the breakdowns by type, step, domain and tag below are about it alone.",
        "",
        placebo_line(report),
        "",
        counts_line(report.overall),
        "",
    ]
    lines += corrected_markdown(report)
    step_rows = steps(report)
    if step_rows:
        lines += ["#### Causal contribution by step", ""]
        red = report.redundancy
        if red is not None and red.steps:
            lines += [
                f"RRR (share of steps with CCS < {red.threshold}) = {pct_text(red.rrr)} over {red.steps} steps.",
                "",
            ]
        lines += _table(("step", "audits", "mean φ"), [(s, str(n), num_text(v)) for s, v, n in step_rows])
    return lines


def _agents(report: AuditReport) -> list[str]:
    """In a report of several agents, each agent's own rate per link (the table above pools them)."""
    rows = agent_rows(report)
    return ["## Per agent", "", *_table(agent_header(report.confidence), rows)] if rows else []


def audit_markdown(report: AuditReport, *, title: str = "Causal faithfulness audit") -> str:
    """Markdown: coverage, the verdict per link, an example per link, then the details per link."""
    answers = link_answers(report)
    lines = [f"# {title}", ""]
    if report.coverage is not None:
        lines += [coverage_line(report.coverage).capitalize() + ".", ""]
    for link, reasons in why_no_verdict(report.results).items():
        lines += [f"**{link}, why no verdict:**", ""]
        lines += [f"- {reason} ({n})" + (f": {fix}" if fix else "") for reason, n, fix in reasons]
        lines.append("")
    lines += ["## One answer per link", ""]
    header = verdict_header(report.confidence)
    lines += _table(header, [_verdict_row(a) for a in answers]) if answers else ["No link was audited.", ""]
    lines += [
        f"Verdict: {verdict_rule(report.confidence)} Controls should hold: the action or answer is expected to stay.",
        "",
    ]
    lines += _agents(report)
    lines += _examples(report, answers)
    lines += _details(report, answers)
    return "\n".join(lines) + "\n"
