"""What an intervention is: its type, and the typed outcome a critic returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ariadne_lc.errors import ConfigurationError

__all__ = [
    "CONTRADICTIONS",
    "Critic",
    "Intervention",
    "InterventionType",
    "parse_intervention_types",
]


class InterventionType(StrEnum):
    """The four contradictions of the formulation (section 2.1)."""

    LOGIC_FLIP = "logic_flip"
    """Flip logical operators and directions (true/false, increase/decrease, multiply/divide)."""
    FACT_REVERSAL = "fact_reversal"
    """Reverse factual claims (numbers, is/is not)."""
    PREMISE_NEGATION = "premise_negation"
    """Negate the premise the step starts from."""
    CAUSAL_REVERSAL = "causal_reversal"
    """Swap cause and effect."""


CONTRADICTIONS: tuple[InterventionType, ...] = tuple(InterventionType)
"""All contradiction types, in the formulation's order."""


class Intervention(BaseModel):
    """A critic's answer for one step and one type: the rewritten thought, or why there is none.

    ``applicable`` is false when the critic found nothing to contradict; such an intervention must
    not be replayed or scored, since an unchanged step would pass for a violation.
    """

    model_config = ConfigDict(frozen=True)

    type: str
    """The intervention type (an :class:`InterventionType` value, or a control's name)."""
    original: str
    """The step's thought as recorded."""
    intervened: str | None
    """The rewritten thought; ``None`` when not applicable."""
    applicable: bool
    """Whether a real change was made."""
    method: str
    """How it was made (e.g. ``rule:antonym``, ``llm``) or why not."""

    @classmethod
    def not_applicable(cls, type_: str, original: str, reason: str) -> Intervention:
        """The typed "nothing to change" outcome."""
        return cls(type=type_, original=original, intervened=None, applicable=False, method=reason)


@runtime_checkable
class Critic(Protocol):
    """Makes the contradicted version s'_k of a step's thought."""

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        """Rewrite ``thought`` according to ``intervention_type`` (the query is context only)."""


def parse_intervention_types(names: str | list[str] | tuple[str, ...]) -> list[InterventionType]:
    """Validate intervention names, with a message that lists the valid ones."""
    items = [names] if isinstance(names, str) else list(names)
    if not items:
        raise ConfigurationError("no interventions given; choose from " + ", ".join(CONTRADICTIONS))
    out: list[InterventionType] = []
    for name in items:
        try:
            out.append(InterventionType(name))
        except ValueError:
            raise ConfigurationError(
                f"unknown intervention {name!r}; choose from " + ", ".join(CONTRADICTIONS)
            ) from None
    return out
