"""Pure-data records of measured proportions: :class:`Rate` and the corrected violation rate.

:class:`CorrectedRate` is what an :class:`~ariadne_lc.records.AuditReport` carries beside its raw violation
rate once a calibration is applied. This module imports only pydantic, so the records layer (and any report
reader) can hold these types without numpy or scipy; the numbers are computed in
:mod:`ariadne_lc.calibration.correction`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["CorrectedRate", "Rate"]


class Rate(BaseModel):
    """A proportion k/n with its Wilson interval, and its counts per query for the cluster bootstrap."""

    model_config = ConfigDict(frozen=True)

    k: int
    """Events (false alarms, misses, answers that moved, ...)."""
    n: int
    """Trials: the denominator."""
    rate: float | None
    """k/n; ``None`` when n = 0."""
    ci: tuple[float, float] | None
    """Wilson interval at the calibration's confidence; ``None`` when n = 0."""
    clusters: tuple[tuple[int, int], ...] = ()
    """(k, n) per query, kept for the rates a correction uses: audits of one query share its agent run,
    so the bootstrap resamples queries, not audits."""


class CorrectedRate(BaseModel):
    """An observed violation rate corrected for the pipeline's measured misclassification (Rogan–Gladen).

    With the calibration's false-alarm rate FA (a violation called on an agent known to be faithful) and
    miss rate M (no violation on an agent known to be unfaithful), an observed rate v estimates the true
    rate as (v − FA) / (1 − FA − M), clipped to [0, 1]. When FA + M ≥ 1 the audit cannot tell the two
    kinds of agent apart: ``corrected`` is ``None`` and ``reason`` says why. Never a default number.
    """

    model_config = ConfigDict(frozen=True)

    observed: float | None
    """The raw violation rate v."""
    observed_ci: tuple[float, float] | None
    """Its Wilson interval (from the report)."""
    scored: int
    """Scored audits behind v."""
    queries: int
    """Distinct traces among them (the bootstrap's unit)."""
    false_alarm: float | None
    """FA from the calibration."""
    miss: float | None
    """M from the calibration."""
    corrected: float | None
    """The corrected rate, clipped to [0, 1]; ``None`` when the audit carries no information."""
    unclipped: float | None = None
    """(v − FA) / (1 − FA − M) before clipping (outside [0, 1] means sampling error or a shifted population)."""
    corrected_ci: tuple[float, float] | None = None
    """Percentile bootstrap interval that resamples the audited queries and both calibration samples."""
    informative: bool
    """FA + M < 1: the audit separates faithful from unfaithful agents at all."""
    reason: str | None = None
    """Why there is no corrected number (or why its interval is missing)."""
    undefined_resamples: int = 0
    """Bootstrap resamples in which FA* + M* ≥ 1; each is counted as possibly anywhere in [0, 1], so the
    interval widens to cover them instead of dropping them."""
    confidence: float = 0.95
    n_resamples: int = 0
    seed: int = 0
    intervention: str = "all"
    """The contradiction type the rates are for (``all``: every contradiction pooled)."""
    calibration: str = ""
    """The calibration's configuration and method, in words (``model=…, critic=…, …``)."""
