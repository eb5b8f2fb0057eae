"""Pins the calibration package's public surface: additions are deliberate, removals are breaking."""

from __future__ import annotations

import pytest

import ariadne_lc.calibration as calibration

EXPECTED = {
    "CALIBRATION_SCHEMA",
    "CALIBRATION_SCHEMA_VERSION",
    "Calibration",
    "CalibrationAudit",
    "CalibrationConfig",
    "ControlRates",
    "CorrectedRate",
    "ErrorRates",
    "JudgeMode",
    "MethodCalibration",
    "Rate",
    "ValidationPoint",
    "analyze",
    "apply_calibration",
    "areference_audit",
    "check_config",
    "correct_rate",
    "lenient_score",
    "reference_audit",
    "rogan_gladen",
}


def test_all_is_sorted_and_complete() -> None:
    assert calibration.__all__ == sorted(calibration.__all__)
    assert set(calibration.__all__) >= EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_name_resolves(name: str) -> None:
    assert getattr(calibration, name) is not None


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        calibration.nothing  # noqa: B018
