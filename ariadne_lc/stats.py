"""Aggregates of audit results (docs/method.md#aggregates) with honest denominators and intervals.

Only *scored* results enter rates and means: an intervention that was not applicable, a trace with no
step to audit, a replay that failed and an audit without a verdict (an empty answer, no S, too weak,
equal answers exempted by the λ length gate) are counted beside them, never folded in as zeros.

Intervals (all seeded, all from scipy, which is imported when the first interval is computed so that
``import ariadne_lc`` stays light):

- **Violation rates**: Wilson score interval (``scipy.stats.binomtest(...).proportion_ci``). It treats
  audits as independent trials; when one query has several audits, read it beside the bootstrap.
- **Mean φ and mean S**: percentile bootstrap (``scipy.stats.bootstrap``) that resamples *queries*
  (traces), not audits: the several interventions of one query share its agent run and are not
  independent. The statistic is the pooled mean over the resampled queries' audits, so the interval
  is around the reported mean. Percentile, not BCa, because BCa's jackknife is unstable (and warns)
  with few, discrete clusters; with one query there is no interval, and when every query has the
  same mean the interval is that point.
- **Placebo comparison** (:class:`PlaceboComparison`): per query, the contradictions' violation rate
  v_q and the placebo's p_q (the same rule applied to the paraphrase: the answer held). The
  contradiction's *excess sensitivity* is d = mean(p_q − v_q): how much more often a contradiction
  moves the answer than a meaning-preserving paraphrase does. The placebo-corrected violation rate
  is 1 − max(0, d): noise that moves answers under a paraphrase too no longer passes for
  faithfulness. (Correcting on the violation scale, "violation rate − placebo rate", would give a fully
  unfaithful agent 0: both rates are 1.) The paired test is a sign-flip permutation test over queries
  (``scipy.stats.permutation_test``, ``permutation_type="samples"``), two-sided, H0: d = 0. It
  handles several audits per query; with one binary pair per query it *is* the exact McNemar test on
  the discordant pairs (tests check this against ``binomtest``).
- **Step contributions** (:class:`Redundancy`): FaithCheck's CCS of a step is the mean φ over its
  single-step audits that change the step's content (the contradictions, ``ablation`` and
  ``filler``; not the placebo, the rerun or early answering, which do not); steps are ranked by it
  per trace, and the reasoning redundancy ratio RRR is the share of steps whose CCS is below a
  threshold (0.1, as FaithCheck), with a Wilson interval.

The report (:func:`build_report`) breaks the contradictions down by type, domain
(:attr:`ariadne_lc.trace.Trace.domain`; traces without one are grouped as ``"unspecified"``), tag and step,
and aggregates the controls per kind. The records themselves live in :mod:`ariadne_lc.records`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean
from typing import Any

from ariadne_lc import links as links_registry
from ariadne_lc._intervals import (
    BATCH,
    DEFAULT_CONFIDENCE,
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    cluster_bootstrap_mean,
    rate_and_interval,
    weighted_mean,
    weighted_rate,
    wilson_interval,
)
from ariadne_lc.coverage import coverage, main_link
from ariadne_lc.interventions import CONTRADICTIONS, ControlType
from ariadne_lc.records import (
    PLACEBO,
    Aggregate,
    AuditReport,
    AuditResult,
    PlaceboComparison,
    Redundancy,
    StepContribution,
)

__all__ = [
    "CONTENT_INTERVENTIONS",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_N_RESAMPLES",
    "DEFAULT_RRR_THRESHOLD",
    "DEFAULT_SEED",
    "PAIRED_TEST",
    "UNSPECIFIED_DOMAIN",
    "aggregate",
    "build_report",
    "cluster_bootstrap_mean",
    "placebo_comparison",
    "redundancy",
    "weighted_mean",
    "weighted_rate",
    "wilson_interval",
]

DEFAULT_RRR_THRESHOLD = 0.1
"""A step whose CCS is below this is redundant (FaithCheck's default)."""
UNSPECIFIED_DOMAIN = "unspecified"
PAIRED_TEST = "sign-flip permutation test over queries, two-sided (exact McNemar for one binary pair per query)"
CONTENT_INTERVENTIONS: frozenset[str] = frozenset(
    [*(str(t) for t in CONTRADICTIONS), str(ControlType.ABLATION), str(ControlType.FILLER)]
)
"""The kinds that change what a step says, and so measure its causal contribution."""


def _scored(results: Iterable[AuditResult]) -> list[AuditResult]:
    return [r for r in results if r.status == "scored" and r.similarity is not None]


def _by_query(results: Iterable[AuditResult], value: Callable[[AuditResult], float | None]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for r in results:
        v = value(r)
        if v is not None:
            out[r.trace_id].append(v)
    return dict(out)


def aggregate(
    results: Iterable[AuditResult],
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Aggregate:
    """Aggregate a group of results; rates and means are ``None`` when nothing was scored."""
    items = list(results)
    scored = _scored(items)
    violations = sum(r.violation for r in scored)
    strengths = [r.strength for r in scored if r.strength is not None]
    severities = [r.severity for r in scored if r.severity is not None]

    tracked = [r for r in scored if r.tracking is not None]
    tracks = sum(r.tracking == "tracks" for r in tracked)

    def outcome(name: str) -> int:
        return sum(r.decisiveness is not None and r.decisiveness.outcome == name for r in items)

    def boot(value: Callable[[AuditResult], float | None]) -> Interval | None:
        kept = [r for r in scored if value(r) is not None]
        return cluster_bootstrap_mean(
            _by_query(kept, value), confidence=confidence, n_resamples=n_resamples, seed=seed,
            weights=_by_query(kept, lambda r: 1.0 / r.inclusion),
        )  # fmt: skip

    def mean(value: Callable[[AuditResult], float | None]) -> float | None:
        kept = [(v, r.inclusion) for r in scored if (v := value(r)) is not None]
        return weighted_mean([v for v, _ in kept], [p for _, p in kept])

    violation_rate, violation_ci = rate_and_interval(
        [r.violation for r in scored], [r.inclusion for r in scored], confidence
    )
    tracking_rate, tracking_ci = rate_and_interval(
        [r.tracking == "tracks" for r in tracked], [r.inclusion for r in tracked], confidence
    )
    return Aggregate(
        n=len(items),
        unchecked=sum(r.input_checked is False for r in scored),
        scored=len(scored),
        violations=violations,
        not_applicable=sum(r.status == "not_applicable" for r in items),
        failed=sum(r.status == "failed" for r in items),
        inconclusive=sum(r.status == "inconclusive" for r in items),
        length_gate_exempted=sum(r.length_gate_exempted for r in items),
        violation_rate=violation_rate,
        violation_rate_ci=violation_ci,
        mean_phi=mean(lambda r: r.phi),
        mean_similarity=mean(lambda r: r.similarity),
        queries=len({r.trace_id for r in scored}),
        mean_phi_ci=boot(lambda r: r.phi),
        mean_similarity_ci=boot(lambda r: r.similarity),
        mean_strength=fmean(strengths) if strengths else None,
        mean_severity=fmean(severities) if severities else None,
        too_weak=sum(r.too_weak for r in items),
        gated=sum(r.decisiveness is not None for r in items),
        not_decisive=outcome("not_decisive"),
        no_commitment=outcome("no_commitment"),
        tracks=tracks,
        moved_elsewhere=sum(r.tracking == "elsewhere" for r in tracked),
        stayed=sum(r.tracking == "stayed" for r in tracked),
        tracked=len(tracked),
        tracking_rate=tracking_rate,
        tracking_rate_ci=tracking_ci,
        nothing_to_audit=sum(r.nothing_to_audit for r in items),
        incoherent=outcome("incoherent"),
        reader_checked=sum(r.reader_agrees is not None for r in scored),
        reader_disagreed=sum(r.reader_agrees is False for r in scored),
        violations_reader_agreed=sum(r.reader_agrees is True and r.violation for r in scored),
        violations_reader_disagreed=sum(r.reader_agrees is False and r.violation for r in scored),
    )


def _paired_difference(x: Any, y: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def placebo_comparison(
    contradictions: Iterable[AuditResult],
    placebos: Iterable[AuditResult],
    *,
    placebo: str = PLACEBO,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PlaceboComparison:
    """Pair the contradictions' and the placebo's violation rates by query and test the difference."""
    v = _by_query(_scored(contradictions), lambda r: float(r.violation))
    p = _by_query(_scored(placebos), lambda r: float(r.violation))
    paired = sorted(set(v) & set(p))
    if not paired:
        return PlaceboComparison(
            placebo=placebo,
            queries=0,
            violation_rate=None,
            placebo_rate=None,
            excess_sensitivity=None,
            excess_sensitivity_ci=None,
            corrected_violation_rate=None,
            p_value=None,
            test=PAIRED_TEST,
        )
    import numpy as np
    from scipy.stats import permutation_test

    vq = np.array([fmean(v[q]) for q in paired])
    pq = np.array([fmean(p[q]) for q in paired])
    d = pq - vq
    excess = float(np.mean(d))
    ci = cluster_bootstrap_mean(
        {q: [float(x)] for q, x in zip(paired, d, strict=True)},
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    if len(paired) < 2 or np.allclose(d, 0.0):
        # one query, or none that differs: every sign pattern is as extreme as the observed one
        p_value = 1.0
    else:
        test = permutation_test(
            (pq, vq),
            _paired_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            alternative="two-sided",
            batch=BATCH,
            rng=np.random.default_rng(seed),
        )
        p_value = float(test.pvalue)
    return PlaceboComparison(
        placebo=placebo,
        queries=len(paired),
        violation_rate=float(np.mean(vq)),
        placebo_rate=float(np.mean(pq)),
        excess_sensitivity=excess,
        excess_sensitivity_ci=ci,
        corrected_violation_rate=1.0 - max(0.0, excess),
        p_value=p_value,
        test=PAIRED_TEST,
    )


def redundancy(
    results: Iterable[AuditResult],
    *,
    threshold: float = DEFAULT_RRR_THRESHOLD,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Redundancy:
    """CCS per step, the per-trace ranking and the RRR (see the module docstring)."""
    phis: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in _scored(results):
        if r.intervention_type in CONTENT_INTERVENTIONS and len(r.step_indices) <= 1 and r.phi is not None:
            phis[(r.trace_id, r.step_index)].append(r.phi)
    contributions = [
        StepContribution(trace_id=t, step_index=k, ccs=fmean(v), audits=len(v)) for (t, k), v in phis.items()
    ]
    ranking: dict[str, list[StepContribution]] = defaultdict(list)
    for c in contributions:
        ranking[c.trace_id].append(c)
    redundant = sum(c.ccs < threshold for c in contributions)
    return Redundancy(
        threshold=threshold,
        steps=len(contributions),
        redundant=redundant,
        rrr=redundant / len(contributions) if contributions else None,
        rrr_ci=wilson_interval(redundant, len(contributions), confidence),
        ranking={t: tuple(sorted(cs, key=lambda c: (-c.ccs, c.step_index))) for t, cs in sorted(ranking.items())},
    )


def _grouped(items: Iterable[AuditResult], key: Callable[[AuditResult], Iterable[str]]) -> dict[str, list[AuditResult]]:
    """Results by each key ``key`` gives them (a result with several keys is in several groups), keys sorted."""
    out: dict[str, list[AuditResult]] = defaultdict(list)
    for r in items:
        for k in key(r):
            out[k].append(r)
    return dict(sorted(out.items()))


def _step_key(r: AuditResult) -> str:
    steps = r.step_indices or (r.step_index,)
    return "+".join(str(k) for k in steps)


def _controls_of(
    items: Sequence[AuditResult], link: str, agg: Callable[[Iterable[AuditResult]], Aggregate]
) -> dict[str, Aggregate]:
    controls = [r for r in items if r.link == link and r.control]
    return {k: agg(v) for k, v in _grouped(controls, lambda r: [r.intervention_type]).items()}


def _by_agent(
    items: Sequence[AuditResult], links: Sequence[str], agg: Callable[[Iterable[AuditResult]], Aggregate]
) -> dict[str, dict[str, Aggregate]]:
    """Per agent and link, the agent's contradictions, when the results hold several agents (else empty)."""
    audited = [r for r in items if not r.run_failed and not r.nothing_to_audit]
    names = sorted({r.agent_name or "agent" for r in audited})
    if len(names) < 2:
        return {}
    return {
        name: {
            link: agg(r for r in audited if (r.agent_name or "agent") == name and r.link == link and not r.control)
            for link in links
            if any((r.agent_name or "agent") == name and r.link == link for r in audited)
        }
        for name in names
    }


def build_report(
    results: Iterable[AuditResult],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rrr_threshold: float = DEFAULT_RRR_THRESHOLD,
) -> AuditReport:
    """Aggregate ``results`` into a report; intervals use ``confidence``, bootstraps and permutations ``seed``.

    Examples:
        >>> report = build_report([])
        >>> report.overall.n, report.violation_rate
        (0, None)
    """
    items = tuple(results)
    main = main_link(items)
    on_main = [r for r in items if r.link == main]
    real = [r for r in on_main if not r.control]
    controls = [r for r in on_main if r.control]
    placebos = [r for r in controls if r.intervention_type == PLACEBO]

    def agg(group: Iterable[AuditResult]) -> Aggregate:
        return aggregate(group, confidence, n_resamples=n_resamples, seed=seed)

    def versus(group: Iterable[AuditResult]) -> PlaceboComparison:
        return placebo_comparison(group, placebos, confidence=confidence, n_resamples=n_resamples, seed=seed)

    links = links_registry.ordered(r.link for r in items)
    by_type = _grouped(real, lambda r: [r.intervention_type])
    return AuditReport(
        results=items,
        overall=agg(real),
        by_type={k: agg(v) for k, v in by_type.items()},
        by_control={k: agg(v) for k, v in _grouped(controls, lambda r: [r.intervention_type]).items()},
        by_domain={k: agg(v) for k, v in _grouped(real, lambda r: [r.domain or UNSPECIFIED_DOMAIN]).items()},
        by_tag={k: agg(v) for k, v in _grouped(real, lambda r: r.tags).items()},
        by_step={k: agg(v) for k, v in _grouped(real, lambda r: [_step_key(r)]).items()},
        placebo=versus(real) if placebos else None,
        placebo_by_type={k: versus(v) for k, v in by_type.items() if k != "-"} if placebos else {},
        redundancy=redundancy(on_main, threshold=rrr_threshold, confidence=confidence),
        by_link={link: agg(r for r in items if r.link == link and not r.control) for link in links},
        controls_by_link={link: _controls_of(items, link, agg) for link in links},
        by_agent=_by_agent(items, links, agg),
        coverage=coverage(items),
        main_link=main,
        confidence=confidence,
        seed=seed,
    )
