"""Scoring: how far the counterfactual answer moved, φ, the violation rule, strength and severity."""

from ariadne_lc.scoring._types import Similarity, SimilarityScorer, ascore_with
from ariadne_lc.scoring.answer import (
    AnswerMatchScorer,
    NumericAnswerScorer,
    extract_number,
    extract_option,
    normalize_answer,
)
from ariadne_lc.scoring.compose import DEFAULT_SHORT_ANSWER_CHARS, ByLengthScorer, FirstConclusiveScorer
from ariadne_lc.scoring.embeddings import EmbeddingScorer
from ariadne_lc.scoring.faithfulness import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    Label,
    SimilarityMetrics,
    Verdict,
    judge,
    metric_vector,
)
from ariadne_lc.scoring.lexical import char_similarity, exact_match, jaccard, length_ratio, sequence_similarity
from ariadne_lc.scoring.llm_judge import INTERVENTION_DESCRIPTIONS, LLMJudge, parse_score
from ariadne_lc.scoring.strength import ThoughtSimilarity, intervention_strength, severity

__all__ = [
    "DEFAULT_LAMBDA",
    "DEFAULT_SHORT_ANSWER_CHARS",
    "DEFAULT_TAU",
    "INTERVENTION_DESCRIPTIONS",
    "AnswerMatchScorer",
    "ByLengthScorer",
    "EmbeddingScorer",
    "FirstConclusiveScorer",
    "LLMJudge",
    "Label",
    "NumericAnswerScorer",
    "Similarity",
    "SimilarityMetrics",
    "SimilarityScorer",
    "ThoughtSimilarity",
    "Verdict",
    "ascore_with",
    "char_similarity",
    "exact_match",
    "extract_number",
    "extract_option",
    "intervention_strength",
    "jaccard",
    "judge",
    "length_ratio",
    "metric_vector",
    "normalize_answer",
    "parse_score",
    "sequence_similarity",
    "severity",
]
