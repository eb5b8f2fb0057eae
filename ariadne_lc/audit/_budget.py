"""The default plan's budget: which units of a long run to audit, so an audit costs a known multiple of the run.

An exact verdict on unit k of a run of n model calls needs the run from k on replayed (about n - k calls), so auditing
every unit costs about n²/2 calls per replayed link. The default plan instead spends about ``budget`` x n calls per run
(:data:`DEFAULT_BUDGET`), and chooses which units to spend them on by a rule that keeps every link's rate unbiased:

* each link's units (in the order of the run) are sampled *systematically*, ``m`` of ``N`` at evenly spaced
  positions from a seeded random start. Every unit of the link then has the same known inclusion probability
  ``m / N``, which its results carry (:attr:`~ariadne_lc.records.AuditResult.inclusion`) and reports weight by; the
  evenly spaced positions also make the cost nearly the same on every run of one length (early units cost more).
* ``m`` per link comes from sharing the budget between the links the run has units for (water-filling: a link whose
  every unit fits its share takes them all and hands the rest on); every such link gets at least one unit.
* the start is drawn from the seed, the trace id and the link: the same run gets the same units in a batch, a resumed
  audit, online and in a dry run.

Nothing here calls a model: the cost of a planned audit is read off the run (:func:`audit_cost`).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ariadne_lc import links
from ariadne_lc.audit._plan import PlannedAudit
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import RunUnits
from ariadne_lc.trace import Trace, unit_kind

__all__ = ["DEFAULT_BUDGET", "Sampled", "audit_cost", "check_budget", "cost_bound", "plan_cost", "sample"]

DEFAULT_BUDGET: Final = 3.0
"""Model calls the default plan may spend per model call of the audited run (``None``: every unit, about n² calls on a
run of n)."""


def check_budget(budget: float | None) -> float | None:
    """``budget`` when it is ``None`` or a positive number (raises :class:`~ariadne_lc.errors.ConfigurationError`)."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0 or math.isinf(budget):
        raise ConfigurationError(
            f"budget must be a positive number of model calls per call of the audited run (3.0 by default), or None "
            f"to audit every unit, got {budget!r}"
        )
    return float(budget)


def audit_cost(trace: Trace, planned: PlannedAudit) -> int:
    """The model calls ``planned`` makes when it runs: one re-run of the step's model on ``thought->action``, else the
    model turns of the run after the step (each replayed once). An audit its gate refuses makes fewer."""
    if links.get(planned.link).strategy in ("rerun_step", "rerun_state"):
        return 1
    return max(1, len(trace.steps) - 1 - planned.steps[0])


def plan_cost(trace: Trace, planned: Sequence[PlannedAudit]) -> int:
    """The model calls of ``planned`` on ``trace``, all run (see :func:`audit_cost`)."""
    return sum(audit_cost(trace, p) for p in planned)


def cost_bound(run_calls: int, budget: float | None, *, links_planned: int = 3, audits_per_unit: int = 1) -> int:
    """At most how many model calls the plan spends on a run of ``run_calls`` model calls, for any seed, read off its
    length alone (for admission control, before the run is planned).

    With ``budget=None``, every unit of the two replayed links and the action link: n(n-1) + n. The to-do link adds
    no term: its unit is a ``write_todos`` step, whose output is bookkeeping (no output unit), and costs one call
    where that step's output unit would have cost a replay of at least one. With a budget B the
    plan aims at ``allowed`` = B x n calls and can spend more: its systematic sample takes a link's units at evenly
    spaced positions from a random start, and a unit's cost falls with its position (a replay from step k makes the
    n - k - 1 calls after it), so a link given a share S spends at most 2S (each pick after the first costs no more
    than the block of units before it, of at least half a step) plus its first pick, at most ``audits_per_unit`` x n
    calls; a link that fits its share whole spends at most S. Summed over the ``links_planned`` links: 2 x allowed +
    links x audits_per_unit x n, and never more than every unit (a re-run link's first pick costs one call, so the
    action link's n covers the to-do link's too). (Was B x n: a run
    of 100 calls at B = 3 spent up to 390, and one of 5 calls at B = 0.01 spent 6 against a "bound" of 1.)"""
    n = max(1, run_calls)
    every = n * n * audits_per_unit * max(1, math.ceil(links_planned / 3))
    if budget is None:
        return every
    allowed = max(1, math.floor(budget * n))
    return min(every, 2 * allowed + links_planned * audits_per_unit * n)


