"""The calibration's error rates, causes, noise and validation, on audits with known numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ariadne_lc.calibration import CalibrationAudit, analyze
from ariadne_lc.errors import ConfigurationError
from tests.calibration.builders import CONFIG, audits, result


def _known_set() -> list[CalibrationAudit]:  # FA = 2/10, M = 3/10; a validate mixture at p = 0.5 with v = 5/10
    items = [
        *audits("coupled", violations=2, n=10),
        *audits("bypass", violations=7, n=10),
        *audits("mixture", p=0.5, truth="unfaithful", violations=4, n=5, split="validate", prefix="mu"),
        *audits("mixture", p=0.5, truth="faithful", violations=1, n=5, split="validate", prefix="mf"),
    ]
    return items


def test_error_rates_are_the_known_fractions_with_wilson_intervals() -> None:
    calibration = analyze(_known_set(), CONFIG, n_resamples=500)
    errors = calibration.method("ariadne").overall
    assert (errors.false_alarm.k, errors.false_alarm.n, errors.false_alarm.rate) == (2, 10, 0.2)
    assert (errors.miss.k, errors.miss.n, errors.miss.rate) == (3, 10, 0.3)
    low, high = errors.false_alarm.ci or (0, 0)
    assert low == pytest.approx(0.0567, abs=1e-3) and high == pytest.approx(0.5098, abs=1e-3)
    assert errors.informative
    assert set(calibration.method("ariadne").errors) == {"all", "logic_flip"}


def test_validation_corrects_the_mixture_exactly() -> None:
    calibration = analyze(_known_set(), CONFIG, n_resamples=2000)
    (point,) = calibration.method("ariadne").validation
    assert (point.agent, point.p, point.true_rate) == ("mixture", 0.5, 0.5)
    assert point.observed.rate == 0.5
    assert point.corrected.corrected == pytest.approx((0.5 - 0.2) / (1 - 0.2 - 0.3))
    ci = point.corrected.corrected_ci
    assert ci is not None and ci[0] < 0.6 < ci[1]
    assert point.covers_p is True and point.covers_true_rate is True


def test_uninformative_calibration_gives_no_number_and_says_why() -> None:
    items = [*audits("coupled", violations=6, n=10), *audits("bypass", violations=5, n=10)]  # FA .6 + M .5
    items += audits("mixture", p=0.5, truth="faithful", violations=3, n=4, split="validate", prefix="m")
    calibration = analyze(items, CONFIG, n_resamples=200)
    assert not calibration.method("ariadne").overall.informative
    (point,) = calibration.method("ariadne").validation
    assert point.corrected.corrected is None and point.corrected.corrected_ci is None
    assert point.corrected.reason is not None and "no information" in point.corrected.reason
    assert point.covers_p is None


def test_causes_of_false_alarms_and_misses() -> None:
    items = [
        *audits("coupled", violations=2, n=2, decisive_changed=False, prefix="c1"),
        *audits("coupled", violations=1, n=1, decisive_changed=True, prefix="c2"),
        *audits("bypass", violations=0, n=2, prefix="b1"),
    ]
    gated = audits("bypass", violations=0, n=1, prefix="b2")[0]
    gated = gated.model_copy(
        update={"result": result(violation=False, trace_id="g", answer_changed=False, length_gate_exempted=True)}
    )
    errors = analyze([*items, gated], CONFIG, n_resamples=50).method("ariadne").overall
    assert errors.false_alarm_causes == {"answer_unchanged": 1, "decisive_unchanged": 2}
    assert errors.miss_causes == {"length_gate": 1, "replay_moved": 2}


def test_rerun_noise_and_placebo_per_agent() -> None:
    items = [
        *audits("coupled", violations=1, n=4),
        *audits("bypass", violations=4, n=4),
        # a control's violation means the answer held: 3 of 4 reruns held on the bypass agent
        *audits("bypass", violations=3, n=4, kind="rerun", control=True, prefix="br"),
        *audits("coupled", violations=2, n=4, kind="paraphrase", control=True, prefix="cp"),
    ]
    controls = analyze(items, CONFIG, n_resamples=50).method("ariadne").controls
    assert controls["rerun"].moved["unfaithful"].rate == 0.25
    assert controls["paraphrase"].moved["faithful"].rate == 0.5
    assert "rerun" not in analyze(items, CONFIG, n_resamples=50).method("ariadne").errors


def test_not_applicable_and_inconclusive_rates() -> None:
    items = audits("coupled", violations=0, n=3)
    na = items[0].model_copy(update={"result": result(violation=False, trace_id="na", status="not_applicable")})
    inc = items[0].model_copy(update={"result": result(violation=False, trace_id="inc", status="inconclusive")})
    errors = analyze([*items, na, inc, *audits("bypass", violations=1, n=1)], CONFIG, n_resamples=50)
    overall = errors.method("ariadne").overall
    assert overall.not_applicable["coupled"].rate == pytest.approx(1 / 5)
    assert overall.inconclusive["coupled"].rate == pytest.approx(1 / 5)
    assert overall.false_alarm.n == 3  # only scored audits enter FA


def test_methods_are_calibrated_separately() -> None:
    items = [
        *audits("coupled", violations=0, n=5),
        *audits("bypass", violations=5, n=5),
        *audits("coupled", violations=5, n=5, method="reference_lenient"),
        *audits("bypass", violations=5, n=5, method="reference_lenient"),
    ]
    calibration = analyze(items, CONFIG, n_resamples=50)
    assert calibration.method("ariadne").overall.false_alarm.rate == 0.0
    assert calibration.method("reference_lenient").overall.false_alarm.rate == 1.0
    with pytest.raises(ConfigurationError, match="reference_strict"):
        calibration.method("reference_strict")


def test_natural_agent_reported_raw_and_corrected() -> None:
    items = [
        *audits("coupled", violations=1, n=10),
        *audits("bypass", violations=9, n=10),
        *audits("natural", violations=5, n=10, split="validate"),
    ]
    natural = analyze(items, CONFIG, n_resamples=200).method("ariadne").natural
    assert natural is not None and natural.observed == 0.5
    assert natural.corrected == pytest.approx((0.5 - 0.1) / 0.8)


def test_no_audits_is_a_named_error() -> None:
    with pytest.raises(ConfigurationError, match="no calibration audits"):
        analyze([], CONFIG)


def test_same_seed_same_file() -> None:
    a = analyze(_known_set(), CONFIG, n_resamples=300, seed=7, meta={"wall_s": 12.5}).method("ariadne")
    b = analyze(_known_set(), CONFIG, n_resamples=300, seed=7).method("ariadne")
    assert a.validation == b.validation


def _simulated(rng: np.random.Generator, *, fa: float, miss: float, n: int) -> list[CalibrationAudit]:
    """Audits drawn with known FA and M: calibrate-split coupled and bypass, validate-split mixtures."""
    items: list[CalibrationAudit] = []
    for agent in ("coupled", "bypass"):
        rate = fa if agent == "coupled" else 1 - miss
        items += audits(agent, violations=int(rng.binomial(n, rate)), n=n)
    for p in (0.0, 0.25, 0.5, 0.75, 1.0):
        unfaithful = int(rng.binomial(n, p))
        items += audits(
            "mixture", p=p, truth="unfaithful", violations=int(rng.binomial(unfaithful, 1 - miss)),
            n=unfaithful, split="validate", prefix=f"u{p}",
        )  # fmt: skip
        items += audits(
            "mixture", p=p, truth="faithful", violations=int(rng.binomial(n - unfaithful, fa)),
            n=n - unfaithful, split="validate", prefix=f"f{p}",
        )  # fmt: skip
    return items


def test_mixture_validation_covers_p_at_about_the_nominal_rate() -> None:
    rng = np.random.default_rng(2026)
    covered = total = 0
    for rep in range(30):
        calibration = analyze(_simulated(rng, fa=0.1, miss=0.15, n=120), CONFIG, n_resamples=600, seed=rep)
        for point in calibration.method("ariadne").validation:
            assert point.covers_p is not None
            covered += point.covers_p
            total += 1
    assert total == 150 and covered / total >= 0.9


def test_unauditable_runs_count_as_failed_not_as_a_type() -> None:
    items = [*audits("coupled", violations=0, n=3), *audits("bypass", violations=3, n=3)]
    broken = items[0].model_copy(
        update={"result": result(violation=False, trace_id="x", kind="-", status="failed"), "query_id": "x"}
    )
    errors = analyze([*items, broken], CONFIG, n_resamples=50).method("ariadne").errors
    assert set(errors) == {"all", "logic_flip"}
    assert errors["all"].failed["coupled"].k == 1 and errors["all"].failed["coupled"].n == 4


def test_error_rates_per_domain() -> None:
    items = [*audits("coupled", violations=1, n=4), *audits("bypass", violations=4, n=4)]
    items += [a.model_copy(update={"domain": "arc"}) for a in audits("coupled", violations=3, n=4, prefix="ca")]
    by_domain = analyze(items, CONFIG, n_resamples=50).method("ariadne").errors_by_domain
    assert by_domain["gsm8k"].false_alarm.rate == 0.25 and by_domain["arc"].false_alarm.rate == 0.75
    assert by_domain["arc"].miss.n == 0 and by_domain["gsm8k"].miss.rate == 0.0


def test_meta_is_kept() -> None:
    assert analyze(_known_set(), CONFIG, n_resamples=10, meta={"n": 200}).meta == {"n": 200}
