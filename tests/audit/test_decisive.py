"""The ``decisive`` selector's variants: each is what it was when every variant walked the chain from the start, and
each contradiction of a step and link is made and gated once for all of them."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc._cache import Lru
from ariadne_lc._twin import run_sync
from ariadne_lc.audit._decisive import Chain, ChainKey, decisive
from ariadne_lc.audit._plan import PlannedAudit
from ariadne_lc.interventions import Intervention, RuleCritic
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace
from tests.helpers import MODELS, build_agent, record, two_step_model

ONLY_THREE = "no decisive contradiction (only 3 decisive contradiction(s) for this step; "


class CountingCritic:
    """The rule critic, counting its first edits per kind (revisions pass through uncounted)."""

    def __init__(self) -> None:
        self.rule = RuleCritic()
        self.calls: Counter[str] = Counter()

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        self.calls[intervention_type] += 1
        return self.rule.intervene(thought, intervention_type, query=query)

    def revise(
        self, thought: str, intervention_type: str, *, query: str = "", rejected: Sequence[str] = (), feedback: str = ""
    ) -> Intervention:
        return self.rule.revise(thought, intervention_type, query=query, rejected=rejected, feedback=feedback)


@pytest.fixture(scope="module")
def graph() -> Any:
    return build_agent(MODELS["faithful"](), "create_agent", InMemorySaver())


@pytest.fixture(scope="module")
def trace(graph: Any) -> Trace:
    return record(graph)


def _outcomes(results: list[AuditResult]) -> list[tuple[str | None, str, str | None, str]]:
    return [
        (
            r.plan_key,
            r.intervention_type,
            None if r.decisiveness is None else r.decisiveness.outcome,
            (r.intervention_method or "")[: len(ONLY_THREE)],
        )
        for r in results
    ]


def test_each_variant_is_the_next_accepted_contradiction_and_then_why_none_is_left(graph: Any, trace: Trace) -> None:
    auditor = Auditor(graph, contradictions_per_step=3, budget=None)
    assert _outcomes(auditor.audit(trace, interventions="decisive")) == [
        ("0:thought:thought->answer:decisive:0", "conclusion_swap", "decisive", "rule:conclusion-calculation"),
        ("0:thought:thought->answer:decisive:1", "logic_flip", "decisive", "rule:antonym"),
        ("0:thought:thought->answer:decisive:2", "fact_reversal", "decisive", "rule:numbers"),
    ]
    more = Auditor(graph, contradictions_per_step=5, budget=None).audit(trace, interventions="decisive")
    left = [(f"0:thought:thought->answer:decisive:{v}", "decisive", "not_decisive", ONLY_THREE) for v in (3, 4)]
    assert _outcomes(more)[3:] == left
    assert all(r.status == "not_applicable" for r in more[3:])
    tried = "conclusion_swap: rule:conclusion-calculation; logic_flip: rule:antonym; fact_reversal: rule:numbers; "
    assert more[3].intervention_method is not None and more[3].intervention_method.startswith(ONLY_THREE + tried)
    assert more[3].intervention_method == more[4].intervention_method
    assert more[3].decisiveness == more[4].decisiveness  # the gate record that got furthest, the same for each


def test_the_gate_off_takes_the_applicable_edits_in_order(graph: Any, trace: Trace) -> None:
    results = Auditor(graph, contradictions_per_step=7, budget=None, decisive=False).audit(
        trace, interventions="decisive"
    )
    kinds = [r.intervention_type for r in results]
    assert (
        kinds
        == ["conclusion_swap", "logic_flip", "fact_reversal", "premise_negation", "causal_reversal"] + ["decisive"] * 2
    )
    assert results[5].intervention_method is not None
    assert results[5].intervention_method.startswith("no decisive contradiction (only 5 decisive contradiction(s)")


def test_the_critic_makes_each_kind_once_per_step_and_link_across_the_variants(graph: Any, trace: Trace) -> None:
    critic = CountingCritic()
    auditor = Auditor(graph, critic=critic, contradictions_per_step=3, budget=None)
    assert len(auditor.audit(trace, interventions="decisive")) == 3
    assert critic.calls == {"conclusion_swap": 1, "logic_flip": 1, "fact_reversal": 1}
    auditor.audit(trace, interventions="decisive")  # variant 0 starts afresh: an audit run again makes its edits again
    assert critic.calls == {"conclusion_swap": 2, "logic_flip": 2, "fact_reversal": 2}


def test_two_steps_keep_their_own_chains_sync_and_async() -> None:
    graph = build_agent(two_step_model(), "create_agent", InMemorySaver())
    trace = record(graph)
    critic = CountingCritic()
    auditor = Auditor(graph, critic=critic, contradictions_per_step=3, budget=None)
    expected = [
        ("0:thought:thought->answer:decisive:0", "conclusion_swap", "decisive", "rule:conclusion-calculation"),
        ("0:thought:thought->answer:decisive:1", "logic_flip", "decisive", "rule:antonym"),
        ("0:thought:thought->answer:decisive:2", "fact_reversal", "decisive", "rule:numbers"),
        ("1:thought:thought->answer:decisive:0", "conclusion_swap", "decisive", "rule:conclusion-number"),
        ("1:thought:thought->answer:decisive:1", "fact_reversal", "decisive", "rule:numbers"),
        ("1:thought:thought->answer:decisive:2", "decisive", "not_decisive", ONLY_THREE.replace("3", "2")),
    ]
    assert _outcomes(auditor.audit(trace, interventions="decisive")) == expected
    calls = dict(critic.calls)
    assert _outcomes(asyncio.run(auditor.aaudit(trace, interventions="decisive"))) == expected
    assert critic.calls == {kind: 2 * n for kind, n in calls.items()}
    assert max(calls.values()) == 2  # each kind once per step (the steps' chains are apart)


def test_the_flow_with_a_shared_chain_gives_what_each_variant_gives_alone(trace: Trace) -> None:
    critic = CountingCritic()
    chains: Lru[ChainKey, Chain] = Lru(4)

    def maker(_trace: Trace, _k: int, _kind: str) -> CountingCritic:
        return critic

    def made(variant: int, shared: Lru[ChainKey, Chain] | None) -> tuple[str | None, str, bool]:
        planned = PlannedAudit(kind="decisive", steps=(0,), selection="fixed", variant=variant)
        one = run_sync(decisive(maker, trace, planned, None, shared))
        return one.kind, one.method, one.applicable

    alone = [made(v, None) for v in range(7)]
    assert sum(critic.calls.values()) == 1 + 2 + 3 + 4 + 5 + 6 + 6  # the gate off: every applicable edit counts
    critic.calls.clear()
    assert [made(v, chains) for v in range(7)] == alone
    assert sum(critic.calls.values()) == 6 and len(chains) == 1
