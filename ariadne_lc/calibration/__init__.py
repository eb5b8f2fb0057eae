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
    from ariadne_lc.calibration.records import CalibrationAudit, CalibrationConfig
    from ariadne_lc.calibration.reference import (
        JudgeMode,
        areference_audit,
        lenient_score,
        reference_audit,
    )
    from ariadne_lc.calibration.results import (
        CALIBRATION_SCHEMA,
        CALIBRATION_SCHEMA_VERSION,
        Calibration,
        ControlRates,
        ErrorRates,
        MethodCalibration,
        ValidationPoint,
    )
    from ariadne_lc.records import CorrectedRate, Rate

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
    "analyze": "ariadne_lc.calibration.analysis",
    "apply_calibration": "ariadne_lc.calibration.correction",
    "check_config": "ariadne_lc.calibration.correction",
    "correct_rate": "ariadne_lc.calibration.correction",
    "rogan_gladen": "ariadne_lc.calibration.correction",
    "CorrectedRate": "ariadne_lc.records",
    "Rate": "ariadne_lc.records",
    "CalibrationAudit": "ariadne_lc.calibration.records",
    "CalibrationConfig": "ariadne_lc.calibration.records",
    "JudgeMode": "ariadne_lc.calibration.reference",
    "areference_audit": "ariadne_lc.calibration.reference",
    "lenient_score": "ariadne_lc.calibration.reference",
    "reference_audit": "ariadne_lc.calibration.reference",
    "CALIBRATION_SCHEMA": "ariadne_lc.calibration.results",
    "CALIBRATION_SCHEMA_VERSION": "ariadne_lc.calibration.results",
    "Calibration": "ariadne_lc.calibration.results",
    "ControlRates": "ariadne_lc.calibration.results",
    "ErrorRates": "ariadne_lc.calibration.results",
    "MethodCalibration": "ariadne_lc.calibration.results",
    "ValidationPoint": "ariadne_lc.calibration.results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
