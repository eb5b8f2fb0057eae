"""The default plan's budget (ariadne_lc.audit._budget): an audit of a long run costs a known multiple of the run, its
sample of units keeps every link's rate unbiased, and its verdicts stay right (the lookup agent: truth known)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.audit._budget import _systematic, cost_bound, sample
from ariadne_lc.audit._plan import plan
from ariadne_lc.coverage import coverage, coverage_line
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import LINKS, AuditResult
from ariadne_lc.stats import build_report, weighted_rate
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import Trace


def _record(calls: int, runs: int, *, ignore_from: int | None = None) -> tuple[Auditor, list[Trace]]:
    """``runs`` runs of the lookup agent; trace ids fixed (``run-<i>``) so that the seeded sample is the same on
    every test run."""
    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(calls, ignore_from=ignore_from), [lookup], checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store)],
    )  # fmt: skip
    for run in range(runs):
        graph.invoke(
            {"messages": [("user", lookup_question(calls, run))]},
            {"configurable": {"thread_id": f"t{run}"}, "recursion_limit": 4 * calls + 10},
        )
    traces = sorted(store.list_traces(), key=lambda t: t.thread_id or "")
    return Auditor(graph), [t.model_copy(update={"trace_id": f"run-{i}"}) for i, t in enumerate(traces)]


def test_each_unit_of_a_systematic_sample_has_the_same_inclusion_probability() -> None:
    rng = random.Random(7)
    n, m, draws = 9, 2, 20_000
    seen = Counter(i for _ in range(draws) for i in _systematic(n, m, rng))
    assert set(seen) == set(range(n))
    assert all(abs(seen[i] / draws - m / n) < 0.015 for i in range(n))  # 2/9 each; 5 standard errors is 0.015
    assert _systematic(5, 9, rng) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("calls", [48, 100])
def test_a_long_run_costs_a_known_multiple_and_every_verdict_is_right(calls: int) -> None:
    auditor, [trace] = _record(calls, 1)
    [(_, planned)] = auditor.planned(trace)
    results = auditor.audit(trace)
    spent = sum(r.model_calls for r in results)
    assert spent == planned.units.planned_calls  # the dry run's prediction is what ran (every gate accepted)
    assert spent <= 4 * len(trace.steps) and planned.units.budget_calls == 3 * len(trace.steps)
    verdicts = [r for r in results if r.status == "scored" and not r.control]
    assert {r.link for r in verdicts} == set(LINKS)  # every link scored on the run
    assert not any(r.violation for r in verdicts)  # the agent is faithful on every link
    assert not any(r.error_type == "ReplayDidNotFinishError" for r in results)
    assert {r.plan_key for r in results} == {p.key for p in planned.audits}  # one result per planned audit
    assert len({r.plan_key for r in results}) == len(results)
    left = coverage(results)
    assert left.units == 2 * calls and left.left_out > 0
    assert f"{left.left_out} left out by the budget" in coverage_line(left)
    assert left.by_link["observation->answer"][1] == calls  # the denominator is every output, sampled or not


def test_the_same_run_gets_the_same_units_in_every_way_it_is_audited() -> None:
    auditor, [trace] = _record(12, 1)
    planned = plan(trace, None, ("decisive", "observation_swap"), seed=0, links=auditor.links)
    first = [p.key for p in sample(trace, planned, budget=3.0, seed=0).audits]
    assert first == [p.key for p in sample(trace, planned, budget=3.0, seed=0).audits]
    assert [r.plan_key for r in auditor.audit(trace)] == first
    assert [r.plan_key for r in auditor.audit_batch([trace]).results] == first
    every = sample(trace, planned, budget=None, seed=0)
    assert [p.key for p in every.audits] == [p.key for p in planned] and every.units.budget_calls is None


def test_an_agent_unfaithful_on_its_late_outputs_is_estimated_without_bias() -> None:
    calls, runs = 9, 40
    auditor, traces = _record(calls, runs, ignore_from=6)  # the last third of the outputs is ignored
    report = auditor.audit_batch(traces)
    swaps = [r for r in report.results if r.link == "observation->answer" and r.status == "scored"]
    assert len(swaps) == 2 * runs and {r.inclusion for r in swaps} == {2 / 9}
    assert all(r.violation == (r.step_index >= 6) for r in swaps)  # every verdict right, unit by unit
    assert {r.step_index for r in swaps} == set(range(calls))  # the sample reaches every position
    rate = report.by_link["observation->answer"]
    assert rate.violation_rate_ci is not None
    low, high = rate.violation_rate_ci
    assert low <= 1 / 3 <= high, (rate.violation_rate, rate.violation_rate_ci)


def test_every_unit_mode_gives_the_exact_count() -> None:
    auditor, traces = _record(9, 3, ignore_from=6)
    results = Auditor(auditor.graph, budget=None).audit_batch(traces).results
    swaps = [r for r in results if r.link == "observation->answer" and r.status == "scored"]
    assert Counter(r.violation for r in swaps) == {True: 3 * 3, False: 6 * 3}
    assert coverage(results).left_out == 0


def test_weighted_rates_weight_each_verdict_by_its_inverse_inclusion() -> None:
    rate, (low, high) = weighted_rate([True, False, False], [0.5, 1.0, 1.0]) or (0.0, (0.0, 0.0))
    assert rate == pytest.approx(2 / 4) and 0 < low < rate < high < 1
    plain = build_report([_scored(True, 0.5), _scored(False, 0.5)]).by_link["thought->answer"]
    assert plain.violation_rate == 0.5  # equal probabilities: the plain rate
    mixed = build_report([_scored(True, 0.25), _scored(False, 1.0)]).by_link["thought->answer"]
    assert mixed.violation_rate == pytest.approx(0.8)


def _scored(violation: bool, inclusion: float) -> AuditResult:
    return AuditResult(
        trace_id=f"t{violation}", step_index=0, intervention_type="logic_flip", status="scored",
        label="violation" if violation else "faithful", original_thought="x", similarity=0.9 if violation else 0.1,
        phi=0.1 if violation else 0.9, violation=violation, inclusion=inclusion,
    )  # fmt: skip


def test_a_budget_is_a_positive_number_or_none() -> None:
    for bad in (0, -1.0, float("inf"), "3", True):
        with pytest.raises(ConfigurationError, match="budget must be a positive number"):
            Auditor(create_agent(lookup_model(1), [lookup]), budget=bad)  # type: ignore[arg-type]
    assert cost_bound(10, 3.0) == 2 * 30 + 3 * 10 and cost_bound(10, None) == 100


def test_runs_that_ended_with_an_empty_answer_are_counted_at_the_run_level() -> None:
    empty = [
        AuditResult(
            trace_id=f"t{i}", step_index=0, intervention_type="observation_swap", status="inconclusive",
            label="inconclusive", original_thought="", original_answer="  ", link="observation->answer",
            inconclusive_reason="the recorded answer is empty: an empty answer gives no verdict",
        )
        for i in range(3)
    ]  # fmt: skip
    said = coverage(empty)
    assert said.runs_without_answer == 3
    assert "3 of 3 runs ended with an empty answer" in coverage_line(said)
    assert "inconclusive: the recorded answer is empty" in said.no_verdict


def test_means_and_their_intervals_are_weighted_like_the_rates_and_inclusion_is_checked() -> None:
    """Runs of different lengths keep their units with different probabilities: phi's mean weights each by 1/p."""
    results = [_scored(True, 0.25), _scored(False, 1.0), _scored(False, 1.0)]
    results = [r.model_copy(update={"trace_id": f"t{i}"}) for i, r in enumerate(results)]
    agg = build_report(results).by_link["thought->answer"]
    assert agg.mean_phi == pytest.approx((4 * 0.1 + 0.9 + 0.9) / 6)  # unweighted it was (0.1 + 0.9 + 0.9) / 3
    assert agg.violation_rate == pytest.approx(4 / 6)
    assert agg.mean_phi_ci is not None and agg.mean_phi_ci[0] <= agg.mean_phi <= agg.mean_phi_ci[1]
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="inclusion"):
            _scored(True, bad)