@dataclass(frozen=True, slots=True)
class Sampled:
    """The audits the budget kept, each carrying its unit's inclusion probability, and the run's units."""

    audits: list[PlannedAudit]
    units: RunUnits


def _shares(costs: dict[str, list[int]], budget: int) -> dict[str, int]:
    """How many units each link takes: the budget shared between the links, a link that fits whole taking every unit
    and handing what it leaves to the others; at least one each."""
    taken: dict[str, int] = {}
    left = float(budget)
    active = sorted(costs)
    while active:
        share = left / len(active)
        whole = [link for link in active if sum(costs[link]) <= share]
        if not whole:
            break
        for link in whole:
            taken[link] = len(costs[link])
            left -= sum(costs[link])
            active.remove(link)
    for link in active:
        mean = sum(costs[link]) / len(costs[link])
        taken[link] = max(1, min(len(costs[link]), int(left / len(active) / mean)))
    return taken


def _systematic(n: int, m: int, rng: random.Random) -> list[int]:
    """``m`` of ``range(n)`` at evenly spaced positions from a random start: each has probability ``m / n``."""
    if m >= n:
        return list(range(n))
    step = n / m
    start = rng.random() * step
    return sorted({min(n - 1, int(start + j * step)) for j in range(m)})


def sample(trace: Trace, planned: Sequence[PlannedAudit], *, budget: float | None, seed: int) -> Sampled:
    """The audits of ``planned`` (the default plan of ``trace``) that fit ``budget`` x the run's model calls.

    ``budget=None`` keeps every audit. Units are sampled per link; all the audits of one unit and link (the
    decisive variants, the controls beside a swap) are kept or left together.
    """
    by_link: dict[str, dict[tuple[int, str], list[PlannedAudit]]] = {}
    for p in planned:
        by_link.setdefault(p.link, {}).setdefault(p.unit, []).append(p)
    units = {u for per in by_link.values() for u in per}
    run_calls = len(trace.steps)
    allowed = None if budget is None else max(1, math.floor(budget * run_calls))
    costs = {link: [plan_cost(trace, audits) for audits in per.values()] for link, per in by_link.items()}
    total = sum(sum(c) for c in costs.values())
    if allowed is None or total <= allowed:
        kept, taken = list(planned), {link: len(per) for link, per in by_link.items()}
    else:
        taken = _shares(costs, allowed)
        chosen: set[tuple[str, tuple[int, str]]] = set()
        for link, per in by_link.items():
            ordered = sorted(per)
            rng = random.Random(f"{seed}:{trace.trace_id}:{link}")
            chosen.update((link, ordered[i]) for i in _systematic(len(ordered), taken[link], rng))
        kept = [
            dataclasses.replace(p, inclusion=taken[p.link] / len(by_link[p.link]))
            for p in planned
            if (p.link, p.unit) in chosen
        ]
    kinds = Counter(unit_kind(name) for _, name in units)
    return Sampled(
        audits=kept,
        units=RunUnits(
            thoughts=kinds["thought"],
            outputs=kinds["output"],
            states=kinds["state"],
            by_link={link: (taken[link], len(per)) for link, per in by_link.items()},
            run_calls=run_calls,
            budget_calls=allowed,
            planned_calls=plan_cost(trace, kept),
            agents=trace.agents_started,
        ),
    )
