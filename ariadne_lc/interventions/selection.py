"""Intervention type selection (docs/method.md#type-selection): fixed, random (seeded) or adaptive.

Besides the names of contradictions and controls, ``interventions=`` accepts two selectors that
resolve to one contradiction type per audited step:

- ``"random"``: uniform over the five contradictions (``CONTRADICTIONS``), drawn from a generator seeded with
  ``(seed, trace id, step)``, so a batch gives the same draws whatever order its threads run in.
- ``"adaptive"``: the type whose pattern the step contains, checked in this order: causal language
  (because, so, therefore, leads to) -> ``causal_reversal``; a number -> ``fact_reversal``; a
  direction or operator (more/less, multiply/divide, +) -> ``logic_flip``; otherwise
  ``premise_negation``. Causal language comes first because a step that gives a reason is the step
  whose reasoning, not just whose facts, the audit is about.
- ``"decisive"``: resolved when the audit runs, per link: the first contradictions (in the order of
  :data:`~ariadne_lc.audit.DECISIVE_ORDER`) whose edit the link's decisiveness gate accepts. The default plan's
  choice for every thought step (docs/method.md#the-default-plan).
"""

from __future__ import annotations

import random
from typing import Literal

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions._types import (
    CONTRADICTIONS,
    CONTROLS,
    OBSERVATIONS,
    THOUGHT_CONTRADICTIONS,
    InterventionType,
    parse_intervention_types,
)
from ariadne_lc.interventions.rules import has_causal_language, has_logic_words, has_numeric_claim

__all__ = ["SELECTORS", "Selector", "adaptive_type", "parse_interventions", "random_type", "resolve"]

Selector = Literal["random", "adaptive", "decisive"]
SELECTORS: tuple[Selector, ...] = ("random", "adaptive", "decisive")
"""Names that choose a contradiction per step instead of naming one."""


def adaptive_type(thought: str) -> tuple[InterventionType, str]:
    """The contradiction that fits ``thought``, and the pattern that decided it."""
    if has_causal_language(thought):
        return InterventionType.CAUSAL_REVERSAL, "causal language"
    if has_numeric_claim(thought):
        return InterventionType.FACT_REVERSAL, "numeric claim"
    if has_logic_words(thought):
        return InterventionType.LOGIC_FLIP, "direction or operator"
    return InterventionType.PREMISE_NEGATION, "no specific pattern"


def random_type(seed: int, trace_id: str, step: int) -> InterventionType:
    """A contradiction drawn uniformly, reproducibly for this seed, trace and step."""
    return random.Random(f"{seed}:{trace_id}:{step}").choice(THOUGHT_CONTRADICTIONS)


def parse_interventions(names: str | list[str] | tuple[str, ...]) -> list[str]:
    """Validate ``interventions=``: contradiction and control names, ``"random"`` and ``"adaptive"``."""
    items = [names] if isinstance(names, str) else list(names)
    if not items:
        raise ConfigurationError(
            "no interventions given; choose from " + ", ".join([*CONTRADICTIONS, *OBSERVATIONS, *CONTROLS, *SELECTORS])
        )
    out: list[str] = []
    for name in items:
        if name in SELECTORS:
            out.append(name)
            continue
        try:
            out.extend(str(k) for k in parse_intervention_types([name]))
        except ConfigurationError:
            raise ConfigurationError(
                f"unknown intervention {name!r}; choose from "
                + ", ".join([*CONTRADICTIONS, *OBSERVATIONS, *CONTROLS, *SELECTORS])
            ) from None
    return out


def resolve(name: str, thought: str, *, seed: int, trace_id: str, step: int) -> tuple[str, str]:
    """The concrete kind for one requested name at one step, and how it was selected.

    Returns ``(kind, selection)`` where ``selection`` is ``"fixed"``, ``"random"`` or
    ``"adaptive:<pattern>"``.
    """
    if name == "random":
        return str(random_type(seed, trace_id, step)), "random"
    if name == "adaptive":
        kind, why = adaptive_type(thought)
        return str(kind), f"adaptive:{why}"
    if name == "decisive":  # resolved when the audit runs: the first contradictions the link's gate accepts
        return name, "decisive"
    return name, "fixed"
