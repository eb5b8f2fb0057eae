"""The metric formulas, checked against hand-computed values, including the degenerate cases."""

from __future__ import annotations

import pytest

from ariadne_lc.bypass import _metrics as m


def test_delta_is_clipped_at_zero() -> None:
    assert m.delta(-1.0, -3.5) == pytest.approx(2.5)
    assert m.delta(-3.5, -1.0) == 0.0


def test_cmi_formula() -> None:
    assert m.cmi(3.0, 1.0) == pytest.approx(0.5)
    assert m.cmi(1.0, 3.0) == 0.0
    assert m.cmi(2.0, 0.0) == 1.0


def test_cmi_degenerate_case_is_zero() -> None:
    assert m.cmi(0.0, 0.0) == 0.0
    # rounding noise below the floor must not read as "fully mediated"
    assert m.cmi(m.DEGENERATE_DELTA_NATS / 2, 0.0) == 0.0
    assert m.cmi(m.DEGENERATE_DELTA_NATS * 2, 0.0) == 1.0


def test_ratio_indices() -> None:
    assert m.validity(0.8, 0.2) == pytest.approx(0.75)
    assert m.validity(0.2, 0.8) == 0.0
    assert m.validity(0.0, 0.0) == 0.0
    assert m.density_index(0.8, 0.2) == pytest.approx(0.75)
    assert m.density_index(0.5, 0.9) == 0.0
    assert m.sequentiality(0.6, 0.15) == pytest.approx(0.75)
    assert m.sequentiality(0.6, 0.9) == 0.0


def test_sensitivity_and_robustness_thresholds() -> None:
    assert m.absolute_deviation(0.5, 0.6, 0.3) == pytest.approx(0.2)
    assert m.relative_sensitivity(0.5, 0.6, 0.3) == pytest.approx(0.4)
    assert not m.is_robust(0.5, 0.6, 0.3)
    assert m.is_robust(0.5, 0.55, 0.45)  # relative 0.1
    assert m.is_robust(0.01, 0.05, 0.0)  # relative 4, but absolute 0.04 <= 0.05


def test_labels() -> None:
    assert m.bypass_label(0.9, no_cot_effect=True) == m.LABEL_NO_COT_EFFECT
    assert m.bypass_label(m.BYPASS_LABEL_THRESHOLD, no_cot_effect=False) == m.LABEL_BYPASS
    assert m.bypass_label(0.2, no_cot_effect=False) == m.LABEL_READS_COT


def test_mean_refuses_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        m.mean([])
