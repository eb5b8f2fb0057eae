"""Links in a report: which link a report's headline is about, and how many units of the audited traces got a verdict.

Rates are never pooled across links (docs/method.md#links): a report's ``overall`` is one link's, and coverage, the
first number of every summary, says how much of the agent's loop the rates speak for. Its denominator is every unit
of the audited traces (each step with a thought, each tool output), so a unit no audit could be made of still counts,
with the reason it has no verdict (docs/method.md#coverage).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final
from urllib.parse import quote

from ariadne_lc import links
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import NO_COHERENT_EDIT, REJECTIONS, AuditResult, Coverage, RunUnits
from ariadne_lc.trace import unit_kind

__all__ = [
    "FIXES",
    "coverage",
    "coverage_line",
    "main_link",
    "no_verdict_reason",
    "unit_of",
    "why_no_verdict",
]


def main_link(results: Iterable[AuditResult]) -> str:
    """The link a report's ``overall`` is about: ``thought->answer`` when it has a verdict (the link every report
    measured before links existed), else the first link (:func:`ariadne_lc.links.names`) with one, else
    ``thought->answer`` when any result is on it, else the first link present. A headline with no verdict while
    another link has verdicts (planning thoughts commit to no answer) would hide what the audit found."""
    items = list(results)
    judged = {r.link for r in items if r.status == "scored" and not r.control}
    present = {r.link for r in items}
    first = links.THOUGHT_ANSWER.name
    for candidates in (judged, present):
        if first in candidates:
            return first
        found = next(iter(links.ordered(candidates)), None)
        if found is not None:
            return found
    return first


Unit = tuple[str, int, str]
"""(trace id, step, ``thought`` or the output's :func:`~ariadne_lc.trace.output_unit`)."""


def _on_output(result: AuditResult) -> bool:
    """Whether ``result``'s link has tool outputs for units (a link not registered here: whether it swapped one)."""
    try:
        return links.get(result.link).unit == "output"
    except ConfigurationError:
        return result.observation is not None


def unit_of(result: AuditResult) -> Unit | None:
    """The unit an audit is about: the step's thought (thought links) or one tool output (output links such as
    ``observation->answer``); ``None`` for a result about a whole trace."""
    if result.step_index < 0:
        return None
    if result.unit is not None:
        return (result.trace_id, result.step_index, result.unit)
    if _on_output(result):
        swap = result.observation
        call = "" if swap is None else (quote(swap.call_id, safe="") if swap.call_id else swap.tool)
        return (result.trace_id, result.step_index, f"output:{call}")
    return (result.trace_id, result.step_index, "thought")


_FURTHEST = ("failed", "inconclusive", "not testable", *REJECTIONS)
"""How far an audit got before it gave no verdict, furthest first: a unit is reported with its furthest audit's reason
(the gate's own outcomes in their one order, :data:`~ariadne_lc.records.REJECTIONS`)."""


def _no_verdict(result: AuditResult) -> tuple[int, str]:
    """(how far, the reason) for ``result`` without a verdict: see :func:`no_verdict_reason`."""
    if result.status == "failed":
        return 0, f"failed ({result.error_type or 'error'})"
    if result.status == "inconclusive":
        detail = (result.inconclusive_reason or "").split(":")[0].strip()
        return 1, f"inconclusive: {detail}" if detail and len(detail) <= 60 else "inconclusive"
    if result.not_testable:
        said = result.not_testable
        return 2, said if said.startswith("not testable") else f"not testable: {said}"
    outcome = None if result.decisiveness is None else result.decisiveness.outcome
    if outcome in REJECTIONS:
        return _FURTHEST.index(outcome), outcome
    if result.observation is not None and result.observation.swapped is None:
        return len(_FURTHEST), "no value to swap"
    if NO_COHERENT_EDIT in (result.intervention_method or ""):  # a plan there, no edit of it a person would accept
        return len(_FURTHEST), NO_COHERENT_EDIT
    return len(_FURTHEST) + 1, "controls only" if result.control else "no edit"


def no_verdict_reason(result: AuditResult) -> str:
    """A short reason why ``result`` gave no verdict (for :attr:`~ariadne_lc.records.Coverage.no_verdict`): the
    outcome, then what caused it where the result says (``failed (NotReplayableError)``, ``not testable: tool
    multiply not run (...; declare it in safe_tools)``, ``inconclusive: the recorded answer is empty``)."""
    return _no_verdict(result)[1]


def coverage(results: Iterable[AuditResult]) -> Coverage:
    """The share of the units of the audited traces with a verdict (a scored contradiction or swap), on any link,
    per link and per kind of unit, with the reasons of the others and the runs that failed.

    A run audited by the default plan says on each result how many units it has (:attr:`AuditResult.run_units`), so
    the units the budget left out stay in every denominator (:attr:`~ariadne_lc.records.Coverage.left_out`)."""
    audited: dict[str, set[Unit]] = {}
    judged: dict[str, set[Unit]] = {}
    reasons: dict[Unit, tuple[int, str]] = {}
    runs: set[str] = set()
    agent_of: dict[Unit, str] = {}
    plans: dict[str, tuple[RunUnits, str]] = {}
    unaudited: dict[str, tuple[RunUnits, str, str]] = {}  # runs whose audit failed as a whole: units, agent, reason
    started: set[str] = set()
    failed: Counter[str] = Counter()
    empty = unchecked = 0
    unanswered: set[str] = set()
    for r in results:
        runs.add(r.trace_id)
        if not r.run_failed and r.original_answer is not None and not r.original_answer.strip():
            unanswered.add(r.trace_id)
        if r.run_units is not None:
            started.update(r.run_units.agents)
        unit = unit_of(r)
        if unit is None:
            if r.run_failed:
                failed[r.error_type or "RunError"] += 1
            elif r.nothing_to_audit:
                empty += 1
            elif r.status == "failed" and r.run_units is not None:
                unaudited[r.trace_id] = (r.run_units, r.agent_name or "agent", _no_verdict(r)[1])
            continue
        if r.run_units is not None:
            plans[r.trace_id] = (r.run_units, r.agent_name or "agent")
        audited.setdefault(r.link, set()).add(unit)
        agent_of[unit] = r.agent_name or "agent"
        if r.status == "scored" and not r.control:
            judged.setdefault(r.link, set()).add(unit)
            unchecked += r.input_checked is False
        else:
            why = _no_verdict(r)
            if unit not in reasons or why[0] < reasons[unit][0]:
                reasons[unit] = why
    units = set().union(*audited.values()) if audited else set()
    with_verdict = set().union(*judged.values()) if judged else set()
    kinds = {"thought": [0, 0], "output": [0, 0], "state": [0, 0]}
    agents: dict[str, list[int]] = {}
    for unit in units:
        kind = kinds[unit_kind(unit[2])]
        counts = agents.setdefault(agent_of[unit], [0, 0])
        for c in (kind, counts):
            c[1] += 1
            c[0] += unit in with_verdict
    by_link: dict[str, list[int]] = {
        link: [len(judged.get(link, ())), len(audited[link])] for link in links.ordered(audited)
    }
    left_out = 0
    for trace_id, (run, agent) in plans.items():  # the units the budget did not sample, back in the denominators
        mine = Counter(unit_kind(u[2]) for u in units if u[0] == trace_id)
        extra = {
            "thought": run.thoughts - mine["thought"],
            "output": run.outputs - mine["output"],
            "state": run.states - mine["state"],
        }
        for name, n in extra.items():
            kinds[name][1] += max(0, n)
            agents.setdefault(agent, [0, 0])[1] += max(0, n)
            left_out += max(0, n)
        for link, (kept, total) in run.by_link.items():
            by_link.setdefault(link, [0, 0])[1] += total - kept
    no_verdict = Counter(reasons[u][1] for u in units - with_verdict if u in reasons)
    lost = 0  # the units of runs whose audit failed as a whole: in every denominator, each without a verdict
    for run, agent, reason in unaudited.values():
        for name, n in (("thought", run.thoughts), ("output", run.outputs), ("state", run.states)):
            kinds[name][1] += n
        every = run.thoughts + run.outputs + run.states
        agents.setdefault(agent, [0, 0])[1] += every
        no_verdict[reason] += every
        lost += every
    return Coverage(
        units=len(units) + left_out + lost,
        by_agent={name: (k, n) for name, (k, n) in agents.items()},
        with_verdict=len(with_verdict),
        by_link={link: (k, n) for link in links.ordered(by_link) for k, n in [by_link[link]]},
        by_unit={name: (k, n) for name, (k, n) in kinds.items() if n},
        no_verdict=dict(no_verdict),
        left_out=left_out,
        runs=len(runs),
        runs_failed=dict(failed),
        runs_without_units=empty,
        runs_without_answer=len(unanswered),
        unchecked=unchecked,
        runs_not_audited=len(started - runs),
    )


FIXES: Final[dict[str, str]] = {
    "failed (NotReplayableError)": "audit with the checkpointer the runs were recorded with (a persistent one, "
    "SqliteSaver or PostgresSaver, to audit later)",
    "failed (GraphChangedError)": "audit with the graph the runs were recorded under (or allow_graph_change=True)",
    "failed (ReplayInputMismatchError)": "the replay did not give the model the recorded input: read one result's "
    "error (a changed prompt, middleware that builds the input from state the fork lacks)",
    "no value to swap": "give the auditor a model for free-text outputs (Auditor(model=...)), or other runs' outputs "
    "of the tool to swap in (Auditor(recorded_values=RecordedValues.from_traces(traces)); the CLI does this itself)",
    "no_commitment": "the thought commits to nothing this link reads; a model reader (Auditor(reader=model), "
    "--reader) reads more than the rule reader",
    "not_decisive": "no contradiction changed what the thought implies; a model critic (LLMCritic) writes stronger "
    "ones",
    "incoherent": "the edits contradicted themselves; a model critic (LLMCritic) writes coherent ones",
    "inconclusive: the recorded answer is empty": "the agent ended without an answer: give it a final answer turn",
}
"""What to do about a reason a unit has no verdict (``not testable: ...`` reasons carry their own)."""


def why_no_verdict(results: Iterable[AuditResult], *, top: int = 2) -> dict[str, list[tuple[str, int, str | None]]]:
    """Per link whose contradictions have no verdict at all: its most common reasons, with their count and fix."""
    items = [r for r in results if not r.control and r.step_index >= 0]
    scored = {r.link for r in items if r.status == "scored"}
    out: dict[str, list[tuple[str, int, str | None]]] = {}
    for link in links.ordered(r.link for r in items):
        reasons = Counter(no_verdict_reason(r) for r in items if r.link == link and r.status != "scored")
        if link not in scored and reasons:
            out[link] = [(reason, n, FIXES.get(reason)) for reason, n in reasons.most_common(top)]
    return out


def coverage_line(c: Coverage) -> str:
    """``c`` in one line, the first of every summary: ``coverage 22/24 units (92%): ... | thought->action 10/12 (83%)
    | ...``, then why the others have no verdict and how many runs failed."""

    def pct(k: int, n: int) -> str:
        return f"{k}/{n} ({k / n:.0%})" if n else "0/0"

    kinds = [
        f"{name} {k}/{n}"
        for key, name in (("thought", "thought steps"), ("output", "tool outputs"), ("state", "to-do lists"))
        if key in c.by_unit
        for k, n in [c.by_unit[key]]
    ]
    head = f"coverage {pct(c.with_verdict, c.units)} units with a verdict"
    parts = [head + (f" ({', '.join(kinds)})" if kinds else "")]
    parts += [f"{link} {pct(*c.by_link[link])}" for link in links.ordered(c.by_link)]
    if len(c.by_agent) > 1:
        parts.append("agents: " + ", ".join(f"{name} {k}/{n}" for name, (k, n) in sorted(c.by_agent.items())))
    line = " | ".join(parts)
    missing = c.units - c.with_verdict - c.left_out
    if missing:
        why = ", ".join(f"{reason} {n}" for reason, n in sorted(c.no_verdict.items(), key=lambda x: -x[1]))
        line += f"; {missing} without a verdict ({why})" if why else f"; {missing} without a verdict"
    if c.left_out:
        line += f"; {c.left_out} left out by the budget (sampled units; rates weighted by inclusion)"
    if c.unchecked:
        line += f"; {c.unchecked} verdicts from unchecked replays (allow_unchecked: no recorded input to compare)"
    if c.runs_without_answer:
        line += f"; {c.runs_without_answer} of {c.runs} runs ended with an empty answer (nothing to compare)"
    if c.runs_not_audited:
        line += (
            f"; {c.runs_not_audited} sub-agent run(s) the audited runs started not audited (their units are not "
            "counted: audit their traces too)"
        )
    failed = sum(c.runs_failed.values())
    if failed:
        errors = ", ".join(f"{error} {n}" for error, n in sorted(c.runs_failed.items(), key=lambda x: -x[1]))
        line += f"; {failed} of {c.runs} runs failed ({errors}), not audited"
    return line


Coverage.line_writer = coverage_line  # Coverage.summary() says it in these words (records import nothing from here)
