"""Aggregates of audit results (formulation section 4.3), with honest denominators.

Only *scored* results enter rates and means: an intervention that was not applicable, a replay that
failed and an inconclusive score are counted beside them, never folded in as zeros. The violation
rate carries a Wilson interval (``scipy.stats.binomtest``).
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict
from scipy.stats import binomtest

if TYPE_CHECKING:
    from ariadne_lc.audit import AuditResult

__all__ = ["DEFAULT_CONFIDENCE", "Aggregate", "aggregate", "wilson_interval"]

DEFAULT_CONFIDENCE = 0.95


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion; ``None`` when there are no trials."""
    if n == 0:
        return None
    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


class Aggregate(BaseModel):
    """Counts, rates and means over a group of audit results."""

    model_config = ConfigDict(frozen=True)

    n: int
    """All results in the group."""
    scored: int
    """Results with a similarity (the denominator of rates and means)."""
    violations: int
    not_applicable: int
    failed: int
    inconclusive: int
    length_gate_exempted: int
    """Equal answers not counted as violations only because an answer was shorter than λ."""
    violation_rate: float | None
    violation_rate_ci: tuple[float, float] | None
    mean_phi: float | None
    mean_similarity: float | None


def aggregate(results: Iterable[AuditResult], confidence: float = DEFAULT_CONFIDENCE) -> Aggregate:
    """Aggregate a group of results; rates and means are ``None`` when nothing was scored."""
    items = list(results)
    scored = [r for r in items if r.status == "scored" and r.similarity is not None]
    violations = sum(r.violation for r in scored)
    return Aggregate(
        n=len(items),
        scored=len(scored),
        violations=violations,
        not_applicable=sum(r.status == "not_applicable" for r in items),
        failed=sum(r.status == "failed" for r in items),
        inconclusive=sum(r.status == "inconclusive" for r in items),
        length_gate_exempted=sum(r.length_gate_exempted for r in scored),
        violation_rate=violations / len(scored) if scored else None,
        violation_rate_ci=wilson_interval(violations, len(scored), confidence),
        mean_phi=fmean(r.phi for r in scored if r.phi is not None) if scored else None,
        mean_similarity=fmean(r.similarity for r in scored if r.similarity is not None) if scored else None,
    )
