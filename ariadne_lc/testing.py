"""Scripted chat models and reference agents for tests, examples and users' own unit tests.

LangChain's stock fake chat models cannot drive a tool-calling agent: they do not implement
``bind_tools`` and drop ``tool_calls`` when streaming. The models here reply with a function of the
conversation so far, so an intervened thought can really change what happens next (a *faithful*
script) or be ignored (an *unfaithful* script). Like httpx's mock transport, they ship in the library
so that users can test their own audit set-ups without a model server.

Examples:
    >>> from ariadne_lc.testing import faithful_arithmetic_model
    >>> model = faithful_arithmetic_model()
"""

from __future__ import annotations

import itertools
import operator
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from pydantic import ConfigDict, PrivateAttr

from ariadne_lc._arithmetic import evaluate

__all__ = [
    "Reply",
    "ScriptedChatModel",
    "build_hand_graph",
    "calculator",
    "faithful_arithmetic_model",
    "unfaithful_arithmetic_model",
]

Reply = Callable[[Sequence[BaseMessage]], AIMessage]
"""A script: the whole conversation in, the model's next message out."""


class ScriptedChatModel(BaseChatModel):
    """A chat model whose reply is computed by a Python function of the conversation.

    ``bind_tools`` returns the model itself (the script decides which tools to call), so it can drive
    ``langchain.agents.create_agent`` as well as hand-built graphs. Each reply gets a fresh message id,
    as real providers give, and the number of calls is counted (thread-safe) for tests that check
    how often a replay asked the model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Reply
    """The function that produces the next message."""

    _calls: itertools.count[int] = PrivateAttr(default_factory=itertools.count)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _n: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "ariadne-scripted"

    @property
    def calls(self) -> int:
        """How many times the model has been asked for a reply."""
        return self._n

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._n += 1
            n = next(self._calls)
        reply = self.script(messages)
        if reply.id is None:
            reply = reply.model_copy(update={"id": f"scripted-{id(self):x}-{n}"})
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self


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


def faithful_arithmetic_model() -> ScriptedChatModel:
    """An agent model whose final answer is computed from what its own first thought says.

    Turn one states a premise and a plan ("..., so I need to multiply 6 by 7 ...") and calls the
    calculator. Turn two reads the first thought back from the conversation (possibly an intervened
    one) and carries out the plan written there, with the operation and numbers written there. When
    the plan no longer follows from the premise (negated, reversed, missing) it says it cannot give a
    total. Contradict the thought and the answer moves: a faithful agent.
    """

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        thought = _first_thought(messages)
        if thought is None:
            return _opening(messages)
        plan = _PLAN.search(thought)
        if plan is None or _NEGATION.search(thought[: plan.end()]):
            return AIMessage(content="My reasoning no longer supports a calculation, so I cannot give a total.")
        word, a, b = plan.group(1).lower(), float(plan.group(2)), float(plan.group(3))
        for name, symbol, fn in _OPERATIONS:
            if word == name:
                return AIMessage(
                    content=f"Following my plan to {word} ({a:g} {symbol} {b:g}), the total is {fn(a, b):g}."
                )
        return AIMessage(content=f"My plan says to {word} the numbers, which gives no total I can compute.")

    return ScriptedChatModel(script=script)


def unfaithful_arithmetic_model() -> ScriptedChatModel:
    """An agent model that writes the same plan but answers from the question alone.

    Its final answer never reads the thought: whatever the reasoning says, it multiplies. Contradict
    the plan and the answer stays: reasoning theatre, a violation.
    """

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if _first_thought(messages) is None:
            return _opening(messages)
        a, b = _plan(_question(messages))
        return AIMessage(content=f"Whatever the steps say, the total is {a * b:g} in all.")

    return ScriptedChatModel(script=script)


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
