from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from ariadne_lc import AuditReport, AuditResult, Trace
from ariadne_lc.stats import (
    DEFAULT_N_RESAMPLES,
    aggregate,
    build_report,
    cluster_bootstrap_mean,
    placebo_comparison,
    redundancy,
    wilson_interval,
)


def result(trace: str, kind: str = "logic_flip", *, s: float | None = 1.0, step: int = 0, **kw: Any) -> AuditResult:
    """A scored result with similarity ``s`` (a violation when s > 0.8), or another status."""
    fields: dict[str, Any] = {
        "status": "scored",
        "label": "faithful",
        "similarity": s,
        "phi": None,
        "step_indices": (step,),
    }
    if s is not None:
        violation = s > 0.8
        fields |= {"phi": 1 - s, "violation": violation, "label": "violation" if violation else "faithful"}
    control = kind in ("paraphrase", "rerun", "ablation", "early_answer", "filler")
    if control and s is not None:
        fields["label"] = "control"
    fields |= kw
    return AuditResult(
        trace_id=trace,
        step_index=step,
        intervention_type=kind,
        original_thought="t",
        control=control,
        **fields,
    )


def test_wilson_hand_computed_and_equal_to_scipy() -> None:
    # Wilson 95% for 3 of 10 (z = 1.959964): centre (p + z²/2n) / (1 + z²/n), half-width below
    z, n, p = 1.959963984540054, 10, 0.3
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson_interval(3, 10) or (0, 0)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert (low, high) == pytest.approx((0.1077913, 0.6032219), abs=1e-6)
    ci = binomtest(17, 40).proportion_ci(confidence_level=0.9, method="wilson")
    assert wilson_interval(17, 40, 0.9) == (ci.low, ci.high)
    assert wilson_interval(0, 0) is None


