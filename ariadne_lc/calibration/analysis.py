"""From the audits of ground-truth agents to the pipeline's error rates, noise and validated corrections.

Every :class:`~ariadne_lc.calibration.records.CalibrationAudit` carries its truth, so the analysis counts:

- **Error rates** (calibrate split, per method and per contradiction type, and pooled): the false-alarm
  rate FA = violations / scored over audits whose truth is *faithful*, the miss rate M = non-violations /
  scored over audits whose truth is *unfaithful* (any agent whose truth is known: coupled, bypass, and a
  mixture's audits by the path their query took), and per agent kind the not-applicable, inconclusive and
  failed rates over all its audits. Each with a Wilson interval.
- **Causes.** A false alarm whose contradiction left the decisive content unchanged (``decisive_changed`` is
  ``False``) is the critic's; one whose answer did not change though the content did is the agent's or a
  coincidence; one whose answers differ yet scored S > τ is the scorer's. A miss whose bypass answer
  changed moved by itself (replay noise: the answering call never saw the thought); one exempted by the λ
  length gate is the violation rule's; one whose equal answers scored S ≤ τ is the scorer's.
- **Noise**: how often each control (``rerun``: the noise floor; ``paraphrase``: the placebo) moved the
  answer, per agent kind.
- **Validation** (validate split): per ground-truth agent (coupled at p = 0, bypass at p = 1, each mixture
  at its p), the raw violation rate corrected with the calibrate split's FA and M
  (:func:`~ariadne_lc.calibration.correction.correct_rate`), and whether its interval covers p and the
  realised share of bypass queries.
- **Natural** agent: its raw rate and the corrected one, which assumes its runs behave like a mixture of
  the two constructed kinds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ariadne_lc.calibration.correction import DEFAULT_CORRECTION_RESAMPLES, correct_rate
from ariadne_lc.calibration.records import CalibrationAudit, CalibrationConfig
from ariadne_lc.calibration.results import (
    ALL_TYPES,
    Calibration,
    ControlRates,
    ErrorRates,
    MethodCalibration,
    ValidationPoint,
)
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import Rate

__all__ = ["analyze", "proportion"]

_KINDS = ("coupled", "bypass")
_EXTRA_AGENTS = ("coupled_llm", "coupled_tool")
"""Faithful agents measured apart: FA and M (and so every correction) come from the coupled/bypass pair."""
_UNAUDITABLE = "-"
"""The intervention type of :meth:`AuditResult.unauditable` records."""


def _scored(a: CalibrationAudit) -> bool:
    return a.result.status == "scored" and a.result.similarity is not None


def proportion(
    items: Iterable[CalibrationAudit],
    event: Callable[[CalibrationAudit], bool],
    *,
    confidence: float,
    clusters: bool = False,
) -> Rate:
    """The share of ``items`` for which ``event`` holds, with a Wilson interval (and per-query counts)."""
    from ariadne_lc.stats import wilson_interval

    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a in items:
        cell = cells[a.query_id]
        cell[0] += int(event(a))
        cell[1] += 1
    k = sum(c[0] for c in cells.values())
    n = sum(c[1] for c in cells.values())
    return Rate(
        k=k,
        n=n,
        rate=k / n if n else None,
        ci=wilson_interval(k, n, confidence),
        clusters=tuple((c[0], c[1]) for _, c in sorted(cells.items())) if clusters else (),
    )


def _false_alarm_cause(a: CalibrationAudit) -> str:
    if a.decisive_changed is False:
        return "decisive_unchanged"
    if a.result.answer_changed:
        return "scored_similar"
    return "answer_unchanged" if a.decisive_changed else "unknown"


def _miss_cause(a: CalibrationAudit) -> str:
    if a.result.length_gate_exempted:
        return "length_gate"
    if a.result.answer_changed is None:
        return "unknown"
    return "replay_moved" if a.result.answer_changed else "scored_different"


def _count(items: Iterable[CalibrationAudit], cause: Callable[[CalibrationAudit], str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for a in items:
        out[cause(a)] += 1
    return dict(sorted(out.items()))


def _error_rates(intervention: str, audits: Sequence[CalibrationAudit], confidence: float) -> ErrorRates:
    faithful = [a for a in audits if a.truth == "faithful" and _scored(a)]
    unfaithful = [a for a in audits if a.truth == "unfaithful" and _scored(a)]
    per_kind = {kind: [a for a in audits if a.agent == kind] for kind in _KINDS}

    if not any(per_kind.values()):
        per_kind = {a.agent: [b for b in audits if b.agent == a.agent] for a in audits}

    def by_kind(status: str) -> dict[str, Rate]:
        return {
            kind: proportion(items, lambda a: a.result.status == status, confidence=confidence)
            for kind, items in per_kind.items()
            if items
        }

    def gate(outcome: str) -> dict[str, Rate]:
        def event(a: CalibrationAudit) -> bool:
            return a.result.decisiveness is not None and a.result.decisiveness.outcome == outcome

        return {kind: proportion(items, event, confidence=confidence) for kind, items in per_kind.items() if items}

    forms: dict[str, list[CalibrationAudit]] = defaultdict(list)
    for a in faithful:
        if a.result.decisiveness is not None:
            forms[a.result.decisiveness.form].append(a)
    tracked = [a for a in faithful if a.result.tracking is not None]

    return ErrorRates(
        intervention=intervention,
        false_alarm=proportion(faithful, lambda a: a.result.violation, confidence=confidence, clusters=True),
        miss=proportion(unfaithful, lambda a: not a.result.violation, confidence=confidence, clusters=True),
        not_applicable=by_kind("not_applicable"),
        inconclusive=by_kind("inconclusive"),
        failed=by_kind("failed"),
        false_alarm_causes=_count((a for a in faithful if a.result.violation), _false_alarm_cause),
        miss_causes=_count((a for a in unfaithful if not a.result.violation), _miss_cause),
        not_decisive=gate("not_decisive"),
        no_commitment=gate("no_commitment"),
        false_alarm_by_form={
            form: proportion(items, lambda a: a.result.violation, confidence=confidence)
            for form, items in sorted(forms.items())
        },
        tracking=proportion(tracked, lambda a: a.result.tracking == "tracks", confidence=confidence)
        if tracked
        else None,
        incoherent=gate("incoherent"),
    )


def _controls(audits: Sequence[CalibrationAudit], confidence: float) -> dict[str, ControlRates]:
    kinds: dict[str, dict[str, list[CalibrationAudit]]] = defaultdict(lambda: defaultdict(list))
    for a in audits:
        if a.result.control and _scored(a) and a.agent not in ("natural", *_EXTRA_AGENTS):
            kinds[a.result.intervention_type][a.truth or a.agent].append(a)
    # a control's "violation" means the answer held; moved is its complement
    return {
        control: ControlRates(
            control=control,
            moved={
                truth: proportion(items, lambda a: not a.result.violation, confidence=confidence)
                for truth, items in sorted(per.items())
            },
        )
        for control, per in sorted(kinds.items())
    }


def _validation(
    audits: Sequence[CalibrationAudit],
    errors: ErrorRates,
    *,
    confidence: float,
    seed: int,
    n_resamples: int,
    described: str,
) -> tuple[ValidationPoint, ...]:
    groups: dict[tuple[str, float], list[CalibrationAudit]] = defaultdict(list)
    for a in audits:
        if a.split != "validate" or a.result.control or a.agent == "natural":
            continue
        p = {"coupled": 0.0, "bypass": 1.0}.get(a.agent, a.p)
        if p is None:
            raise ConfigurationError(f"mixture audit {a.query_id!r} has no p")
        groups[(a.agent, p)].append(a)
    points = []
    for (agent, p), items in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        scored = [a for a in items if _scored(a)]
        observed = proportion(scored, lambda a: a.result.violation, confidence=confidence, clusters=True)
        corrected = correct_rate(
            observed.clusters,
            errors,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
            observed_ci=observed.ci,
            calibration=described,
        )
        known = [a for a in scored if a.truth is not None]
        true_rate = sum(a.truth == "unfaithful" for a in known) / len(known) if known else None
        ci = corrected.corrected_ci
        points.append(
            ValidationPoint(
                agent=agent,
                p=p,
                true_rate=true_rate,
                observed=observed.model_copy(update={"clusters": ()}),
                corrected=corrected,
                covers_p=None if ci is None else ci[0] <= p <= ci[1],
                covers_true_rate=None if ci is None or true_rate is None else ci[0] <= true_rate <= ci[1],
            )
        )
    return tuple(points)


def _method(
    method: str,
    audits: Sequence[CalibrationAudit],
    config: CalibrationConfig,
    *,
    confidence: float,
    seed: int,
    n_resamples: int,
) -> MethodCalibration:
    known = [a for a in audits if a.split == "calibrate" and a.truth is not None and not a.result.control]
    calibrate = [a for a in known if a.agent not in _EXTRA_AGENTS]
    # runs that could not be audited at all ("-") count in the pooled failure rates, not as a type
    types = sorted({a.result.intervention_type for a in calibrate} - {_UNAUDITABLE})
    errors = {ALL_TYPES: _error_rates(ALL_TYPES, calibrate, confidence)}
    for kind in types:
        errors[kind] = _error_rates(kind, [a for a in calibrate if a.result.intervention_type == kind], confidence)
    by_domain = {
        d: _error_rates(ALL_TYPES, [a for a in calibrate if a.domain == d], confidence)
        for d in sorted({a.domain for a in calibrate})
    }
    described = f"{config.describe()}, method={method}"
    natural = [a for a in audits if a.agent == "natural" and not a.result.control and _scored(a)]
    natural_rate = None
    if natural:
        observed = proportion(natural, lambda a: a.result.violation, confidence=confidence, clusters=True)
        natural_rate = correct_rate(
            observed.clusters,
            errors[ALL_TYPES],
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
            observed_ci=observed.ci,
            calibration=described,
        )
    agents: dict[str, dict[str, ErrorRates]] = {}
    for agent in _EXTRA_AGENTS:
        mine = [a for a in known if a.agent == agent]
        if mine:
            per_type = {ALL_TYPES: _error_rates(ALL_TYPES, mine, confidence)}
            for kind in sorted({a.result.intervention_type for a in mine} - {_UNAUDITABLE}):
                per_type[kind] = _error_rates(kind, [a for a in mine if a.result.intervention_type == kind], confidence)
            agents[agent] = per_type
    return MethodCalibration(
        method=method,
        agents=agents,
        errors=errors,
        errors_by_domain=by_domain,
        controls=_controls([a for a in audits if a.split == "calibrate"], confidence),
        validation=_validation(
            audits, errors[ALL_TYPES], confidence=confidence, seed=seed, n_resamples=n_resamples, described=described
        ),
        natural=natural_rate,
        audits=len(audits),
    )


def analyze(
    audits: Sequence[CalibrationAudit],
    config: CalibrationConfig,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = DEFAULT_CORRECTION_RESAMPLES,
    meta: Mapping[str, Any] | None = None,
) -> Calibration:
    """The calibration of ``config`` from the audits of its ground-truth agents (see the module docstring).

    Args:
        audits: Every audit of the run, all methods and splits; controls included (they give the noise).
        config: The configuration they ran with; the result is valid for it alone.
        confidence: Level of every interval.
        seed: Seed of every bootstrap (the same audits and seed give the same file).
        n_resamples: Bootstrap resamples per corrected rate.
        meta: Written into the file as is (the run's N, seed, wall time, machine, model file).

    Raises:
        ConfigurationError: no audits, a confidence outside (0, 1), a mixture audit without p.

    Examples:
        >>> from ariadne_lc.calibration import CalibrationConfig, analyze
        >>> config = CalibrationConfig(model="m", critic="rule", scorer="answer", tau=0.8, lam=10)
        >>> analyze([], config)
        Traceback (most recent call last):
        ...
        ariadne_lc.errors.ConfigurationError: no calibration audits to analyse
    """
    from ariadne_lc import __version__

    if not audits:
        raise ConfigurationError("no calibration audits to analyse")
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence must be in (0, 1), got {confidence}")
    by_method: dict[str, list[CalibrationAudit]] = defaultdict(list)
    for a in audits:
        by_method[a.method].append(a)
    queries: dict[str, set[str]] = defaultdict(set)
    for a in audits:
        queries[a.split].add(a.query_id)
    return Calibration(
        config=config,
        methods={
            m: _method(m, items, config, confidence=confidence, seed=seed, n_resamples=n_resamples)
            for m, items in sorted(by_method.items())
        },
        confidence=confidence,
        seed=seed,
        n_resamples=n_resamples,
        audits=len(audits),
        queries={split: len(ids) for split, ids in sorted(queries.items())},
        version=__version__,
        meta=dict(meta or {}),
    )
