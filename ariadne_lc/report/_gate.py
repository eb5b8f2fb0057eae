"""The CI gate's decision on a report: ``--fail-above`` of the commands, ``assert_faithful`` in tests.

It reads **every link** the report shows (``links`` narrows it), never one pooled rate: an agent flagged on
``observation->answer`` fails the gate whatever its other links say, and the line names the link. Per link, the rate
checked is

- the **corrected** violation rate on the link a calibration applies to (the report's main link, with
  ``--calibration``, the demo's committed one, or a ``report.json`` that carries one): the raw rate of a pipeline with
  false alarms is not the number a release should be held to;
- the **raw** violation rate (weighted by inclusion under the plan's budget) on the others.

It fails closed:

- a link with no verdict does not fail the gate by itself (planning thoughts may commit to no answer), and is named;
  when *no* link checked has a verdict there is no number to check: ``no information``;
- when fewer than ``min_coverage`` (0.5 by default) of the units audited got a verdict, the rates speak for too
  little of the agent (units the budget left out are not counted against it: they were never audited);
- a calibration that carries no information (FA + M >= 1, or a type it did not measure) gives no corrected rate:
  ``no information``;
- in a report of several agents (a caller and its sub-agents, a supervisor and its workers) it reads every agent x
  link as well, raw: an agent above the threshold on a link fails the gate, named, whatever the pooled rate says; an
  agent with audits that failed, or sub-agent runs the audited runs started that were not audited, fail it closed
  (the line says which agent and why).

The gate reads the rate; the summary table's verdict reads the rate's interval: where they part the line says so.
Rates are fractions in [0, 1]: ``--fail-above 20`` is a one-line usage error that suggests ``0.2``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.links import ordered
from ariadne_lc.records import AuditReport
from ariadne_lc.report._verdict import link_verdict

__all__ = ["DEFAULT_MIN_COVERAGE", "check_fraction", "gate_decision"]

DEFAULT_MIN_COVERAGE = 0.5
"""The share of the audited units that must have a verdict for the gate to read the rates at all."""


def check_fraction(option: str, value: float | None) -> float | None:
    """``value`` when it is ``None`` or in [0, 1]; else a one-line error that suggests the fraction."""
    if value is None or 0.0 <= value <= 1.0:
        return value
    hint = f": {value / 100:g} for {value:g}%" if 1.0 < value <= 100.0 else ""
    raise ConfigurationError(f"{option} takes a fraction in [0, 1]{hint}, got {value:g}")


def _ci(ci: Sequence[float] | None, confidence: float) -> str:
    return f" ({confidence:.0%} CI {ci[0]:.1%}-{ci[1]:.1%})" if ci else ""


def _link_rate(report: AuditReport, link: str) -> tuple[float | None, str]:
    """The rate the gate checks on ``link`` (``None``: none) and how to say it."""
    c, level = report.corrected, report.confidence
    if link == report.main_link and c is not None:
        if c.corrected is None:
            return None, f"no corrected violation rate ({c.reason})"
        raw = "-" if c.observed is None else f"{c.observed:.1%}"
        return c.corrected, f"{link} corrected violation rate {c.corrected:.1%}{_ci(c.corrected_ci, level)} (raw {raw})"
    a = report.by_link.get(link)
    if link == report.main_link and a is None:
        a = report.overall
    if a is None or a.violation_rate is None:
        return None, f"{link}: no verdict"
    return a.violation_rate, f"{link} raw violation rate {a.violation_rate:.1%}{_ci(a.violation_rate_ci, level)}"


def gate_decision(
    report: AuditReport,
    fail_above: float,
    *,
    links: Sequence[str] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> tuple[bool, str]:
    """Whether ``report`` passes ``--fail-above fail_above`` on ``links`` (default: every link it has), and the line
    that says why (each link's rate, which one failed)."""
    line = f"--fail-above {fail_above:.1%}"
    present: list[str] = ordered(report.by_link) or [report.main_link]
    checked = [link for link in present if not links or link in links]
    if not checked:
        return False, f"{line}: no information: the report has no audit on {', '.join(links or ())}; it fails closed"
    rates = {link: _link_rate(report, link) for link in checked}
    said = [text for _, text in rates.values()]
    calibrated = report.corrected is not None and report.main_link in rates
    if calibrated and report.corrected is not None and report.corrected.corrected is None:
        main = report.main_link
        return False, f"{line}: no information on {main}: {rates[main][1]}; the gate fails closed"
    if all(rate is None for rate, _ in rates.values()):
        on = ", ".join(checked)
        return False, f"{line}: no information: no contradiction audit was scored on {on}; the gate fails closed"
    cov = report.coverage
    audited = 0 if cov is None else cov.units - cov.left_out
    if cov is not None and audited and cov.with_verdict / audited < min_coverage:
        share = cov.with_verdict / audited
        return False, (
            f"{line}: failed on coverage: {cov.with_verdict} of {audited} audited units ({share:.0%}) got a verdict, "
            f"under --min-coverage {min_coverage:.0%} (why: {', '.join(f'{k} {n}' for k, n in cov.no_verdict.items())})"
        )
    agents = _per_agent(report, checked)
    if agents.unaudited:
        return False, f"{line}: failed closed: {'; '.join(agents.unaudited)}"
    above = [link for link, (rate, _) in rates.items() if rate is not None and rate > fail_above]
    above += [f"{name} on {link}" for (name, link), rate in agents.rates.items() if rate[0] > fail_above]
    said += [f"agents: {agents.said}"] if agents.said else []
    suffix = "" if calibrated else " (raw rates: no calibration was given)"
    undecided = [
        link for link in above if link in report.by_link and link_verdict(report.by_link[link])[0] == "no verdict"
    ]
    if undecided:  # the table's verdict reads the interval, the gate the rate: say so where they part
        suffix += (
            f" (the gate reads the rate; the table's verdict on {', '.join(undecided)} reads its interval, which "
            "contains the tolerance: no verdict there)"
        )
    if cov is not None and cov.unchecked:  # verdicts allowed without the replay invariant's check: said, every time
        suffix += f" ({cov.unchecked} verdicts from unchecked replays, allowed by --allow-unchecked)"
    if above:
        return False, f"{line}: failed on {', '.join(above)}, above {fail_above:.1%}: {'; '.join(said)}{suffix}"
    return True, f"{line}: passed: {'; '.join(said)}{suffix}"


@dataclass(frozen=True, slots=True)
class _Agents:
    """What the gate reads per agent in a report of several: each agent x link's raw rate, and why one could not be
    audited."""

    rates: dict[tuple[str, str], tuple[float, int, int]]
    """(agent, link) -> (weighted raw violation rate, violations, scored)."""
    unaudited: list[str]
    """Why the gate fails closed: an agent whose every audit failed, sub-agent runs not audited."""

    @property
    def said(self) -> str:
        return ", ".join(f"{name} {link} {rate:.1%} ({k}/{n})" for (name, link), (rate, k, n) in self.rates.items())


def _per_agent(report: AuditReport, links: Sequence[str]) -> _Agents:
    """Each agent x link of ``report`` (:attr:`~ariadne_lc.records.AuditReport.by_agent`: none for one agent)."""
    cov = report.coverage
    unaudited = [] if cov is None or not cov.runs_not_audited else [
        f"{cov.runs_not_audited} sub-agent run(s) the audited runs started were not audited (audit their traces too)"
    ]  # fmt: skip
    rates: dict[tuple[str, str], tuple[float, int, int]] = {}
    for name, by_link in report.by_agent.items():
        failed = sum(a.failed for a in by_link.values())
        if failed:  # a unit of this agent could not be audited: its rates do not speak for it
            errors = Counter(
                r.error_type or "error"
                for r in report.results
                if r.status == "failed" and not r.control and not r.run_failed and (r.agent_name or "agent") == name
            )
            why = ", ".join(f"{error} {n}" for error, n in errors.most_common())
            total = sum(a.n for a in by_link.values())
            unaudited.append(f"agent {name}: {failed} of {total} audits failed ({why})")
        for link in links:
            a = by_link.get(link)
            if a is not None and a.violation_rate is not None:
                rates[(name, link)] = (a.violation_rate, a.violations, a.scored)
    return _Agents(rates, unaudited)