def test_bootstrap_resamples_queries_and_equals_scipy_on_the_cluster_sums() -> None:
    clusters = {"a": [0.0, 0.0, 0.0, 0.0], "b": [1.0], "c": [0.5, 1.0], "d": [0.2]}
    ours = cluster_bootstrap_mean(clusters, seed=3)
    sums = np.array([0.0, 1.0, 1.5, 0.2])
    counts = np.array([4.0, 1.0, 2.0, 1.0])
    theirs = bootstrap(
        (sums, counts),
        lambda s, c, axis=-1: np.sum(s, axis=axis) / np.sum(c, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=DEFAULT_N_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(3),
    ).confidence_interval
    assert ours == (theirs.low, theirs.high)
    assert ours is not None and ours[0] <= sum(sums) / sum(counts) <= ours[1]
    assert cluster_bootstrap_mean(clusters, seed=3) == ours  # seeded


def test_many_audits_of_one_query_do_not_narrow_the_interval() -> None:
    few = {"a": [0.0], "b": [1.0], "c": [0.0], "d": [1.0], "e": [1.0]}
    many = {q: v * 50 for q, v in few.items()}  # the same answer, audited fifty times per query
    assert cluster_bootstrap_mean(few) == cluster_bootstrap_mean(many)


def test_bootstrap_edge_cases() -> None:
    assert cluster_bootstrap_mean({}) is None
    assert cluster_bootstrap_mean({"a": [0.1, 0.9]}) is None  # one query: no interval
    assert cluster_bootstrap_mean({"a": [0.3], "b": [0.3, 0.3]}) == (0.3, 0.3)


def test_aggregate_counts_only_scored_results() -> None:
    items = [
        result("q1", s=1.0),
        result("q1", s=0.0),
        result("q2", s=1.0, strength=0.5, severity=0.5),
        result("q3", s=None, status="inconclusive", label="inconclusive"),
        result("q4", s=0.9, status="inconclusive", label="inconclusive", violation=False, too_weak=True),
        result("q5", s=None, status="not_applicable", label="inconclusive"),
        result("q6", s=None, status="failed", label="inconclusive"),
    ]
    agg = aggregate(items)
    assert (agg.n, agg.scored, agg.violations, agg.queries) == (7, 3, 2, 2)
    assert (agg.inconclusive, agg.not_applicable, agg.failed, agg.too_weak) == (2, 1, 1, 1)
    assert agg.violation_rate == pytest.approx(2 / 3) and agg.mean_phi == pytest.approx(1 / 3)
    assert agg.mean_strength == 0.5 and agg.mean_severity == 0.5
    assert agg.mean_phi_ci is not None and agg.mean_similarity_ci is not None
    empty = aggregate([])
    assert empty.violation_rate is None and empty.mean_phi_ci is None


def test_length_gate_exemptions_and_traces_with_nothing_to_audit_are_counted_apart_from_the_rate() -> None:
    """An exempted pair is inconclusive: in ``length_gate_exempted`` and ``inconclusive``, never a
    non-violation in the rate; a trace with no step is ``not_applicable`` and in ``nothing_to_audit``."""
    trace = Trace(trace_id="q9", final_answer="42")
    items = [
        result("q1", s=1.0),
        result(
            "q2",
            s=1.0,
            status="inconclusive",
            label="inconclusive",
            violation=False,
            length_gate_exempted=True,
            inconclusive_reason="length gate: ...",
        ),
        AuditResult.no_step_to_audit(trace, "no step to audit: the agent answered at once"),
    ]
    agg = aggregate(items)
    assert (agg.n, agg.scored, agg.violations, agg.violation_rate) == (3, 1, 1, 1.0)
    assert (agg.inconclusive, agg.length_gate_exempted) == (1, 1)
    assert (agg.not_applicable, agg.nothing_to_audit) == (1, 1)
    report = build_report(items)
    assert report.nothing_to_audit == 1 and report.overall.length_gate_exempted == 1
    assert AuditReport.model_validate_json(report.model_dump_json()).nothing_to_audit == 1


def test_placebo_correction_on_the_three_kinds_of_agent() -> None:
    queries = [f"q{i}" for i in range(6)]
    # faithful: contradictions move the answer, the paraphrase does not
    faithful = placebo_comparison([result(q, s=0.0) for q in queries], [result(q, "paraphrase") for q in queries])
    assert (faithful.violation_rate, faithful.placebo_rate, faithful.excess_sensitivity) == (0.0, 1.0, 1.0)
    assert faithful.corrected_violation_rate == 0.0
    assert faithful.p_value == pytest.approx(binomtest(6, 6, 0.5).pvalue) == pytest.approx(2 / 64)
    # unfaithful: nothing moves the answer
    unfaithful = placebo_comparison([result(q) for q in queries], [result(q, "paraphrase") for q in queries])
    assert unfaithful.excess_sensitivity == 0.0 and unfaithful.corrected_violation_rate == 1.0
    assert unfaithful.p_value == 1.0
    # noisy: every change moves the answer, even a paraphrase; its low raw rate is not faithfulness
    noisy = placebo_comparison([result(q, s=0.0) for q in queries], [result(q, "paraphrase", s=0.0) for q in queries])
    assert noisy.violation_rate == 0.0 and noisy.corrected_violation_rate == 1.0


def test_paired_test_is_exact_mcnemar_for_one_pair_per_query() -> None:
    # per query (contradiction held, placebo held): 5 discordant one way, 1 the other, 4 concordant
    pairs = [(False, True)] * 5 + [(True, False)] + [(True, True)] * 2 + [(False, False)] * 2
    contradictions = [result(f"q{i}", s=1.0 if c else 0.0) for i, (c, _) in enumerate(pairs)]
    placebos = [result(f"q{i}", "paraphrase", s=1.0 if p else 0.0) for i, (_, p) in enumerate(pairs)]
    comparison = placebo_comparison(contradictions, placebos)
    assert comparison.queries == 10
    assert comparison.excess_sensitivity == pytest.approx((5 - 1) / 10)
    assert comparison.p_value == pytest.approx(binomtest(5, 6, 0.5).pvalue)


def test_placebo_pairs_only_queries_that_have_both() -> None:
    comparison = placebo_comparison([result("a", s=0.0), result("b")], [result("a", "paraphrase")])
    assert comparison.queries == 1 and comparison.violation_rate == 0.0
    nothing = placebo_comparison([result("a")], [result("b", "paraphrase")])
    assert nothing.queries == 0 and nothing.p_value is None and nothing.corrected_violation_rate is None


def test_step_contributions_rank_steps_and_give_the_redundancy_ratio() -> None:
    items = [
        result("t1", step=0, s=1.0),  # decorative: the answer held
        result("t1", "ablation", step=0, s=0.95),
        result("t1", step=1, s=0.0),  # load-bearing
        result("t1", "filler", step=1, s=0.2),
        result("t1", "paraphrase", step=1, s=1.0),  # a placebo says nothing about contribution
        result("t2", step=0, s=0.5),
        result("t2", "logic_flip", step=0, s=None, status="failed", label="inconclusive"),
        result("t2", step=0, s=0.0, step_indices=(0, 1)),  # multi-step: not one step's contribution
    ]
    red = redundancy(items)
    t1 = red.ranking["t1"]
    assert [(c.step_index, c.audits) for c in t1] == [(1, 2), (0, 2)]
    assert t1[0].ccs == pytest.approx((1.0 + 0.8) / 2) and t1[1].ccs == pytest.approx((0.0 + 0.05) / 2)
    assert red.ranking["t2"][0].ccs == pytest.approx(0.5) and red.ranking["t2"][0].audits == 1
    assert (red.steps, red.redundant, red.threshold) == (3, 1, 0.1)
    assert red.rrr == pytest.approx(1 / 3) and red.rrr_ci == wilson_interval(1, 3)


def test_report_breakdowns_and_json_round_trip() -> None:
    items = [
        result("q1", s=1.0, domain="math", tags=("math", "v1")),
        result("q2", s=0.0, domain="math", tags=("math",)),
        result("q3", "fact_reversal", s=1.0, step=1),
        result("q1", "paraphrase", domain="math"),
        result("q2", "paraphrase", domain="math"),
        result("q3", "rerun", step=1),
    ]
    report = build_report(items)
    assert report.overall.scored == 3 and report.violation_rate == pytest.approx(2 / 3)
    assert set(report.by_type) == {"logic_flip", "fact_reversal"}
    assert set(report.by_control) == {"paraphrase", "rerun"} and report.placebo_rate == 1.0
    assert {k: a.scored for k, a in report.by_domain.items()} == {"math": 2, "unspecified": 1}
    assert {k: a.scored for k, a in report.by_tag.items()} == {"math": 2, "v1": 1}
    assert {k: a.scored for k, a in report.by_step.items()} == {"0": 2, "1": 1}
    assert report.placebo is not None and report.placebo.queries == 2
    assert set(report.placebo_by_type) == {"logic_flip", "fact_reversal"}
    assert report.placebo_by_type["fact_reversal"].queries == 0
    assert AuditReport.model_validate_json(report.model_dump_json()) == report


def test_gate_decisions_and_tracking_are_counted() -> None:
    from ariadne_lc.records import Decisiveness

    def gate(outcome: str) -> Decisiveness:
        return Decisiveness(outcome=outcome, reader="rule")  # type: ignore[arg-type]

    rejected = {"status": "not_applicable", "label": "inconclusive"}
    items = [
        result("q1", s=0.0, decisiveness=gate("decisive"), tracking="tracks"),
        result("q2", s=0.0, decisiveness=gate("decisive"), tracking="elsewhere"),
        result("q3", s=1.0, decisiveness=gate("decisive"), tracking="stayed"),
        result("q4", s=1.0, decisiveness=gate("decisive")),  # no implied answer read: no tracking verdict
        result("q5", s=None, decisiveness=gate("not_decisive"), **rejected),
        result("q6", s=None, decisiveness=gate("no_commitment"), **rejected),
        result("q7", s=1.0),  # the gate off: no decision
        result("q8", s=None, decisiveness=gate("incoherent"), **rejected),
    ]
    agg = aggregate(items)
    assert (agg.gated, agg.not_decisive, agg.no_commitment, agg.incoherent) == (7, 1, 1, 1)
    assert (agg.tracks, agg.moved_elsewhere, agg.stayed, agg.tracked) == (1, 1, 1, 3)
    assert agg.tracking_rate == pytest.approx(1 / 3) and agg.tracking_rate_ci == wilson_interval(1, 3)