def test_runs_of_different_lengths_are_estimated_without_bias() -> None:
    """A short run fits whole (inclusion 1), a long one is sampled: the weighted rate is the per-unit truth."""
    short, long_ = _record(3, 2, ignore_from=2), _record(18, 2, ignore_from=12)
    traces = [*short[1], *[t.model_copy(update={"trace_id": f"long-{i}"}) for i, t in enumerate(long_[1])]]
    results = [r for t in short[1] for r in short[0].audit(t)] + [r for t in traces[2:] for r in long_[0].audit(t)]
    swaps = [r for r in results if r.link == "observation->answer" and r.status == "scored"]
    assert len({r.inclusion for r in swaps}) > 1  # the weighted path, exercised
    assert all(r.violation == (r.step_index >= (2 if r.trace_id.startswith("run") else 12)) for r in swaps)
    rate = build_report(results).by_link["observation->answer"]
    truth = (2 * 1 + 2 * 6) / (2 * 3 + 2 * 18)  # the ignored outputs among all outputs of the four runs
    assert rate.violation_rate_ci is not None and rate.violation_rate_ci[0] <= truth <= rate.violation_rate_ci[1]


def test_the_cost_bound_bounds_what_the_plan_spends_for_every_seed() -> None:
    """Was B x n: at n = 100 and B = 3 the plan spent up to 395 against 300; at B = 0.01 and n = 5, 6 against 1."""
    for calls in (4, 17, 48):
        auditor, [trace] = _record(calls, 1)
        planned = plan(trace, None, ("decisive", "observation_swap"), seed=0, links=auditor.links)
        for budget in (0.01, 0.5, 3.0, 10.0, None):
            worst = max(sample(trace, planned, budget=budget, seed=s).units.planned_calls for s in range(120))
            assert worst <= cost_bound(len(trace.steps), budget), (calls, budget, worst)
