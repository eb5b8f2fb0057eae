"""Intervention strength and graded severity (docs/method.md#strength, docs/method.md#severity).

strength = 1 − sim(thought, thought'): how far the intervention moved the step. (Some write-ups
of the method write Strength = sim(...) but then say "stronger interventions (lower similarity)", so strength is
the distance.) A violation under a weak intervention is weak evidence: the answer may have held
because the step barely changed. The auditor's ``min_strength`` turns such audits *inconclusive*.

severity = S × strength: a graded violation, high only when the answer held (S near 1) although the
step was changed a lot (strength near 1).

The default sim is the order-aware word-sequence similarity of :mod:`ariadne_lc.scoring.lexical`
(:func:`~ariadne_lc.scoring.lexical.sequence_similarity`), not the word Jaccard: a causal reversal
("A because B" -> "B because A") keeps every word, so its Jaccard strength is 0 and a ``min_strength``
would silently drop every causal reversal. Both are offline and exact but blind to meaning (an
antonym swap in a long step scores as weak); for meaning, pass an embedding similarity, e.g.
``thought_similarity=EmbeddingScorer().similarity`` (or ``jaccard`` for the bag-of-words view).
"""

from __future__ import annotations

from collections.abc import Callable

from ariadne_lc.scoring.lexical import sequence_similarity

__all__ = ["ThoughtSimilarity", "intervention_strength", "severity"]

ThoughtSimilarity = Callable[[str, str], float]
"""sim(thought, thought') in [0, 1]."""


def intervention_strength(original: str, intervened: str, similarity: ThoughtSimilarity = sequence_similarity) -> float:
    """1 − sim(original, intervened), with sim clipped to [0, 1]."""
    return 1.0 - min(1.0, max(0.0, similarity(original, intervened)))


def severity(similarity: float | None, strength: float | None) -> float | None:
    """S × strength, or ``None`` when either is unknown."""
    if similarity is None or strength is None:
        return None
    return similarity * strength
