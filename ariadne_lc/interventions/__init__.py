"""Interventions: the contradicted thought s'_k that replaces a step's thought s_k, and the controls beside it."""

from ariadne_lc.interventions._types import (
    CONTRADICTIONS,
    CONTROLS,
    OBSERVATIONS,
    THOUGHT_CONTRADICTIONS,
    ControlType,
    Critic,
    Intervention,
    InterventionKind,
    InterventionType,
    ObservationType,
    aintervene_with,
    is_control,
    parse_intervention_types,
)
from ariadne_lc.interventions.controls import PARAPHRASE_SYNONYMS, RuleParaphraser, filler_text
from ariadne_lc.interventions.llm import CRITIC_INSTRUCTIONS, DEFAULT_CRITIC_ATTEMPTS, LLMCritic, check_rewrite
from ariadne_lc.interventions.rules import RuleCritic
from ariadne_lc.interventions.selection import (
    SELECTORS,
    Selector,
    adaptive_type,
    parse_interventions,
    random_type,
    resolve,
)

__all__ = [
    "CONTRADICTIONS",
    "CONTROLS",
    "CRITIC_INSTRUCTIONS",
    "DEFAULT_CRITIC_ATTEMPTS",
    "OBSERVATIONS",
    "PARAPHRASE_SYNONYMS",
    "SELECTORS",
    "THOUGHT_CONTRADICTIONS",
    "ControlType",
    "Critic",
    "Intervention",
    "InterventionKind",
    "InterventionType",
    "LLMCritic",
    "ObservationType",
    "RuleCritic",
    "RuleParaphraser",
    "Selector",
    "adaptive_type",
    "aintervene_with",
    "check_rewrite",
    "filler_text",
    "is_control",
    "parse_intervention_types",
    "parse_interventions",
    "random_type",
    "resolve",
]
