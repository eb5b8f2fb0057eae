"""The demo's calibration: the committed ``docs/calibration/<model>/calibration.json`` of the model it runs.

The demo applies the calibration measured for its own model (the ground-truth agents of ``ariadne-lc calibrate`` on
the same model, critic, scorer, τ, λ, gate and reader), so that it prints the corrected violation rate beside the
raw one. The file is found relative to the source tree (``make demo`` runs from a checkout, where
``docs/calibration/`` is committed); ``--calibration FILE`` names another. When there is none, or it was made for
another configuration, or it cannot be read, the demo says so and prints "no calibration" with the reason: it never
fails for want of a calibration, and never applies one that does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditReport

if TYPE_CHECKING:
    from ariadne_lc.calibration import Calibration, CalibrationConfig

__all__ = ["DemoCalibration", "committed_calibration", "demo_calibration"]

_CHECKOUT = Path(__file__).resolve().parents[2]
"""The source tree this package runs from (an editable install, as ``make demo`` makes)."""


def committed_calibration(local_model: str, root: Path = _CHECKOUT) -> Path:
    """Where the committed calibration of ``local_model`` (``smollm2``, ``gemma3-270m``) lives in a checkout."""
    return root / "docs" / "calibration" / local_model / "calibration.json"


@dataclass(frozen=True, slots=True)
class DemoCalibration:
    """The calibration the demo applies, or why it applies none."""

    path: Path | None
    calibration: Calibration | None
    note: str | None
    """Why there is no calibration to apply (``None`` when there is one)."""

    def apply(self, report: AuditReport, expected: CalibrationConfig) -> tuple[AuditReport, str | None]:
        """``report`` corrected, or unchanged with the reason (a mismatch found only now is a reason, not a crash).

        The configuration checked is what the results recorded (critic, scorer, the gate's reader), with the model,
        τ and λ of ``expected``; ``expected`` itself when no contradiction reached the gate.
        """
        if self.calibration is None:
            return report, self.note
        from ariadne_lc.calibration import apply_calibration
        from ariadne_lc.calibration.correction import audit_config

        try:
            config = expected
            if report.overall.gated:
                e = expected
                config = audit_config(
                    report.results, model=e.model, tau=e.tau, lam=e.lam, critic=e.critic, scorer=e.scorer
                )
            return apply_calibration(report, self.calibration, config), None
        except ConfigurationError as exc:
            return report, _mismatch(self.path, exc)


def _mismatch(path: Path | None, exc: ConfigurationError) -> str:
    return f"the calibration in {path} does not fit this run: {exc}"


def demo_calibration(path: Path | None, expected: CalibrationConfig, *, explicit: bool) -> DemoCalibration:
    """Load the calibration at ``path`` and check it against ``expected`` (the demo's configuration).

    Args:
        path: The file (``None``: the demo knows of none for this model).
        expected: The configuration the demo audits with.
        explicit: The user named the file (``--calibration``): a missing one is then their error, said as such.
    """
    if path is None:
        return DemoCalibration(None, None, "no committed calibration for this model; pass --calibration FILE")
    if not path.is_file():
        where = "no such file" if explicit else "not in this installation (it ships with a source checkout)"
        return DemoCalibration(path, None, f"{path}: {where}")
    from ariadne_lc.calibration import check_config
    from ariadne_lc.report import load_calibration

    try:
        calibration = load_calibration(path)
        check_config(calibration, expected)
    except ConfigurationError as exc:
        return DemoCalibration(path, None, _mismatch(path, exc))
    return DemoCalibration(path, calibration, None)
