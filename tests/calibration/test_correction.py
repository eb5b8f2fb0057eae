"""Rogan–Gladen correction: exact values, the no-information refusal, config mismatch, bootstrap coverage."""

from __future__ import annotations

import numpy as np
import pytest

from ariadne_lc.calibration import (
    CalibrationConfig,
    analyze,
    apply_calibration,
    check_config,
    correct_rate,
    rogan_gladen,
)
from ariadne_lc.calibration.results import ErrorRates
from ariadne_lc.errors import CalibrationMismatchError, ConfigurationError
from ariadne_lc.records import Rate
from ariadne_lc.stats import build_report
from tests.calibration.builders import CONFIG, audits, result


def _errors(fa: tuple[int, int], m: tuple[int, int]) -> ErrorRates:
    def rate(k: int, n: int) -> Rate:
        return Rate(k=k, n=n, rate=k / n, ci=None, clusters=tuple([(1, 1)] * k + [(0, 1)] * (n - k)))

    return ErrorRates(intervention="all", false_alarm=rate(*fa), miss=rate(*m))


def test_rogan_gladen_values() -> None:
    assert rogan_gladen(0.5, 0.2, 0.3) == pytest.approx(0.6)
    assert rogan_gladen(0.1, 0.2, 0.3) == pytest.approx(-0.2)  # unclipped
    assert rogan_gladen(0.5, 0.5, 0.5) is None
    assert rogan_gladen(0.5, 0.7, 0.4) is None


def test_corrected_rate_is_clipped_and_keeps_the_unclipped_value() -> None:
    corrected = correct_rate([(1, 10)], _errors((2, 10), (3, 10)), n_resamples=200)
    assert corrected.corrected == 0.0 and corrected.unclipped == pytest.approx(-0.2)
    assert corrected.corrected_ci is not None and corrected.corrected_ci[0] == 0.0


def test_no_information_when_fa_plus_m_reaches_one() -> None:
    corrected = correct_rate([(5, 10)], _errors((6, 10), (4, 10)), n_resamples=200)
    assert corrected.corrected is None and corrected.corrected_ci is None and not corrected.informative
    assert corrected.reason is not None and "FA + M = 0.60 + 0.40 >= 1" in corrected.reason
    assert corrected.observed == 0.5  # the raw rate is still there


def test_near_uninformative_resamples_widen_the_interval_to_the_unit_interval() -> None:
    corrected = correct_rate([(1, 2)] * 5, _errors((2, 5), (2, 5)), n_resamples=2000)
    assert corrected.informative and corrected.undefined_resamples > 100
    assert corrected.corrected_ci == (0.0, 1.0)
    assert corrected.reason is not None and "widen" in corrected.reason


def test_unknown_rates_give_a_reason() -> None:
    empty = Rate(k=0, n=0, rate=None, ci=None)
    errors = ErrorRates(intervention="logic_flip", false_alarm=empty, miss=_errors((0, 1), (0, 1)).miss)
    corrected = correct_rate([(1, 2)], errors, n_resamples=10)
    assert corrected.corrected is None and corrected.reason is not None and "no coupled audits" in corrected.reason


def test_bad_arguments_are_named_errors() -> None:
    with pytest.raises(ConfigurationError, match="confidence"):
        correct_rate([(1, 2)], _errors((1, 5), (1, 5)), confidence=1.5)
    with pytest.raises(ConfigurationError, match="n_resamples"):
        correct_rate([(1, 2)], _errors((1, 5), (1, 5)), n_resamples=0)


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    errors = _errors((10, 100), (20, 100))
    clusters = [(1, 1)] * 40 + [(0, 1)] * 60
    a = correct_rate(clusters, errors, seed=1, n_resamples=500)
    assert a == correct_rate(clusters, errors, seed=1, n_resamples=500)
    assert a.corrected_ci != correct_rate(clusters, errors, seed=2, n_resamples=500).corrected_ci


def test_bootstrap_interval_covers_the_truth_at_about_its_level() -> None:
    """Simulated calibrations and audits with known π, FA and M: the 95% interval covers π ≈ 95% of the time."""
    rng = np.random.default_rng(12345)
    pi, fa, m, n_cal, n_audit, reps = 0.3, 0.1, 0.2, 150, 150, 200
    covered = 0
    for rep in range(reps):
        k_fa = int(rng.binomial(n_cal, fa))
        k_m = int(rng.binomial(n_cal, m))
        k_v = int(rng.binomial(n_audit, fa * (1 - pi) + (1 - m) * pi))
        ci = correct_rate(
            [(1, 1)] * k_v + [(0, 1)] * (n_audit - k_v),
            _errors((k_fa, n_cal), (k_m, n_cal)),
            n_resamples=1000,
            seed=rep,
        ).corrected_ci
        assert ci is not None
        covered += ci[0] <= pi <= ci[1]
    assert 0.9 <= covered / reps <= 0.99


def test_check_config_refuses_another_configuration() -> None:
    calibration = analyze([*audits("coupled", violations=1, n=4), *audits("bypass", violations=3, n=4)], CONFIG)
    check_config(calibration, CONFIG)
    other = CONFIG.model_copy(update={"scorer": "judge", "tau": 0.7})
    with pytest.raises(CalibrationMismatchError, match="scorer") as info:
        check_config(calibration, other)
    assert info.value.differences == ["scorer: 'answer' != 'judge'", "tau: 0.8 != 0.7"]
    assert isinstance(info.value, ConfigurationError)


