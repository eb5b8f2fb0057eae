"""Correcting an observed violation rate for the pipeline's own misclassification (Rogan–Gladen).

If a fraction π of an agent's audits are truly unfaithful, the pipeline calls a violation with
probability v = FA·(1 − π) + (1 − M)·π, where FA is its false-alarm rate (on faithful audits) and M its
miss rate (on unfaithful ones). Solving for π gives the Rogan–Gladen estimator
π̂ = (v − FA) / (1 − FA − M), clipped to [0, 1]. When FA + M ≥ 1 the denominator is not positive: the
pipeline calls violations on faithful agents at least as often as on unfaithful ones, so v says nothing
about π. Then there is no number, only the reason.

**Interval.** π̂ carries three sampling errors: v's (the audited queries) and FA's and M's (the calibration's
coupled and bypass queries). A percentile bootstrap resamples all three independently, each by *query*
(the audits of one query share its agent run), and recomputes π̂. A resample with FA* + M* ≥ 1 has no
estimate; rather than dropping it (which would hide how close the calibration is to uninformative), it is
counted as possibly anywhere in [0, 1]: at 0 for the lower quantile, at 1 for the upper one. Seeded. The
interval also always contains the observed rate's Wilson interval mapped through the correction at the point FA
and M: a percentile bootstrap of 0 violations in 3 audits (or 49 in 49) resamples the same rate every time and
would claim [0%, 0%] (or [100%, 100%]), while the Wilson interval says what so few audits can and cannot show.

**Applicability.** A calibration holds for one configuration (model, critic, scorer, τ, λ):
:func:`check_config` refuses any other with :class:`~ariadne_lc.errors.CalibrationMismatchError`. The
pooled FA and M hold for the mix of contradiction types the calibration ran; a report with a type the
calibration did not measure gets no pooled correction (the reason says which type).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ariadne_lc.calibration.records import CalibrationConfig
from ariadne_lc.calibration.results import ALL_TYPES, Calibration, ErrorRates
from ariadne_lc.errors import CalibrationMismatchError, ConfigurationError
from ariadne_lc.records import CorrectedRate, Rate
from ariadne_lc.stats import wilson_interval

if TYPE_CHECKING:
    from ariadne_lc.records import AuditReport, AuditResult

__all__ = [
    "DEFAULT_CORRECTION_RESAMPLES",
    "apply_calibration",
    "audit_config",
    "check_config",
    "correct_rate",
    "rogan_gladen",
    "violation_clusters",
]

DEFAULT_CORRECTION_RESAMPLES = 4000
"""Bootstrap resamples of a corrected rate (its percentile interval's Monte Carlo error is below 0.01)."""
_CELLS = 2_000_000
"""Resample × query cells drawn at once: bounds memory whatever the number of queries."""


def rogan_gladen(observed: float, false_alarm: float, miss: float) -> float | None:
    """(v − FA) / (1 − FA − M), *not* clipped; ``None`` when FA + M ≥ 1 (no information).

    Examples:
        >>> rogan_gladen(0.5, 0.1, 0.2)
        0.5714285714285714
        >>> rogan_gladen(0.5, 0.6, 0.4) is None
        True
    """
    denominator = 1.0 - false_alarm - miss
    if denominator <= 0.0:
        return None
    return (observed - false_alarm) / denominator


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def violation_clusters(results: Iterable[AuditResult]) -> list[tuple[float, float]]:
    """(violations, scored) per trace over the scored contradictions, each audit weighted by 1/inclusion as the
    report's rates are (docs/method.md#the-budget; 1 when the budget kept every unit): the observed rate's bootstrap
    units."""
    counts: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in results:
        if r.control or r.status != "scored" or r.similarity is None:
            continue
        cell = counts[r.trace_id]
        weight = 1.0 / r.inclusion
        cell[0] += weight * r.violation
        cell[1] += weight
    return [(k, n) for k, n in counts.values()]


def _resampled_rates(clusters: Sequence[tuple[float, float]], n_resamples: int, rng: Any) -> Any:
    """Rates of ``n_resamples`` bootstrap samples of the clusters (pooled k / pooled n)."""
    import numpy as np

    k = np.array([c[0] for c in clusters], dtype=float)
    n = np.array([c[1] for c in clusters], dtype=float)
    out = np.empty(n_resamples)
    batch = max(1, _CELLS // max(1, len(k)))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        idx = rng.integers(0, len(k), size=(size, len(k)))
        out[start : start + size] = k[idx].sum(axis=1) / n[idx].sum(axis=1)
    return out


def _clusters(rate: Rate) -> list[tuple[float, float]]:
    """The rate's query clusters; a rate stored without them counts each trial as its own query."""
    if rate.clusters:
        return [c for c in rate.clusters if c[1] > 0]
    return [(1.0, 1.0)] * rate.k + [(0.0, 1.0)] * (rate.n - rate.k)


def correct_rate(
    clusters: Sequence[tuple[float, float]],
    errors: ErrorRates,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_CORRECTION_RESAMPLES,
    seed: int = 0,
    observed_ci: tuple[float, float] | None = None,
    calibration: str = "",
    scored: int | None = None,
) -> CorrectedRate:
    """Correct the violation rate of ``clusters`` ((violations, scored) per query) with ``errors``.

    Args:
        clusters: The audited sample, one (violations, scored) pair per query; weighted sums where the audits had
            unequal inclusion probabilities (:func:`violation_clusters`).
        errors: FA and M (with their query clusters) from a calibration.
        confidence: Level of the bootstrap interval.
        n_resamples: Bootstrap resamples.
        seed: Seed of the bootstrap (the same inputs and seed give the same interval).
        observed_ci: The observed rate's own interval (a weighted rate's, where the audits were weighted), copied
            into the record; the corrected interval always contains it mapped through the correction.
        calibration: The calibration's configuration in words, copied into the record.
        scored: How many audits the clusters hold (their weighted total when not given).
    """
    import numpy as np

    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ConfigurationError(f"n_resamples must be at least 1, got {n_resamples}")
    audited = [c for c in clusters if c[1] > 0]
    total = sum(n for _, n in audited)
    observed = sum(k for k, _ in audited) / total if total else None
    if scored is None:
        scored = round(total)
    fa, m = errors.false_alarm.rate, errors.miss.rate
    base: dict[str, Any] = {
        "observed": observed,
        "observed_ci": observed_ci,
        "scored": scored,
        "queries": len(audited),
        "false_alarm": fa,
        "miss": m,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "intervention": errors.intervention,
        "calibration": calibration,
    }
    if fa is None or m is None:
        missing = "coupled" if fa is None else "bypass"
        return CorrectedRate(
            **base,
            corrected=None,
            informative=False,
            reason=f"the calibration scored no {missing} audits for {errors.intervention!r}, so its "
            f"{'false-alarm' if fa is None else 'miss'} rate is unknown",
        )
    unclipped = rogan_gladen(observed, fa, m) if observed is not None else None
    if fa + m >= 1.0:
        return CorrectedRate(
            **base,
            corrected=None,
            informative=False,
            reason=f"FA + M = {fa:.2f} + {m:.2f} >= 1: the pipeline calls violations on faithful agents at least "
            "as often as on unfaithful ones, so the observed rate carries no information about the true one",
        )
    if observed is None or unclipped is None:
        return CorrectedRate(**base, corrected=None, informative=True, reason="no scored contradiction audits")
    rng = np.random.default_rng(seed)
    v_star = _resampled_rates(audited, n_resamples, rng)
    fa_star = _resampled_rates(_clusters(errors.false_alarm), n_resamples, rng)
    m_star = _resampled_rates(_clusters(errors.miss), n_resamples, rng)
    denominator = 1.0 - fa_star - m_star
    defined = denominator > 0.0
    estimate = np.clip((v_star - fa_star) / np.where(defined, denominator, 1.0), 0.0, 1.0)
    alpha = 1.0 - confidence
    low = float(np.quantile(np.where(defined, estimate, 0.0), alpha / 2))
    high = float(np.quantile(np.where(defined, estimate, 1.0), 1.0 - alpha / 2))
    floor = observed_ci or wilson_interval(round(sum(k for k, _ in audited)), scored, confidence)
    if floor is not None:  # never narrower than what the audited sample alone allows (module docstring)
        for bound in floor:
            mapped = rogan_gladen(bound, fa, m)
            if mapped is not None:
                low, high = min(low, _clip(mapped)), max(high, _clip(mapped))
    undefined = int(n_resamples - defined.sum())
    return CorrectedRate(
        **base,
        corrected=_clip(unclipped),
        unclipped=unclipped,
        corrected_ci=(low, high),
        informative=True,
        undefined_resamples=undefined,
        reason=(
            f"{undefined} of {n_resamples} bootstrap resamples had FA + M >= 1 and widen the interval"
            if undefined
            else None
        ),
    )


def check_config(calibration: Calibration, config: CalibrationConfig) -> None:
    """Refuse a calibration made for another configuration (:class:`~ariadne_lc.errors.CalibrationMismatchError`)."""
    differences = calibration.config.differences(config)
    if differences:
        raise CalibrationMismatchError(
            f"the calibration was made for {calibration.config.describe()}, not for {config.describe()} "
            f"({'; '.join(differences)}); its error rates do not apply: run `ariadne-lc calibrate` with "
            "this configuration",
            differences,
        )


_CRITICS = {"rule": "rule", "llm": "llm"}
_SCORERS = {"answer_match": "answer", "numeric_answer": "answer", "llm_judge": "judge", "embedding": "embedding"}


def _named(values: set[str], names: dict[str, str], what: str, default: str | None) -> str:
    found = {names.get(v.split(":", 1)[0], v) for v in values}
    if not found and default is not None:
        return default
    if len(found) != 1:
        raise ConfigurationError(
            f"cannot tell the {what} of these results ({', '.join(sorted(found)) or 'none recorded'}): "
            f"a calibration applies to one {what}; audit with one or filter the results"
        )
    return found.pop()


def audit_config(
    results: Iterable[AuditResult],
    *,
    model: str,
    tau: float,
    lam: int,
    critic: str | None = None,
    scorer: str | None = None,
) -> CalibrationConfig:
    """The configuration scored contradiction audits ran with, read from what each result recorded
    (``intervention_method``: ``rule:*`` or ``llm*``; ``similarity_method``: ``answer_match``,
    ``numeric_answer``, ``llm_judge`` or ``embedding``). The model, τ and λ are not recorded in a result
    and are given; ``critic`` and ``scorer`` stand in when no result was scored. A mix of critics or scorers
    is a :class:`~ariadne_lc.errors.ConfigurationError`."""
    items = list(results)
    scored = [r for r in items if not r.control and r.status == "scored"]
    gated = {r.decisiveness.reader for r in items if not r.control and r.decisiveness is not None}
    if len(gated) > 1:
        raise ConfigurationError(
            f"these results were gated by several readers ({', '.join(sorted(gated))}): a calibration applies to one"
        )
    return CalibrationConfig(
        model=model,
        critic=_named({r.intervention_method or "" for r in scored}, _CRITICS, "critic", critic),
        scorer=_named({r.similarity_method or "" for r in scored}, _SCORERS, "scorer", scorer),
        tau=tau,
        lam=lam,
        decisive=bool(gated),
        reader=next(iter(gated), None),
    )


def apply_calibration(
    report: AuditReport,
    calibration: Calibration,
    config: CalibrationConfig,
    *,
    method: str = "ariadne",
    n_resamples: int = DEFAULT_CORRECTION_RESAMPLES,
) -> AuditReport:
    """``report`` with its raw violation rates corrected by ``calibration``, overall and per type.

    Args:
        report: The audit report to correct.
        calibration: A calibration made with ``config``.
        config: The configuration the report's audits ran with; another one than the calibration's
            raises :class:`~ariadne_lc.errors.CalibrationMismatchError`.
        method: Which method's rates to use (``ariadne`` for reports of the :class:`~ariadne_lc.Auditor`).
        n_resamples: Bootstrap resamples; the seed and confidence are the report's.
    """
    made_for = calibration.config.ungated() if method == "ariadne_ungated" else calibration.config
    check_config(calibration.model_copy(update={"config": made_for}), config)
    rates = calibration.method(method)
    described = f"{calibration.config.describe()}, method={method}"

    def correct(results: Sequence[AuditResult], errors: ErrorRates, ci: tuple[float, float] | None) -> CorrectedRate:
        return correct_rate(
            violation_clusters(results),
            errors,
            scored=sum(1 for r in results if r.similarity is not None),
            confidence=report.confidence,
            n_resamples=n_resamples,
            seed=report.seed,
            observed_ci=ci,
            calibration=described,
        )

    # the calibration's agents measure the thought contradictions on the report's main link: its error rates say
    # nothing of another link's (an observation_swap on observation->answer, a plan_swap on thought->action), so only
    # that link is corrected; the gate reads the others raw and says so
    link = report.main_link
    contradictions = [r for r in report.results if not r.control and r.status == "scored" and r.link == link]
    by_type: dict[str, CorrectedRate] = {}
    for kind, agg in report.by_type.items():
        if kind in rates.errors and kind != ALL_TYPES:
            by_type[kind] = correct(
                [r for r in contradictions if r.intervention_type == kind], rates.errors[kind], agg.violation_rate_ci
            )
    unmeasured = sorted({r.intervention_type for r in contradictions} - set(rates.errors))
    overall = correct(contradictions, rates.overall, report.overall.violation_rate_ci)
    if unmeasured:
        overall = overall.model_copy(
            update={
                "corrected": None,
                "unclipped": None,
                "corrected_ci": None,
                "reason": f"the report has intervention types on {link} the calibration did not measure "
                f"({', '.join(unmeasured)}); its pooled error rates do not apply to this mix",
            }
        )
    return report.model_copy(update={"corrected": overall, "corrected_by_type": by_type})
