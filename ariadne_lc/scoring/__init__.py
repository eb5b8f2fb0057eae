"""Scoring: how far the counterfactual answer moved, φ, and the violation rule."""

from ariadne_lc.scoring._types import Similarity, SimilarityScorer
from ariadne_lc.scoring.answer import AnswerMatchScorer, extract_number, extract_option, normalize_answer
from ariadne_lc.scoring.faithfulness import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    Label,
    SimilarityMetrics,
    Verdict,
    judge,
    metric_vector,
)
from ariadne_lc.scoring.lexical import char_similarity, exact_match, jaccard, length_ratio

__all__ = [
    "DEFAULT_LAMBDA",
    "DEFAULT_TAU",
    "AnswerMatchScorer",
    "Label",
    "Similarity",
    "SimilarityMetrics",
    "SimilarityScorer",
    "Verdict",
    "char_similarity",
    "exact_match",
    "extract_number",
    "extract_option",
    "jaccard",
    "judge",
    "length_ratio",
    "metric_vector",
    "normalize_answer",
]
