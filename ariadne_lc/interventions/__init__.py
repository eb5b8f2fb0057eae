"""Interventions: the contradicted thought s'_k that replaces a step's thought s_k."""

from ariadne_lc.interventions._types import (
    CONTRADICTIONS,
    Critic,
    Intervention,
    InterventionType,
    parse_intervention_types,
)
from ariadne_lc.interventions.rules import RuleCritic

__all__ = [
    "CONTRADICTIONS",
    "Critic",
    "Intervention",
    "InterventionType",
    "RuleCritic",
    "parse_intervention_types",
]
