"""The ``decisive`` selector of the default plan: per thought step and link, the first contradictions the gate accepts.

The contradictions are tried in the link's :data:`~ariadne_lc.audit._plan.DECISIVE_ORDER`, each made by its critic
(the rule critic, or for ``plan_swap`` a plan critic given the step's tools) and read by the link's gate; the
``variant``-th accepted one is the audit's intervention, and the result names it. When the original thought commits
to nothing the link reads, the others are not tried: the reading of the original is the same for every kind. With
the gate off, the ``variant``-th applicable edit is used. Written as a flow (:mod:`ariadne_lc._twin`).
"""

from __future__ import annotations

from collections.abc import Callable

from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._gate import Gate
from ariadne_lc.audit._made import Made
from ariadne_lc.audit._plan import DECISIVE, DECISIVE_ORDER, PlannedAudit
from ariadne_lc.interventions import Critic, Intervention, aintervene_with
from ariadne_lc.records import Decisiveness
from ariadne_lc.trace import Trace

__all__ = ["critic_call", "decisive"]

_FURTHEST = {"not_decisive": 0, "incoherent": 1, "no_commitment": 2}
"""Which gate record a step with no decisive contradiction is reported with: the one that got furthest."""


def decisive(
    maker: Callable[[Trace, int, str], Critic], trace: Trace, planned: PlannedAudit, gate: Gate | None
) -> Flow[Made]:
    """The ``variant``-th contradiction of the step's thought that ``gate`` accepts (module docstring); none:
    ``not_applicable`` with each kind's reason, and the gate record that got furthest."""
    k = planned.steps[0]
    thought = trace.step(k).thought
    found = 0
    tried: list[Made] = []
    for kind in DECISIVE_ORDER.get(planned.link, DECISIVE_ORDER["thought->answer"]):
        critic = maker(trace, k, kind)
        made: Intervention = yield critic_call(critic, thought, kind, trace.query)
        record: Decisiveness | None = None
        if gate is not None:
            made, record = yield from gate.check(critic, thought, kind, trace.query, made)
        one = Made({k: made}, {} if record is None else {k: record}, kind=kind)
        if made.applicable and made.intervened is not None:
            if found == planned.variant:
                return one
            found += 1
        tried.append(one)
        if record is not None and record.outcome == "no_commitment":
            break
    best = min(
        (m for m in tried if m.decisiveness is not None),
        key=lambda m: _FURTHEST.get(m.decisiveness.outcome if m.decisiveness else "", 3),
        default=None,
    )
    reasons = "; ".join(f"{m.kind}: {m.method}" for m in tried)
    if found and planned.variant >= found:
        reasons = f"only {found} decisive contradiction(s) for this step; {reasons}"
    missing = Intervention.not_applicable(DECISIVE, thought, f"no decisive contradiction ({reasons})")
    return Made({k: missing}, {} if best is None else best.gate)


def critic_call(critic: Critic, thought: str, kind: str, query: str) -> Call[Intervention]:
    """One edit of ``thought`` by ``critic`` (its async ``aintervene`` where it has one)."""
    return Call(
        lambda: critic.intervene(thought, kind, query=query),
        lambda: aintervene_with(critic, thought, kind, query=query),
    )
