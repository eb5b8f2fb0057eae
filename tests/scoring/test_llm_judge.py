from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.scoring import INTERVENTION_DESCRIPTIONS, LLMJudge, parse_score
from ariadne_lc.testing import ScriptedChatModel

A, B = "Following my plan, the total is forty two.", "Whatever the steps say, the total is forty two."


def replies(*texts: str) -> tuple[ScriptedChatModel, list[str]]:
    seen: list[str] = []

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        seen.append(messages[-1].text)
        return AIMessage(content=texts[(len(seen) - 1) % len(texts)])

    return ScriptedChatModel(script=script), seen


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("0.7", 0.7),
        ("1", 1.0),
        ("0", 0.0),
        ("1.0", 1.0),
        (".25", 0.25),
        ("  0.85\n", 0.85),
        ("Score: 0.7", 0.7),
        ("similarity = 0.3", 0.3),
        ("**0.9**", 0.9),
        ("`0.4`", 0.4),
        ("0.7.", 0.7),
    ],
)
def test_parse_accepts_exactly_one_number_in_the_unit_interval(reply: str, value: float) -> None:
    assert parse_score(reply) == pytest.approx(value)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "1.",  # a list marker, not a score
        "1. The answers agree",
        "2^10",
        "0.7 or 0.8",
        "0.7\n0.8",
        "Score: 0.7, maybe 0.9",
        "7",
        "10",
        "1.5",
        "-0.2",
        "70%",
        "The score is 0.7",
        "I would rate it 0.9 out of 1",
        "zero point seven",
        "0.7/1",
    ],
)
def test_parse_refuses_everything_else(reply: str) -> None:
    assert parse_score(reply) is None


def test_malformed_replies_are_inconclusive_never_a_default() -> None:
    for reply in ("1. They match", "2^10", "", "Both answers say 42, so 1", "0.5 0.5"):
        model, _ = replies(reply)
        s = LLMJudge(model).score(A, B, intervention="logic_flip")
        assert s.value is None and s.method == "llm_judge:inconclusive", reply
        assert "not a single number" in (s.explanation or "")


def test_a_clean_reply_is_the_value() -> None:
    model, _ = replies("Score: 0.9")
    s = LLMJudge(model).score(A, B)
    assert s.value == 0.9 and s.method == "llm_judge" and s.samples == () and s.spread is None


def test_the_prompt_names_the_intervention_and_prints_no_example_scores() -> None:
    for kind, description in INTERVENTION_DESCRIPTIONS.items():
        model, seen = replies("1")
        LLMJudge(model).score(A, B, intervention=kind, query="How many apples?")
        (prompt,) = seen
        assert description in prompt and A in prompt and B in prompt and "How many apples?" in prompt
        # the only numbers are the two ends of the scale
        assert set(re.findall(r"\d+(?:\.\d+)?", prompt)) == {"0", "1"}


def test_repeated_judgments_are_averaged_with_their_spread() -> None:
    model, _ = replies("0.9", "1", "0.8")
    s = LLMJudge(model, repeats=3).score(A, B)
    assert s.value == pytest.approx(0.9) and s.samples == (0.9, 1.0, 0.8)
    assert s.spread == pytest.approx(statistics.stdev([0.9, 1.0, 0.8]))
    model, _ = replies("0.9", "nope", "1")
    s = LLMJudge(model, repeats=3).score(A, B)
    assert s.value == pytest.approx(0.95) and s.samples == (0.9, 1.0)
    model, _ = replies("0.9", "nope", "1. yes")
    s = LLMJudge(model, repeats=3).score(A, B)
    assert s.value is None and s.samples == (0.9,)  # a majority must parse


def test_model_errors_are_inconclusive() -> None:
    def broken(messages: Sequence[BaseMessage]) -> AIMessage:
        raise ConnectionError("down")

    s = LLMJudge(ScriptedChatModel(script=broken)).score(A, B)
    assert s.value is None and "ConnectionError" in (s.explanation or "")


def test_bad_settings_fail_early() -> None:
    with pytest.raises(ConfigurationError, match="repeats"):
        LLMJudge(replies("1")[0], repeats=0)
    with pytest.raises(ConfigurationError, match="chat model"):
        LLMJudge("gpt-4o")  # type: ignore[arg-type]


async def test_async_judge() -> None:
    model, _ = replies("0.2", "0.4")
    s = await LLMJudge(model, repeats=2).ascore(A, B, intervention="fact_reversal")
    assert s.value == pytest.approx(0.3) and model.calls == 2
