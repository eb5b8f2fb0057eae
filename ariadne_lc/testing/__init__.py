"""Scripted chat models and reference agents for tests, examples and users' own unit tests.

LangChain's stock fake chat models cannot drive a tool-calling agent: they do not implement
``bind_tools`` and drop ``tool_calls`` when streaming. The models here reply with a function of the
conversation so far, so an intervened thought can really change what happens next (a *faithful*
script) or be ignored (an *unfaithful* script). Like httpx's mock transport, they ship in the library
so that users can test their own audit set-ups without a model server.

A script can answer the way ``create_agent(..., response_format=Schema)`` expects, with either of its
strategies (:func:`structured_reply`): the arithmetic models do so with ``structured="tool"`` or
``"provider"``, answering an :class:`ArithmeticAnswer`. The quick start's weather agent calls its tool with no text.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel

from ariadne_lc._arithmetic import evaluate
from ariadne_lc.testing._faithful import assert_faithful
from ariadne_lc.testing._lookup import lookup, lookup_model, lookup_question, stored_value
from ariadne_lc.testing._scripted import Reply, ScriptedChatModel
from ariadne_lc.testing._thoughts import ThoughtPlace, carried, carry
from ariadne_lc.testing._weather import get_weather, weather_model

__all__ = [
    "ArithmeticAnswer",
    "Reply",
    "ScriptedChatModel",
    "StructuredStrategy",
    "arithmetic_tools",
    "assert_faithful",
    "build_hand_graph",
    "calculator",
    "faithful_arithmetic_model",
    "get_weather",
    "lookup",
    "lookup_model",
    "lookup_question",
    "planning_tool_model",
    "reasoning_content_model",
    "stored_value",
    "structured_reply",
    "think_tag_model",
    "unfaithful_arithmetic_model",
    "weather_model",
]

StructuredStrategy = Literal["tool", "provider"]
"""How a scripted model gives a structured response: ``create_agent``'s ``ToolStrategy`` or ``ProviderStrategy``."""


class ArithmeticAnswer(BaseModel):
    """The structured answer of the arithmetic models (``create_agent(..., response_format=ArithmeticAnswer)``)."""

    explanation: str
    """How the total was reached, or why there is none."""
    total: float | None
    """The total, ``None`` when the reasoning gives none."""


def structured_reply(response: BaseModel, strategy: StructuredStrategy, *, text: str = "") -> AIMessage:
    """The model turn that gives ``response`` as ``create_agent``'s structured output.

    ``"tool"`` (``ToolStrategy``, what most providers get): a call of the tool named after the schema,
    with the response's fields as arguments, and ``text`` as the only content (real models mostly
    leave it empty). ``"provider"`` (``ProviderStrategy``, native structured output): the response as
    JSON text, no tool call.

    Examples:
        >>> structured_reply(ArithmeticAnswer(explanation="6 * 7", total=42), "provider").text
        '{"explanation": "6 * 7", "total": 42.0}'
    """
    fields = response.model_dump(mode="json")
    if strategy == "provider":
        return AIMessage(content=json.dumps(fields))
    call = {"name": type(response).__name__, "args": fields, "id": f"structured-{next(_structured_ids)}"}
    return AIMessage(content=text, tool_calls=[call])


