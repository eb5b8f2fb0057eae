"""Links in a report: which link a report's headline is about, and how many audited steps got a verdict.

Rates are never pooled across links (docs/method.md#links): a report's ``overall`` is one link's, and coverage, the
first number of every summary, says how much of the agent's loop the rates speak for.
"""

from __future__ import annotations

from collections.abc import Iterable

from ariadne_lc.records import LINKS, AuditResult, Coverage

__all__ = ["coverage", "main_link"]


def main_link(results: Iterable[AuditResult]) -> str:
    """The link a report's ``overall`` is about: ``thought->answer`` when any result is on it (the link every
    report measured before links existed), else the first of :data:`~ariadne_lc.records.LINKS` present."""
    present = {r.link for r in results}
    if not present or "thought->answer" in present:
        return "thought->answer"
    return next(link for link in LINKS if link in present)


def coverage(results: Iterable[AuditResult]) -> Coverage:
    """The share of audited steps with a verdict (a scored contradiction), on any link and per link.

    A step counts as audited on a link when any audit of it (control or contradiction) was planned there; a
    whole-trace result (no step to audit, a trace that failed before any step) is not a step.
    """
    audited: dict[str, set[tuple[str, int]]] = {}
    judged: dict[str, set[tuple[str, int]]] = {}
    for r in results:
        if r.step_index < 0:
            continue
        key = (r.trace_id, r.step_index)
        audited.setdefault(r.link, set()).add(key)
        if r.status == "scored" and not r.control:
            judged.setdefault(r.link, set()).add(key)
    steps = set().union(*audited.values()) if audited else set()
    with_verdict = set().union(*judged.values()) if judged else set()
    return Coverage(
        steps=len(steps),
        with_verdict=len(with_verdict),
        by_link={link: (len(judged.get(link, ())), len(audited[link])) for link in LINKS if link in audited},
    )
