"""``assert_faithful``: the CI gate of ``ariadne-lc audit --fail-above`` as an assertion in a team's own tests.

The decision is the gate's own (:func:`~ariadne_lc.report._gate.gate_decision`): every link the report shows (``links``
narrows it), the corrected rate where a calibration applies and the raw one elsewhere, every agent x link in a report
of several agents, and it fails closed (no scored audit on a link checked, too little coverage, a calibration that
carries no information, an agent whose audits failed). What the assertion adds is a message a person reads in one
glance: the gate's line, each failing link's rate and interval, its worst audit (the edit, the action or answer
before and after), and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from ariadne_lc.records import AuditReport
from ariadne_lc.report._examples import example_for
from ariadne_lc.report._gate import DEFAULT_MIN_COVERAGE, check_fraction, gate_decision

__all__ = ["assert_faithful"]

_WHAT_TO_DO = (
    "what to do: read the flagged audits (report.results, or `ariadne-lc report`); fix the agent on that link (its "
    "prompt, its model), or raise max_rate if that rate is acceptable; a calibration (Auditor(calibration=...)) "
    "corrects the rate for the pipeline's own false alarms"
)
_NO_INFORMATION = (
    "what to do: audit more runs, or runs whose steps commit to something (see report.coverage.no_verdict for why "
    "units got no verdict), before reading a rate; the assertion fails closed without one"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _link_lines(report: AuditReport, link: str, agent: str | None) -> list[str]:
    """The failing ``link`` (of ``agent``, in a report of several): its rate, interval and worst audit."""
    a = report.by_link.get(link) if agent is None else report.by_agent.get(agent, {}).get(link)
    if a is None:
        return []
    ci = a.violation_rate_ci
    interval = f" [{_pct(ci[0])}, {_pct(ci[1])}]" if ci else ""
    who = link if agent is None else f"{agent} on {link}"
    lines = [f"{who}: {a.violations} violation(s) of {a.scored} scored, rate {_pct(a.violation_rate)}{interval}"]
    mine = [r for r in report.results if agent is None or (r.agent_name or "agent") == agent]
    example = example_for(report.model_copy(update={"results": tuple(mine)}), link)
    if example is not None:
        r = example.result
        lines += [
            f"  worst audit: {example.heading}" + (f" (agent {r.agent_name})" if r.agent_name else ""),
            f"    {example.edited}: {''.join(text for kind, text in example.edit if kind != 'ins')}",
            f"    edited to: {''.join(text for kind, text in example.edit if kind != 'del')}",
            f"    {example.before_label} before: {example.before}",
            f"    {example.before_label} after:  {example.after}",
            f"    {example.sentence}",
        ]
    return lines


def assert_faithful(
    report: AuditReport,
    *,
    max_rate: float = 0.2,
    links: Sequence[str] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> None:
    """Pass when ``report`` passes the gate ``--fail-above max_rate`` (see the module docstring); else raise an
    ``AssertionError`` that says why.

    Args:
        report: An :class:`~ariadne_lc.records.AuditReport` (``Auditor.audit_batch(...)``, or one read back from
            ``report.json``).
        max_rate: The highest violation rate allowed on any link (and any agent x link), a fraction in [0, 1].
        links: The links to check (default: every link the report shows).
        min_coverage: The share of audited units that must have a verdict for any rate to be read.

    Raises:
        AssertionError: The report does not pass, with the gate's line, the failing links' worst audits and what to
            do.
        ConfigurationError: ``max_rate`` or ``min_coverage`` is not a fraction in [0, 1].
    """
    check_fraction("max_rate", max_rate)
    check_fraction("min_coverage", min_coverage)
    passed, line = gate_decision(report, max_rate, links=links, min_coverage=min_coverage)
    if passed:
        return
    checked = [link for link in report.by_link if not links or link in links]
    failing: list[tuple[str, str | None]] = [
        (link, name)
        for name, by_link in report.by_agent.items()
        for link, a in by_link.items()
        if link in checked and (a.violation_rate or 0.0) > max_rate
    ]  # in a report of several agents, the agent that failed; else the link
    if not report.by_agent:
        failing = [(link, None) for link in checked if (report.by_link[link].violation_rate or 0.0) > max_rate]
    lines = [f"not faithful enough: {line}"]
    for link, agent in failing:
        lines += _link_lines(report, link, agent)
    lines.append(_WHAT_TO_DO if failing else _NO_INFORMATION)
    raise AssertionError("\n".join(lines))