_structured_ids = itertools.count()


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression with + - * / and parentheses."""
    return f"{evaluate(expression):g}"


_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")
# The operation a thought commits to, and how the faithful script carries it out.
_OPERATIONS: tuple[tuple[str, str, Callable[[float, float], float]], ...] = (
    ("multiply", "*", operator.mul),
    ("divide", "/", operator.truediv),
    ("subtract", "-", operator.sub),
    ("add", "+", operator.add),
)


def _question(messages: Sequence[BaseMessage]) -> str:
    return next((m.text for m in messages if isinstance(m, HumanMessage)), "")


def _first_thought(messages: Sequence[BaseMessage]) -> str | None:
    return next((m.text for m in messages if isinstance(m, AIMessage)), None)


def _plan(question: str) -> tuple[float, float]:
    numbers = [float(n) for n in _NUMBERS.findall(question)]
    if len(numbers) < 2:
        raise ValueError(f"the scripted agents need two numbers in the question, got {question!r}")
    return numbers[0], numbers[1]


def _opening(messages: Sequence[BaseMessage]) -> AIMessage:
    a, b = _plan(_question(messages))
    return AIMessage(
        content=(
            f"Every box holds the same amount, so I need to multiply {a:g} by {b:g} "
            "to get the total, because each box adds the same number again."
        ),
        tool_calls=[{"name": "calculator", "args": {"expression": f"{a:g} * {b:g}"}, "id": "call-0"}],
    )


_PLAN = re.compile(r"\bso I need to (\w+) (-?\d+(?:\.\d+)?) by (-?\d+(?:\.\d+)?)", re.I)
_NEGATION = re.compile(r"\b(not|no longer|never|cannot|don't|isn't|aren't)\b", re.I)


def _answer(text: str, explanation: str, total: float | None, structured: StructuredStrategy | None) -> AIMessage:
    if structured is None:
        return AIMessage(content=text)
    return structured_reply(ArithmeticAnswer(explanation=explanation, total=total), structured)


def faithful_arithmetic_model(*, structured: StructuredStrategy | None = None) -> ScriptedChatModel:
    """An agent model whose final answer is computed from what its own first thought says.

    Turn one states a premise and a plan ("..., so I need to multiply 6 by 7 ...") and calls the
    calculator. Turn two reads the first thought back from the conversation (possibly an intervened
    one) and carries out the plan written there, with the operation and numbers written there. When
    the plan no longer follows from the premise (negated, reversed, missing) it says it cannot give a
    total. Contradict the thought and the answer moves: a faithful agent.

    Args:
        structured: Answer with an :class:`ArithmeticAnswer` through ``create_agent``'s tool or provider
            strategy instead of text (create the agent with ``response_format=ToolStrategy(ArithmeticAnswer)``
            or ``ProviderStrategy(ArithmeticAnswer)``).
    """

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        thought = _first_thought(messages)
        if thought is None:
            return _opening(messages)
        plan = _PLAN.search(thought)
        if plan is None or _NEGATION.search(thought[: plan.end()]):
            text = "My reasoning no longer supports a calculation, so I cannot give a total."
            return _answer(text, text, None, structured)
        word, a, b = plan.group(1).lower(), float(plan.group(2)), float(plan.group(3))
        for name, symbol, fn in _OPERATIONS:
            if word == name:
                total = fn(a, b)
                how = f"Following my plan to {word} ({a:g} {symbol} {b:g})"
                return _answer(f"{how}, the total is {total:g}.", how, total, structured)
        text = f"My plan says to {word} the numbers, which gives no total I can compute."
        return _answer(text, text, None, structured)

    return ScriptedChatModel(script=script)


def unfaithful_arithmetic_model(*, structured: StructuredStrategy | None = None) -> ScriptedChatModel:
    """An agent model that writes the same plan but answers from the question alone.

    Its final answer never reads the thought: whatever the reasoning says, it multiplies. Contradict
    the plan and the answer stays: reasoning theatre, a violation.

    Args:
        structured: As for :func:`faithful_arithmetic_model`.
    """

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if _first_thought(messages) is None:
            return _opening(messages)
        a, b = _plan(_question(messages))
        total = a * b
        return _answer(
            f"Whatever the steps say, the total is {total:g} in all.", "Whatever the steps say", total, structured
        )

    return ScriptedChatModel(script=script)


@tool
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return f"{a + b:g}"


@tool
def multiply(a: float, b: float) -> str:
    """Multiply two numbers."""
    return f"{a * b:g}"


@tool
def subtract(a: float, b: float) -> str:
    """Subtract b from a."""
    return f"{a - b:g}"


@tool
def divide(a: float, b: float) -> str:
    """Divide a by b."""
    return f"{a / b:g}"


def arithmetic_tools() -> list[BaseTool]:
    """``add``, ``multiply``, ``subtract``, ``divide``: the tools of :func:`planning_tool_model`."""
    return [add, multiply, subtract, divide]


_CALL_PLAN = re.compile(r"\b(add|multiply|subtract|divide)\b\D*?(-?\d+(?:\.\d+)?)\D+?(-?\d+(?:\.\d+)?)", re.I)


def planning_tool_model(
    *,
    action: Literal["thought", "question"] = "thought",
    answer: Literal["observation", "question"] = "observation",
    thought_in: ThoughtPlace = "text",
) -> ScriptedChatModel:
    """A tool-calling agent model whose thoughts plan a call ("..., so I should multiply 12 by 9."), faithful or not
    on each link of its loop, by construction (docs/method.md#links).

    Turn one writes the plan and calls ``multiply`` with the question's first two numbers. A turn that must continue
    a trailing assistant message (the ``thought->action`` re-run: the thought as the start of the reply) makes the
    call the thought says with ``action="thought"`` (the verb and numbers written there; no call when the plan is
    negated), or the question's ``multiply`` again with ``action="question"``. After a tool output it answers with
    that output (``answer="observation"``) or with the product of the question's numbers (``"question"``).
    ``thought_in`` is where it writes its thoughts, and the only place it reads them back from (a reasoning model:
    :func:`reasoning_content_model`, :func:`think_tag_model`); its calls then come with no visible text.
    """

    def opening(messages: Sequence[BaseMessage]) -> AIMessage:
        a, b = _plan(_question(messages))
        thought = f"The hotel has {a:g} floors and {b:g} rooms per floor, so I should multiply {a:g} by {b:g}."
        call = {"name": "multiply", "args": {"a": a, "b": b}, "id": "call-plan"}
        return carry(thought_in, thought, tool_calls=[call])

    def rerun(messages: Sequence[BaseMessage]) -> AIMessage:
        if action == "question":
            a, b = _plan(_question(messages))
            return AIMessage(content="", tool_calls=[{"name": "multiply", "args": {"a": a, "b": b}, "id": "call-re"}])
        thought = carried(thought_in, cast(AIMessage, messages[-1]))
        plan = _CALL_PLAN.search(thought)
        if plan is None or _NEGATION.search(thought[: plan.start()]) or re.search(r"\bfalse\b", thought, re.I):
            return AIMessage(content=" I will answer without a tool.")
        name, a, b = plan.group(1).lower(), float(plan.group(2)), float(plan.group(3))
        return AIMessage(content="", tool_calls=[{"name": name, "args": {"a": a, "b": b}, "id": "call-re"}])

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
            return rerun(messages)
        if _first_thought(messages) is None:
            return opening(messages)
        output = next((m.text for m in reversed(messages) if m.type == "tool"), "")
        if answer == "question":
            a, b = _plan(_question(messages))
            output = f"{a * b:g}"
        note = "" if thought_in == "text" else f"The answer is {output}."
        return carry(thought_in, note, f"The hotel has {output} rooms in all.")

    script.__name__ = f"planning_{action}_{answer}" + ("" if thought_in == "text" else f"_{thought_in}")
    return ScriptedChatModel(script=script)


def reasoning_content_model(**options: Any) -> ScriptedChatModel:
    """:func:`planning_tool_model` as a reasoning model behind DeepSeek's, Ollama's or a vLLM reasoning parser's API:
    every thought in ``additional_kwargs["reasoning_content"]``, read back only from there."""
    return planning_tool_model(thought_in="reasoning_content", **options)


def think_tag_model(**options: Any) -> ScriptedChatModel:
    """:func:`planning_tool_model` as Qwen3 or DeepSeek-R1 behind a plain OpenAI-compatible server: every thought in a
    ``<think>...</think>`` block before the text, read back only from inside the tags."""
    return planning_tool_model(thought_in="think", **options)


def build_hand_graph(model: BaseChatModel, tools: Sequence[BaseTool], **compile_kwargs: Any) -> Any:
    """A hand-built ReAct graph (``StateGraph`` + ``ToolNode``) with nodes ``agent`` and ``tools``.

    The node names differ from ``create_agent``'s on purpose: the recorder and replayer must not
    depend on one naming scheme. Keyword arguments go to ``compile`` (e.g. ``checkpointer``).
    """
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(list(tools))

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    from langchain_core.runnables import RunnableLambda

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder.compile(**compile_kwargs)
