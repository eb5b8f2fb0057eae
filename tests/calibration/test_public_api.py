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


def test_calibration_imports_no_numpy_scipy_or_plots() -> None:
    """Reading a calibration (and importing the analysis) is light: the heavy parts load when they compute."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ariadne_lc.calibration import Calibration, CalibrationAudit, CorrectedRate, analyze, apply_calibration\n"
        "import ariadne_lc.calibration.analysis, ariadne_lc.calibration.correction, ariadne_lc.calibration.results\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'matplotlib', 'typer') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
