"""The ``decisive`` selector of the default plan: per thought step and link, the first contradictions the gate accepts.

The contradictions are tried in the link's :attr:`~ariadne_lc.links.LinkSpec.decisive_order`, each made by its critic
(the rule critic, or for ``plan_swap`` a plan critic given the step's tools) and read by the link's gate; the
``variant``-th accepted one is the audit's intervention, and the result names it. When the original thought commits
to nothing the link reads, the others are not tried: the reading of the original is the same for every kind. With
the gate off, the ``variant``-th applicable edit is used. Written as a flow (:mod:`ariadne_lc._twin`).

The kinds tried so far form the step's :class:`Chain`, kept per (trace, step, link, thought, gate) in a bounded
cache the runner's threads share: the plan's variants 0..n-1 of one step and link run one after another, and each
continues the chain where the one before left it, so every kind is made and gated once per step and link, not once
per variant, and no variant walks further than it would alone. Variant 0 starts a new chain: an audit run again (a
critic that samples, a plan critic given the arguments seen since) makes its edits again, as it did before the
cache. A variant's result depends only on the chain, so it is the one it would have had without the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ariadne_lc import links
from ariadne_lc._cache import Lru
from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._gate import Gate
from ariadne_lc.audit._outcome import Edits
from ariadne_lc.audit._plan import DECISIVE, PlannedAudit
from ariadne_lc.interventions import Critic, Intervention, aintervene_with
from ariadne_lc.records import REJECTIONS, Decisiveness
from ariadne_lc.trace import Trace

__all__ = ["DECISIVE_CHAINS", "Chain", "ChainKey", "critic_call", "decisive"]

DECISIVE_CHAINS = 256
"""Chains kept (oldest out first): a step's variants need theirs only until the last of them has run."""

_FURTHEST: dict[str, int] = {outcome: rank for rank, outcome in enumerate(REJECTIONS)}
"""Which gate record a step with no decisive contradiction is reported with: the one that got furthest
(:data:`~ariadne_lc.records.REJECTIONS`, the one order of the gate's rejections)."""

ChainKey = tuple[str, int, str, str, int]
"""(trace id, step, link, thought, ``id`` of the gate): a :class:`Chain`'s key."""


@dataclass(frozen=True, slots=True)
class Chain:
    """The kinds of one step and link tried so far, in the link's order, each as made and read by the gate."""

    gate: Gate | None
    """The gate that read them (compared by identity on a hit: an ``id`` in the key may be reused)."""
    tried: tuple[Edits, ...] = ()
    done: bool = False
    """No kind is left to try: every one was, or the original thought commits to nothing."""

    def accepted(self) -> list[Edits]:
        return [m for m in self.tried if m.applicable]


def decisive(
    maker: Callable[[Trace, int, str], Critic],
    trace: Trace,
    planned: PlannedAudit,
    gate: Gate | None,
    chains: Lru[ChainKey, Chain] | None = None,
) -> Flow[Edits]:
    """The ``variant``-th contradiction of the step's thought that ``gate`` accepts (module docstring); none:
    ``not_applicable`` with each kind's reason, and the gate record that got furthest. ``chains``: where the step's
    chain is kept for the next variant (``None``: each variant makes its own)."""
    k = planned.steps[0]
    thought = trace.step(k).thought
    kinds = links.get(planned.link).decisive_order or links.THOUGHT_ANSWER.decisive_order
    key: ChainKey = (trace.trace_id, k, planned.link, thought, id(gate))
    chain = None if chains is None or planned.variant == 0 else chains.get(key)
    if chain is None or chain.gate is not gate:
        chain = Chain(gate, done=not kinds)
    accepted = chain.accepted()
    while len(accepted) <= planned.variant and not chain.done:
        kind = kinds[len(chain.tried)]
        one = yield from _tried(maker(trace, k, kind), thought, kind, trace.query, gate, k)
        stop = one.decisiveness is not None and one.decisiveness.outcome == "no_commitment"
        chain = Chain(gate, (*chain.tried, one), done=stop or len(chain.tried) + 1 == len(kinds))
        if chains is not None:
            chains.put(key, chain)
        accepted = chain.accepted()
    if planned.variant < len(accepted):
        return accepted[planned.variant]
    found = len(accepted)
    best = min(
        (m for m in chain.tried if m.decisiveness is not None),
        key=lambda m: _FURTHEST.get(m.decisiveness.outcome if m.decisiveness else "", 3),
        default=None,
    )
    reasons = "; ".join(f"{m.kind}: {m.method}" for m in chain.tried)
    if found and planned.variant >= found:
        reasons = f"only {found} decisive contradiction(s) for this step; {reasons}"
    missing = Intervention.not_applicable(DECISIVE, thought, f"no decisive contradiction ({reasons})")
    return Edits({k: missing}, {} if best is None else best.gate)


def _tried(critic: Critic, thought: str, kind: str, query: str, gate: Gate | None, k: int) -> Flow[Edits]:
    """``kind`` made by ``critic`` and read by ``gate``."""
    made: Intervention = yield critic_call(critic, thought, kind, query)
    record: Decisiveness | None = None
    if gate is not None:
        made, record = yield from gate.check(critic, thought, kind, query, made)
    return Edits({k: made}, {} if record is None else {k: record}, kind=kind)


def critic_call(critic: Critic, thought: str, kind: str, query: str) -> Call[Intervention]:
    """One edit of ``thought`` by ``critic`` (its async ``aintervene`` where it has one)."""
    return Call(
        lambda: critic.intervene(thought, kind, query=query),
        lambda: aintervene_with(critic, thought, kind, query=query),
    )
