"""The pieces of the HTML audit report, as template context: the verdict rows, the examples, each link's details.

Text is escaped here or by the template (autoescape); the only HTML built in Python is the diff's ``<del>``/``<ins>``
(:func:`diff_html`, every piece escaped) and the charts' inline SVG (:mod:`ariadne_lc.report._plots`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ariadne_lc import links
from ariadne_lc.records import AuditReport
from ariadne_lc.report._examples import Example, Segment, before_after, edited_text, example_for, unchanged, why_none
from ariadne_lc.report._link_tables import LinkDetail, link_detail, num_text, pct_text
from ariadne_lc.report._plots import (
    OutcomeBar,
    RateBar,
    intervention_bars,
    link_colour,
    outcome_bars,
    phi_histogram,
)
from ariadne_lc.report._verdict import LinkAnswer, link_answers

__all__ = ["diff_html", "example_context", "link_details_context", "outcome_context", "verdict_rows"]


def diff_html(segments: Sequence[Segment]) -> str:
    """A word diff as HTML: removed text in ``<del>``, added text in ``<ins>``, every piece escaped."""
    tags = {"same": ("", ""), "del": ("<del>", "</del>"), "ins": ("<ins>", "</ins>")}
    return "".join(f"{tags[kind][0]}{html.escape(text)}{tags[kind][1]}" for kind, text in segments)


def verdict_rows(answers: Sequence[LinkAnswer]) -> list[dict[str, Any]]:
    """One row per link for the first table (:attr:`LinkAnswer.cells`, the same numbers as ``aggregate.verdict_by_link``
    in the JSON and the terminal summary's rows)."""
    rows = []
    for a in answers:
        link, verdict, _, ci, scored, coverage, controls = a.cells
        rows.append({
            "link": link, "colour": link_colour(a.link) or "#555555", "verdict": verdict,
            "cls": verdict.replace(" ", "-"), "why": a.why, "caveat": a.caveat, "rate": pct_text(a.rate), "ci": ci,
            "scored": scored, "violations": str(a.violations), "coverage": coverage, "controls": controls,
            "corrected": a.calibrated or "-", "question": spec.question if (spec := links.find(a.link)) else "",
        })  # fmt: skip
    return rows


def outcome_context(answers: Sequence[LinkAnswer]) -> tuple[str, str]:
    """(the stacked outcome chart, or "" and the sentence that replaces it when nothing was scored)."""
    bars = [OutcomeBar(a.link, a.tracks, a.elsewhere, a.moved, a.stayed) for a in answers if a.scored]
    if not bars:
        return "", "No contradiction was scored on any link, so there is nothing to show of where answers went."
    return outcome_bars(bars), ""


def example_context(report: AuditReport, answers: Sequence[LinkAnswer]) -> list[dict[str, Any]]:
    """One example audit per link (or why it has none)."""
    out = []
    for a in answers:
        ex: Example | None = example_for(report, a.link)
        item: dict[str, Any] = {"link": a.link, "colour": link_colour(a.link) or "#555555"}
        if ex is None:
            item["none"] = f"No example: {why_none(report, a.link)}."
        else:
            r = ex.result
            item.update(
                heading=ex.heading,
                query=r.query[:300],
                edited=ex.edited,
                edit=diff_html(ex.edit),
                implied=ex.implied,
                label=ex.before_label,
                before=ex.before,
                after=diff_html(ex.change),
                unchanged=unchanged(ex.change),
                outcome=ex.outcome,
                sentence=ex.sentence,
                phi=num_text(r.phi),
                similarity=num_text(r.similarity),
            )
        out.append(item)
    return out


def _charts(detail: LinkDetail, link: str) -> list[tuple[str, str]]:
    """(svg, "") per chart of the link, or ("", sentence) where the chart would show nothing."""
    what = links.words(link)[1]
    bars = [RateBar(link, kind, a.violation_rate, a.violation_rate_ci, a.scored) for kind, a in detail.by_type.items()]
    drawn = [b for b in bars if b.rate is not None]
    charts: list[tuple[str, str]] = []
    if not drawn:
        charts.append(("", "No contradiction was scored on this link: no violation rate to draw."))
    elif all(b.rate == 0 for b in drawn):
        n = sum(b.n for b in drawn)
        charts.append(("", f"Every intervention's violation rate is 0%: the {what} moved after all {n} scored edits."))
    else:
        charts.append((intervention_bars(drawn, title=f"{link}: violation rate per intervention (Wilson 95%)"), ""))
    if detail.phis:
        charts.append((phi_histogram(detail.phis, title=f"{link}: distribution of φ"), ""))
    else:
        charts.append(("", "No φ to draw: nothing on this link was scored."))
    return charts


def link_details_context(report: AuditReport) -> list[dict[str, Any]]:
    """Per link: its tables, its charts (or the sentences replacing them), its first violations."""
    out = []
    for a in link_answers(report):
        detail = link_detail(report, a.link)
        violations = []
        for r in detail.violations:
            label, before, after = before_after(r)
            violations.append(
                {
                    "heading": f"{r.intervention_type} on step {r.step_index} of {r.trace_id}",
                    "query": r.query[:160],
                    "thought": edited_text(r)[:300],
                    "label": label,
                    "before": before[:200],
                    "after": after[:200],
                }
            )
        out.append(
            {
                "link": a.link,
                "colour": link_colour(a.link) or "#555555",
                "tables": detail.tables,
                "charts": _charts(detail, a.link),
                "violations": violations,
            }
        )
    return out
