"""``--calibration FILE`` on ``ariadne-lc audit`` and ``ariadne-lc report``: correct the violation rate.

The audited configuration is read from the results (critic, scorer) and the options (model, τ, λ), and a
calibration made for another one is refused with :class:`~ariadne_lc.errors.CalibrationMismatchError`
before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ariadne_lc.cli._common import console
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
    calibration_file: Path | None, *, model: str | None, tau: float, lam: int, critic: str, scorer: str
) -> None:
    """Refuse a missing, malformed or mismatched calibration before any model call is made."""
    if calibration_file is None:
        return
    from ariadne_lc.calibration import CalibrationConfig, check_config

    calibration = _load(calibration_file, model)
    check_config(calibration, CalibrationConfig(model=model or "", critic=critic, scorer=scorer, tau=tau, lam=lam))


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
    """``report`` corrected with the calibration in ``calibration_file`` (unchanged without one)."""
    if calibration_file is None:
        return report
    from ariadne_lc.calibration import apply_calibration
    from ariadne_lc.calibration.correction import audit_config

    calibration = _load(calibration_file, model)
    config = audit_config(report.results, model=model or "", tau=tau, lam=lam, critic=critic, scorer=scorer)
    corrected = apply_calibration(report, calibration, config)
    c = corrected.corrected
    if c is not None:
        if c.corrected is None:
            console.print(f"calibrated violation rate: no number ({c.reason})")
        else:
            ci = c.corrected_ci
            console.print(
                f"calibrated violation rate {c.corrected:.0%}"
                + (f" (95% CI {ci[0]:.0%}-{ci[1]:.0%})" if ci else "")
                + f" beside the raw {c.observed:.0%}; FA {c.false_alarm:.0%}, M {c.miss:.0%}"
            )
    return corrected
