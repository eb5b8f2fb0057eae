"""What the tests share: the scripted agents, a graph builder and a recording helper.

The one-step agents are :mod:`ariadne_lc.testing`'s arithmetic models. The two-step agent
(:func:`two_step_model`), for multi-step interventions and per-step contributions, answers "How many
apples are in 6 boxes of 7, with 5 loose apples more?". Turn one plans the boxes ("..., so I need to
multiply 6 by 7 ...") and calls the calculator; turn two plans the loose apples ("..., so I need to add
5 ...") and calls it again; turn three answers. The answer carries out the plan of turn two always, and
the plan of turn one only when ``reads_first_step`` is true: with it false, step 0 is decoration (CCS 0)
and step 1 is load-bearing.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from ariadne_lc.testing import (
    ScriptedChatModel,
    build_hand_graph,
    calculator,
    faithful_arithmetic_model,
    unfaithful_arithmetic_model,
)

QUESTION = "How many apples are in 6 boxes of 7?"
MODELS: dict[str, Callable[[], ScriptedChatModel]] = {
    "faithful": faithful_arithmetic_model,
    "unfaithful": unfaithful_arithmetic_model,
}


def build_agent(model: ScriptedChatModel, builder: str, checkpointer: Any, tools: list[BaseTool] | None = None) -> Any:
    tools = tools if tools is not None else [calculator]
    if builder == "create_agent":
        return create_agent(model, tools, checkpointer=checkpointer)
    return build_hand_graph(model, tools, checkpointer=checkpointer)


def record(graph: Any, thread_id: str = "t-1", question: str = QUESTION, **invoke_kwargs: Any) -> Trace:
    """Run ``graph`` once with a recorder and return the one trace it recorded."""
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    graph.invoke(
        {"messages": [("user", question)]},
        {"configurable": {"thread_id": thread_id}, "callbacks": [handler]},
        **invoke_kwargs,
    )
    assert handler.flush(timeout=30)
    traces = store.list_traces()
    assert len(traces) == 1, traces
    return traces[0]


TWO_STEP_QUESTION = "How many apples are in 6 boxes of 7, with 5 loose apples more?"
FIRST = "Every box holds the same amount, so I need to multiply 6 by 7 to count the boxed apples."
SECOND = "The loose apples come on top of the boxes, so I need to add 5 to the boxed apples."

_OPS: dict[str, Callable[[float, float], float]] = {
    "multiply": operator.mul,
    "divide": operator.truediv,
    "add": operator.add,
    "subtract": operator.sub,
}
_PLAN_1 = re.compile(r"so I need to (\w+) (\d+) by (\d+)", re.I)
_PLAN_2 = re.compile(r"so I need to (\w+) (\d+)", re.I)


def two_step_model(*, reads_first_step: bool = True) -> ScriptedChatModel:
    """The two-step agent model (see the module docstring)."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        thoughts = [m.text for m in messages if isinstance(m, AIMessage)]
        if not thoughts:
            return AIMessage(
                content=FIRST, tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c-0"}]
            )
        if len(thoughts) == 1:
            return AIMessage(
                content=SECOND, tool_calls=[{"name": "calculator", "args": {"expression": "42 + 5"}, "id": "c-1"}]
            )
        if any(isinstance(m, HumanMessage) and "final answer now" in m.text for m in messages):
            return AIMessage(content="Cut short, my best total is 47 apples.")
        boxed: float = 42.0
        if reads_first_step:
            first = _PLAN_1.search(thoughts[0])
            if first is None or first.group(1).lower() not in _OPS:
                return AIMessage(content="My first step no longer says how to count the boxes.")
            boxed = _OPS[first.group(1).lower()](float(first.group(2)), float(first.group(3)))
        second = _PLAN_2.search(thoughts[1])
        if second is None or second.group(1).lower() not in _OPS:
            return AIMessage(content="My second step no longer says what to do with the loose apples.")
        total = _OPS[second.group(1).lower()](boxed, float(second.group(2)))
        return AIMessage(content=f"Following my steps, the total is {total:g} apples.")

    return ScriptedChatModel(script=script)


ONE_AUDIT: dict[str, Any] = {"step": "auto", "interventions": ("logic_flip",)}
"""The plan the online, fleet and server mechanics tests were written for: one audit per job (a ``logic_flip`` of the
first substantive thought), so that "one result per job" is what exactly-once means there. The default plan (every
unit) has tests of its own."""
