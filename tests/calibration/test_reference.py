"""The reference re-prompt method: its lenient and strict judges, and that it cannot see a bypass."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.calibration import areference_audit, lenient_score, reference_audit
from ariadne_lc.calibration.reference import extract_final_answer
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.testing import ScriptedChatModel, calculator
from tests.helpers import record

_PLAN = re.compile(r"so I need to (\w+) (\d+) by (\d+)", re.I)
_OPS = {"multiply": lambda a, b: a * b, "divide": lambda a, b: a / b, "add": lambda a, b: a + b}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
QUESTION = "How many apples are in 6 boxes of 7?"


def _follow(text: str) -> str:
    plan = _PLAN.search(text)
    if plan is None or plan.group(1).lower() not in _OPS or re.search(r"\bnot\b", text[: plan.end()]):
        return "My reasoning gives no total."
    value = _OPS[plan.group(1).lower()](float(plan.group(2)), float(plan.group(3)))
    return f"Following the plan, the total is {value:g}."


def _judge_reply(text: str, *, parse: bool) -> str:
    answers = re.findall(r"(?:Answer [AB][^\n]*|answer[^\n]*):\n\"?([^\n]*)", text)
    if not parse:
        return "They look rather alike to me."
    numbers = [_NUMBER.findall(a)[-1:] for a in answers[:2]]
    return "1" if len(numbers) == 2 and numbers[0] == numbers[1] else "0"


def plan_follower(*, judge_parses: bool = True) -> ScriptedChatModel:
    """A model that, like a real one, carries out whatever plan it is shown (and judges answers by number)."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        last = messages[-1].text
        if "similar" in last and "answer" in last.lower():
            return AIMessage(content=_judge_reply(last, parse=judge_parses))
        if "Continue reasoning from the above steps" in last:
            return AIMessage(content=f"Step 2: I follow step 1.\nFinal Answer: {_follow(last)}")
        thoughts = [m.text for m in messages if isinstance(m, AIMessage)]
        if thoughts:
            return AIMessage(content=_follow(thoughts[0]))
        if any(isinstance(m, SystemMessage) for m in messages):  # the bypass answer call: question only
            a, b = (float(x) for x in _NUMBER.findall(last)[:2])
            return AIMessage(content=f"Without any plan, the total is {a * b:g}.")
        return AIMessage(
            content="Every box holds the same amount, so I need to multiply 6 by 7 to get the total.",
            tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "call-0"}],
        )

    return ScriptedChatModel(script=script)


def bypass_graph(model: ScriptedChatModel) -> Any:
    """agent (thinks, calls a tool) -> tools -> answer, whose model call sees the question only."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        question = next(m for m in state["messages"] if isinstance(m, HumanMessage))
        return {"messages": [model.invoke([SystemMessage(content="Answer with the total."), question])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([calculator]))
    builder.add_node("answer", answer)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_lenient_parsing_takes_the_first_number_and_falls_back_to_half() -> None:
    assert lenient_score("0.3") == (0.3, False)
    assert lenient_score("1. They agree") == (1.0, False)  # a list marker read as a score
    assert lenient_score("2^10") == (1.0, False)  # capped
    assert lenient_score("Similarity: 85") == (1.0, False)
    assert lenient_score("They look alike.") == (0.5, True)


def test_final_answer_extraction() -> None:
    assert extract_final_answer("Step 1: x\nFinal Answer: 42 apples\n\nThanks") == "42 apples"
    assert extract_final_answer("first\n\nso it is 42") == "so it is 42"


def test_unparseable_judge_lenient_scores_half_strict_is_inconclusive() -> None:
    model = plan_follower(judge_parses=False)
    kwargs: dict[str, Any] = {
        "query": QUESTION,
        "original_answer": "Without any plan, the total is 42.",
        "intervened_step": "Every box holds the same amount, so I need to divide 6 by 7 to get the total.",
    }
    lenient = reference_audit(model, judge_mode="lenient", **kwargs)
    assert lenient.status == "scored" and lenient.similarity == 0.5
    assert lenient.similarity_method == "reference_judge:fallback"
    assert lenient.phi == 0.5 and not lenient.violation
    strict = reference_audit(model, judge_mode="strict", **kwargs)
    assert strict.status == "inconclusive" and strict.similarity is None and strict.label == "inconclusive"
    assert strict.model_calls == 2 and strict.intervention_method == "reference:reprompt"


def test_model_error_is_recorded_as_failed() -> None:
    def broken(messages: Sequence[BaseMessage]) -> AIMessage:
        raise RuntimeError("server down")

    r = reference_audit(
        ScriptedChatModel(script=broken),
        query=QUESTION,
        original_answer="42",
        intervened_step="x",
        judge_mode="lenient",
    )
    assert r.status == "failed" and r.error == "RuntimeError: server down" and r.model_calls == 1
    assert r.error_type == "RuntimeError"


def test_bad_judge_mode_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="judge_mode"):
        reference_audit(plan_follower(), query=QUESTION, original_answer="42", intervened_step="x", judge_mode="loose")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
async def test_reference_method_cannot_see_a_bypass_that_the_replay_finds(mode: str) -> None:
    model = plan_follower()
    graph = bypass_graph(model)
    trace = record(graph, question=QUESTION)
    assert trace.final_answer == "Without any plan, the total is 42."
    (ours,) = Auditor(graph).audit(trace, interventions=["logic_flip"])
    assert ours.status == "scored" and ours.violation  # the replayed answer held: a bypass, detected
    assert ours.intervened_thought and ours.intervened_thought != ours.original_thought
    kwargs: dict[str, Any] = {
        "query": QUESTION,
        "original_answer": trace.final_answer,
        "intervened_step": ours.intervened_thought,
        "original_step": ours.original_thought,
        "judge_mode": mode,
        "trace_id": trace.trace_id,
    }
    theirs = reference_audit(model, **kwargs)
    assert theirs.status == "scored" and not theirs.violation  # the re-prompt saw the thought: a miss
    assert theirs.answer_changed and theirs.similarity == 0.0 and theirs.trace_id == trace.trace_id
    again = await areference_audit(model, **kwargs)
    assert again.model_dump(exclude={"result_id", "created_at", "duration_s"}) == theirs.model_dump(
        exclude={"result_id", "created_at", "duration_s"}
    )


def test_a_completion_model_drives_the_lenient_method() -> None:
    from langchain_core.language_models.fake import FakeListLLM

    llm = FakeListLLM(responses=["Step 2: so 6 times 7.\nFinal Answer: The total is 42 apples.", "Score 0.9, I think"])
    r = reference_audit(
        llm, query=QUESTION, original_answer="The total is 42 apples.", intervened_step="x", judge_mode="lenient"
    )
    assert r.counterfactual_answer == "The total is 42 apples." and r.similarity == 0.9 and r.violation


def test_strict_mode_refuses_a_completion_model_without_a_strict_judge() -> None:
    from langchain_core.language_models.fake import FakeListLLM

    with pytest.raises(ConfigurationError, match="strict judge needs a chat model"):
        reference_audit(FakeListLLM(responses=["x"]), query=QUESTION, original_answer="42", intervened_step="x",
                        judge_mode="strict")  # fmt: skip
