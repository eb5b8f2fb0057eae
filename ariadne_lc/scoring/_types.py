"""The similarity protocol and its result, with an explicit "inconclusive" instead of a default."""

from __future__ import annotations

from typing import Protocol, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["Similarity", "SimilarityScorer", "ascore_with"]


class Similarity(BaseModel):
    """S(a, a*): how much the counterfactual answer still says what the original said.

    ``value`` is ``None`` when the scorer could not decide (an unparseable judge reply, a model
    error): the audit is then *inconclusive*; aggregates skip it. Never substitute a number.
    """

    model_config = ConfigDict(frozen=True)

    value: float | None
    """In [0, 1], or ``None`` for inconclusive."""
    method: str
    """Which scorer (and branch) produced the value."""
    explanation: str | None = None
    """Why, when the scorer says."""
    samples: tuple[float, ...] = Field(default=())
    """Individual judgments when the value is an average of several."""
    spread: float | None = None
    """Standard deviation of ``samples`` (``None`` with fewer than two)."""

    @field_validator("value")
    @classmethod
    def _in_unit_interval(cls, v: float | None) -> float | None:
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"similarity must be in [0, 1], got {v}")
        return v


@runtime_checkable
class SimilarityScorer(Protocol):
    """Computes S(a, a*, ι) for an original and a counterfactual answer."""

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        """Score the pair; the intervention type and query are context for model-based scorers.

        A scorer may also define ``async def ascore(...)`` with the same signature; async callers
        use it when present (see :func:`ascore_with`).
        """


async def ascore_with(
    scorer: SimilarityScorer, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
) -> Similarity:
    """``scorer.ascore`` when the scorer has one, else its sync ``score``."""
    ascore = getattr(scorer, "ascore", None)
    if ascore is not None:
        return cast(Similarity, await ascore(original, counterfactual, intervention=intervention, query=query))
    return scorer.score(original, counterfactual, intervention=intervention, query=query)
