from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from ariadne_lc.errors import ConfigurationError, CriticError
from ariadne_lc.interventions import CRITIC_INSTRUCTIONS, LLMCritic, check_rewrite
from ariadne_lc.testing import ScriptedChatModel

THOUGHT = "Every box holds the same amount, so I need to multiply 6 by 7 to get the total."
FLIPPED = "Every box holds a different amount, so I need to divide 6 by 7 to get the total."


def _step_in(messages: Sequence[BaseMessage]) -> str:
    """The step a critic prompt asks to rewrite (the line after its heading)."""
    return messages[-1].text.split("Reasoning step to rewrite:\n", 1)[1].split("\n", 1)[0]


def replies(*texts: str) -> tuple[ScriptedChatModel, list[str]]:
    """A model that gives these replies in turn (the last one again when they run out), and its prompts."""
    seen: list[str] = []

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        seen.append(messages[-1].text)
        return AIMessage(content=texts[min(len(seen), len(texts)) - 1])

    return ScriptedChatModel(script=script), seen


def test_an_echoing_model_never_yields_an_intervention() -> None:
    echo = ScriptedChatModel(script=lambda messages: AIMessage(content=_step_in(messages)))
    result = LLMCritic(echo).intervene(THOUGHT, "logic_flip", query="How many apples?")
    assert not result.applicable and result.intervened is None
    assert result.method == "llm: no valid rewrite in 3 attempt(s)"
    assert len(result.rejections) == 3 and all(r.startswith("same as the original") for r in result.rejections)
    assert echo.calls == 3


def test_a_rejected_reply_is_retried_with_the_reason() -> None:
    model, seen = replies("You are a helpful assistant. The original reasoning step says to multiply.", FLIPPED)
    result = LLMCritic(model).intervene(THOUGHT, "logic_flip")
    assert result.applicable and result.intervened == FLIPPED and result.method == "llm:attempt-2"
    (rejection,) = result.rejections
    assert rejection.startswith("talks about the task")
    first, second = seen
    assert "rejected" not in first
    assert "Your previous reply was rejected (talks about the task instead of rewriting the step)" in second


def test_one_prompt_per_type_with_step_query_and_no_examples() -> None:
    for kind, instruction in CRITIC_INSTRUCTIONS.items():
        model, seen = replies("Prices fall sharply.")
        LLMCritic(model).intervene("Prices rise sharply.", kind, query="What happens to prices?")
        (prompt,) = seen
        assert instruction in prompt
        assert "Prices rise sharply." in prompt and "What happens to prices?" in prompt
        assert not re.search(r"\d", prompt), "the prompt must carry no example numbers"
        others = [text for k, text in CRITIC_INSTRUCTIONS.items() if k != kind]
        assert not any(text in prompt for text in others)


@pytest.mark.parametrize(
    ("reply", "expected", "reason"),
    [
        ("Prices fall.", "Prices fall.", ""),
        ("Rewritten step: Prices fall.", "Prices fall.", ""),
        ("Here is the rewritten step:\nPrices fall.", "Prices fall.", ""),
        ('"Prices fall."', "Prices fall.", ""),
        ("```\nPrices fall.\n```", "Prices fall.", ""),
        ("", None, "empty reply"),
        ("   ", None, "empty reply"),
        ("Sure! Prices fall.", None, "talks about the task instead of rewriting the step"),
        ("You are an expert. Prices fall.", None, "talks about the task instead of rewriting the step"),
        ("The original reasoning step claims prices rise.", None, "talks about the task instead of rewriting the step"),
        ("I'm sorry, I cannot help with that.", None, "talks about the task instead of rewriting the step"),
        ("1. Prices fall.\n2. Demand rises.", None, "a list, not one step"),
        ("Prices fall.\n\nThen demand rises.", None, "more than one step"),
        ("Prices fall " + "and fall " * 40, None, "too long to be one step"),
        ("PRICES  rise!", None, "same as the original"),
    ],
)
def test_check_rewrite(reply: str, expected: str | None, reason: str) -> None:
    assert check_rewrite("Prices rise.", reply) == (expected, reason)


def test_an_opening_the_original_shares_is_not_meta_talk() -> None:
    assert check_rewrite("Okay, so prices rise.", "Okay, so prices fall.") == ("Okay, so prices fall.", "")


def test_model_errors_are_critic_errors_and_bad_settings_fail_early() -> None:
    def broken(messages: Sequence[BaseMessage]) -> AIMessage:
        raise TimeoutError("no answer")

    with pytest.raises(CriticError, match="TimeoutError: no answer"):
        LLMCritic(ScriptedChatModel(script=broken)).intervene(THOUGHT, "logic_flip")
    with pytest.raises(ConfigurationError, match="chat model"):
        LLMCritic(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="temperature"):
        LLMCritic(replies("x")[0], temperature=-1)
    with pytest.raises(ConfigurationError, match="max_attempts"):
        LLMCritic(replies("x")[0], max_attempts=0)


def test_unknown_kind_and_empty_thought_are_not_applicable() -> None:
    model, _ = replies("Prices fall.")
    critic = LLMCritic(model)
    assert not critic.intervene(THOUGHT, "rerun").applicable
    assert not critic.intervene("  ", "logic_flip").applicable
    assert model.calls == 0


async def test_async_critic() -> None:
    model, _ = replies("Sure, here you go.", FLIPPED)
    result = await LLMCritic(model).aintervene(THOUGHT, "logic_flip")
    assert result.applicable and result.intervened == FLIPPED and model.calls == 2


class SamplingModel(BaseChatModel):
    """Declares temperature and seed as fields, as most provider chat models do."""

    temperature: float = 0.7
    seed: int | None = None
    log: list[tuple[float, int | None, dict[str, Any]]]

    @property
    def _llm_type(self) -> str:
        return "sampling-test"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.log.append((self.temperature, self.seed, kwargs))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=_step_in(messages)))])


class KeywordModel(BaseChatModel):
    """Takes sampling settings only as call keywords."""

    log: list[dict[str, Any]]

    @property
    def _llm_type(self) -> str:
        return "keyword-test"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.log.append(kwargs)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=_step_in(messages)))])


def test_temperature_and_seed_reach_the_model_each_attempt_with_a_new_seed() -> None:
    fields = SamplingModel(log=[])
    LLMCritic(fields, temperature=0.0, seed=11).intervene(THOUGHT, "logic_flip")
    assert [(t, s) for t, s, _ in fields.log] == [(0.0, 11), (0.0, 12), (0.0, 13)]
    assert fields.temperature == 0.7 and fields.seed is None  # the user's model is not changed
    keywords = KeywordModel(log=[])
    LLMCritic(keywords, temperature=0.2, seed=5, max_attempts=2).intervene(THOUGHT, "logic_flip")
    assert [(k["temperature"], k["seed"]) for k in keywords.log] == [(0.2, 5), (0.2, 6)]
    untouched = SamplingModel(log=[])
    LLMCritic(untouched, max_attempts=1).intervene(THOUGHT, "logic_flip")
    assert untouched.log == [(0.7, None, {})]
