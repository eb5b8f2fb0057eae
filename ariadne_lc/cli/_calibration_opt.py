"""``--calibration FILE`` on ``ariadne-lc audit`` and ``ariadne-lc report``: correct the violation rate.

The audited configuration is read from the results (critic, scorer) and the options (model, τ, λ), and a
calibration made for another one is refused with :class:`~ariadne_lc.errors.CalibrationMismatchError`
before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditReport

if TYPE_CHECKING:
    from ariadne_lc.calibration import Calibration

__all__ = ["CALIBRATION_HELP", "MODEL_HELP", "calibrate_report", "precheck"]

CALIBRATION_HELP = (
    "A calibration.json (from `ariadne-lc calibrate`): report the corrected violation rate beside the raw one."
)
MODEL_HELP = (
    "The model your agent runs on, as named in the calibration (checked against it; needed with --calibration)."
)


def _load(calibration_file: Path, model: str | None) -> Calibration:
    from ariadne_lc.report import load_calibration

    calibration = load_calibration(calibration_file)
    if not model:
        raise ConfigurationError(
            f"--calibration needs --model: the calibration in {calibration_file} is for model "
            f"{calibration.config.model!r}, and a calibration is only valid for the model it was made with"
        )
    return calibration


def precheck(
    calibration_file: Path | None,
    *,
    model: str | None,
    tau: float,
    lam: int,
    critic: str,
    scorer: str,
    decisive: bool = True,
    reader: str | None = "rule",
) -> None:
    """Refuse a missing, malformed or mismatched calibration before any model call is made (the gate and its reader
    are part of the configuration: a gate-off calibration does not correct a gated audit)."""
    if calibration_file is None:
        return
    from ariadne_lc.calibration import CalibrationConfig, check_config

    calibration = _load(calibration_file, model)
    config = CalibrationConfig(
        model=model or "",
        critic=critic,
        scorer=scorer,
        tau=tau,
        lam=lam,
        decisive=decisive,
        reader=reader if decisive else None,
    )
    check_config(calibration, config)


def calibrate_report(
    report: AuditReport,
    calibration_file: Path | None,
    *,
    model: str | None,
    tau: float,
    lam: int,
    critic: str | None = None,
    scorer: str | None = None,
) -> AuditReport:
    """``report`` corrected with the calibration in ``calibration_file`` (unchanged without one); the summary
    prints the raw and corrected rates side by side (:func:`~ariadne_lc.cli._pipeline.rates_line`)."""
    if calibration_file is None:
        return report
    from ariadne_lc.calibration import apply_calibration
    from ariadne_lc.calibration.correction import audit_config

    calibration = _load(calibration_file, model)
    config = audit_config(report.results, model=model or "", tau=tau, lam=lam, critic=critic, scorer=scorer)
    return apply_calibration(report, calibration, config)
