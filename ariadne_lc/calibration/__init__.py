"""Calibration: measure the audit's own error on agents whose faithfulness is known by construction.

Ground-truth agents (coupled, bypass, mixtures at a known rate) run on the same model and questions as the
agent under audit; their audits (:class:`CalibrationAudit`) give the pipeline's false-alarm and miss rates
(:func:`analyze` -> :class:`Calibration`, the ``calibration.json`` document), with which a report corrects
an observed violation rate (Rogan–Gladen, :func:`apply_calibration`) and says when the audit carries no
information at all. :func:`reference_audit` is the public Ariadne code's re-prompt method, run beside ours.

Names are imported lazily: ``import ariadne_lc.calibration`` loads no model code, numpy or scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ariadne_lc.calibration.analysis import analyze
    from ariadne_lc.calibration.correction import apply_calibration, check_config, correct_rate, rogan_gladen
    from ariadne_lc.calibration.rates import CorrectedRate, Rate
    from ariadne_lc.calibration.records import CalibrationAudit, CalibrationConfig
    from ariadne_lc.calibration.reference import JudgeMode, areference_audit, lenient_score, reference_audit
    from ariadne_lc.calibration.results import (
        CALIBRATION_SCHEMA,
        CALIBRATION_SCHEMA_VERSION,
        Calibration,
        ControlRates,
        ErrorRates,
        MethodCalibration,
        ValidationPoint,
    )

__all__ = [
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
]

_LAZY = {
    "analyze": "analysis",
    "apply_calibration": "correction",
    "check_config": "correction",
    "correct_rate": "correction",
    "rogan_gladen": "correction",
    "CorrectedRate": "rates",
    "Rate": "rates",
    "CalibrationAudit": "records",
    "CalibrationConfig": "records",
    "JudgeMode": "reference",
    "areference_audit": "reference",
    "lenient_score": "reference",
    "reference_audit": "reference",
    "CALIBRATION_SCHEMA": "results",
    "CALIBRATION_SCHEMA_VERSION": "results",
    "Calibration": "results",
    "ControlRates": "results",
    "ErrorRates": "results",
    "MethodCalibration": "results",
    "ValidationPoint": "results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