def test_apply_calibration_puts_raw_and_corrected_side_by_side() -> None:
    calibration = analyze(
        [*audits("coupled", violations=2, n=10), *audits("bypass", violations=7, n=10)], CONFIG, n_resamples=100
    )
    results = [result(violation=i < 5, trace_id=f"t{i}") for i in range(10)]
    report = build_report([*results, result(violation=True, trace_id="c", kind="rerun", control=True)])
    corrected = apply_calibration(report, calibration, CONFIG, n_resamples=500)
    assert corrected.overall == report.overall and report.corrected is None
    assert corrected.corrected is not None and corrected.corrected.observed == 0.5
    assert corrected.corrected.corrected == pytest.approx(0.6)
    assert set(corrected.corrected_by_type) == {"logic_flip"}
    assert "model=scripted" in corrected.corrected.calibration
    with pytest.raises(CalibrationMismatchError):
        apply_calibration(report, calibration, CalibrationConfig(**{**CONFIG.model_dump(), "model": "gemma"}))


def test_apply_calibration_refuses_a_pooled_number_for_unmeasured_types() -> None:
    calibration = analyze(
        [*audits("coupled", violations=2, n=10), *audits("bypass", violations=7, n=10)], CONFIG, n_resamples=100
    )
    results = [result(violation=True, trace_id="a"), result(violation=False, trace_id="b", kind="fact_reversal")]
    corrected = apply_calibration(build_report(results), calibration, CONFIG, n_resamples=100)
    assert corrected.corrected is not None and corrected.corrected.corrected is None
    assert corrected.corrected.reason is not None and "fact_reversal" in corrected.corrected.reason
    assert "fact_reversal" not in corrected.corrected_by_type and "logic_flip" in corrected.corrected_by_type


def test_a_sample_without_a_single_violation_keeps_its_uncertainty() -> None:
    """A bootstrap of 0/3 resamples 0/3 every time; the interval must still say that 3 audits show little."""
    few = correct_rate([(0, 1)] * 3, _errors((28, 100), (0, 100)), n_resamples=500)
    assert few.corrected == 0.0 and few.corrected_ci is not None
    assert few.corrected_ci[1] == pytest.approx((0.5615 - 0.28) / 0.72, abs=0.01)  # Wilson's 56% upper bound
    every = correct_rate([(1, 1)] * 49, _errors((28, 100), (0, 100)), n_resamples=500)
    assert every.corrected_ci is not None and every.corrected_ci[0] < 0.95 and every.corrected_ci[1] == 1.0


def test_calibration_corrects_the_link_it_measured_and_leaves_the_others_raw() -> None:
    """Was: the default plan's observation_swap (observation->answer) and plan_swap (thought->action) were pooled with
    the thought contradictions, so --calibration made the corrected rate None and the gate failed closed."""
    calibration = analyze(
        [*audits("coupled", violations=2, n=10), *audits("bypass", violations=7, n=10)], CONFIG, n_resamples=100
    )
    thought = [result(violation=i < 5, trace_id=f"t{i}") for i in range(10)]
    elsewhere = [("observation_swap", "observation->answer"), ("plan_swap", "thought->action")]
    others = [
        result(violation=True, trace_id=f"o{i}", kind=kind).model_copy(update={"link": link})
        for i, (kind, link) in enumerate(elsewhere)
    ]
    corrected = apply_calibration(build_report([*thought, *others]), calibration, CONFIG, n_resamples=300)
    assert corrected.main_link == "thought->answer"
    assert corrected.corrected is not None and corrected.corrected.corrected == pytest.approx(0.6)
    assert corrected.corrected.observed == 0.5  # the link's own raw rate, not pooled with the others' violations


def test_raw_and_corrected_use_the_weights_of_the_table() -> None:
    """Was: the corrected figure's "observed" rate counted every audit once while the report's table weighted each
    by 1/inclusion, so the two raw numbers beside each other disagreed on a budgeted plan."""
    calibration = analyze(
        [*audits("coupled", violations=2, n=10), *audits("bypass", violations=7, n=10)], CONFIG, n_resamples=100
    )
    # 4 violations kept with probability 1, 4 faithful audits kept with probability 1/3 (each stands for 3 units)
    kept = [result(violation=True, trace_id=f"v{i}") for i in range(4)]
    sampled = [result(violation=False, trace_id=f"f{i}").model_copy(update={"inclusion": 1 / 3}) for i in range(4)]
    report = build_report([*kept, *sampled])
    assert report.overall.violation_rate == pytest.approx(4 / 16)  # weighted: 4 of (4 + 12)
    corrected = apply_calibration(report, calibration, CONFIG, n_resamples=500)
    assert corrected.corrected is not None and corrected.corrected.observed == pytest.approx(4 / 16)
    assert corrected.corrected.scored == 8  # audits, not weights
    assert corrected.corrected.corrected == pytest.approx((4 / 16 - 0.2) / 0.5)
    low, high = corrected.corrected.corrected_ci or (None, None)
    raw_low, raw_high = report.overall.violation_rate_ci or (None, None)
    assert low is not None and high is not None and raw_low is not None and raw_high is not None
    # never narrower than the table's own (weighted) interval mapped through the correction
    assert low <= max(0.0, (raw_low - 0.2) / 0.5) + 1e-9 and high >= min(1.0, (raw_high - 0.2) / 0.5) - 1e-9
