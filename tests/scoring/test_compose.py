from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.scoring import (
    AnswerMatchScorer,
    ByLengthScorer,
    FirstConclusiveScorer,
    LLMJudge,
    NumericAnswerScorer,
)
from ariadne_lc.testing import ScriptedChatModel


def judge_saying(reply: str) -> tuple[LLMJudge, ScriptedChatModel]:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(content=reply)

    model = ScriptedChatModel(script=script)
    return LLMJudge(model), model


def test_numeric_answer_scorer_has_no_text_fallback() -> None:
    s = NumericAnswerScorer()
    assert s.score("The total is 42.", "So 42.").value == 1.0
    assert s.score("The total is 42.", "The total is 41.").value == 0.0
    assert s.score("Answer: (C)", "I choose (c)").value == 1.0
    none = s.score("Paris", "Lyon")
    assert none.value is None and none.method == "numeric_answer:none"


def test_first_conclusive_uses_the_judge_only_where_matching_cannot_decide() -> None:
    judge, model = judge_saying("0.25")
    scorer = FirstConclusiveScorer(NumericAnswerScorer(), judge)
    assert scorer.score("The total is 42.", "It is 42.").method == "numeric_answer:number"
    assert model.calls == 0
    s = scorer.score("The capital is Paris.", "The capital is Lyon.")
    assert s.value == 0.25 and s.method == "llm_judge" and model.calls == 1
    bad, _ = judge_saying("1. no")
    last = FirstConclusiveScorer(NumericAnswerScorer(), bad).score("Paris", "Lyon")
    assert last.value is None and last.method == "llm_judge:inconclusive"
    with pytest.raises(ConfigurationError):
        FirstConclusiveScorer()


def test_by_length_routes_short_answers_to_matching() -> None:
    judge, model = judge_saying("0.5")
    scorer = ByLengthScorer(short=AnswerMatchScorer(), long=judge, max_chars=10)
    assert scorer.score("42", " 42 ").method == "answer_match:number" and model.calls == 0
    assert scorer.score("42", "The total is forty-two.").value == 0.5 and model.calls == 1
    with pytest.raises(ConfigurationError):
        ByLengthScorer(short=AnswerMatchScorer(), long=judge, max_chars=-1)


async def test_combinators_are_async_too() -> None:
    judge, model = judge_saying("0.75")
    scorer = ByLengthScorer(short=NumericAnswerScorer(), long=FirstConclusiveScorer(NumericAnswerScorer(), judge))
    assert (await scorer.ascore("Paris", "Lyon")).value is None  # short, no number: inconclusive
    long_a, long_b = "The capital of France is Paris.", "The capital of France is Lyon, I believe."
    assert (await scorer.ascore(long_a, long_b)).value == 0.75 and model.calls == 1
