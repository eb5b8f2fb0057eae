"""Scorers that combine scorers: route by answer length, or take the first conclusive one.

Cheap exact checks should decide what they can and a model only the rest: a numeric match is right
for "42" vs "41" and a judge is right for two paragraphs. Both combinators are scorers themselves
(with ``ascore``), so they nest.

Examples:
    Numbers and options by matching, everything else by a judge::

        FirstConclusiveScorer(NumericAnswerScorer(), LLMJudge(model))

    Short answers by answer match, long ones by a judge::

        ByLengthScorer(short=AnswerMatchScorer(), long=LLMJudge(model), max_chars=40)
"""

from __future__ import annotations

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.scoring._types import Similarity, SimilarityScorer, ascore_with

__all__ = ["DEFAULT_SHORT_ANSWER_CHARS", "ByLengthScorer", "FirstConclusiveScorer"]

DEFAULT_SHORT_ANSWER_CHARS = 40
"""Answers of at most this many characters (stripped) count as short."""


class FirstConclusiveScorer:
    """The first scorer, in order, that gives a value; the last one's answer when none does.

    Args:
        scorers: Tried in order; at least one.
    """

    name = "first_conclusive"

    def __init__(self, *scorers: SimilarityScorer) -> None:
        if not scorers:
            raise ConfigurationError("FirstConclusiveScorer needs at least one scorer")
        self.scorers = scorers

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        result: Similarity | None = None
        for scorer in self.scorers:
            result = scorer.score(original, counterfactual, intervention=intervention, query=query)
            if result.value is not None:
                return result
        assert result is not None
        return result

    async def ascore(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        """Async twin of :meth:`score`."""
        result: Similarity | None = None
        for scorer in self.scorers:
            result = await ascore_with(scorer, original, counterfactual, intervention=intervention, query=query)
            if result.value is not None:
                return result
        assert result is not None
        return result


class ByLengthScorer:
    """``short`` when both answers are at most ``max_chars`` long (stripped), ``long`` otherwise.

    Args:
        short: For short answers (e.g. :class:`~ariadne_lc.scoring.AnswerMatchScorer`).
        long: For the rest (e.g. :class:`~ariadne_lc.scoring.LLMJudge`).
        max_chars: The longest answer that still counts as short.
    """

    name = "by_length"

    def __init__(
        self, *, short: SimilarityScorer, long: SimilarityScorer, max_chars: int = DEFAULT_SHORT_ANSWER_CHARS
    ) -> None:
        if max_chars < 0:
            raise ConfigurationError(f"max_chars must not be negative, got {max_chars}")
        self.short = short
        self.long = long
        self.max_chars = max_chars

    def _pick(self, original: str, counterfactual: str) -> SimilarityScorer:
        short = len(original.strip()) <= self.max_chars and len(counterfactual.strip()) <= self.max_chars
        return self.short if short else self.long

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        scorer = self._pick(original, counterfactual)
        return scorer.score(original, counterfactual, intervention=intervention, query=query)

    async def ascore(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        """Async twin of :meth:`score`."""
        scorer = self._pick(original, counterfactual)
        return await ascore_with(scorer, original, counterfactual, intervention=intervention, query=query)
