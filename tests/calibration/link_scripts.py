"""A scripted model for the per-link ground-truth agents: it writes the planning thought the question asks for."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.calibration.link_questions import question_call
from ariadne_lc.testing import ScriptedChatModel

_WORDS = {"add": "and", "subtract": "from", "multiply": "by", "divide": "by"}


def plan(messages: Sequence[BaseMessage]) -> AIMessage:
    """A planning thought for the last question: the question's own call, in words."""
    question = messages[-1].text.removeprefix("Question: ")
    call = question_call(question)
    assert call is not None, question
    op, a, b = call
    first, second = (b, a) if op == "subtract" else (a, b)
    return AIMessage(content=f"The numbers are {a} and {b}, so I should {op} {first} {_WORDS[op]} {second}.")


def planning_model() -> ScriptedChatModel:
    """A model that plans every generated question's own call."""
    return ScriptedChatModel(script=plan)
