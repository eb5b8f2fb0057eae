"""The demo's tool-calling agent: built on ``create_agent``, recorded by the middleware, capped in tool calls.

A scripted model (the same one a user can run) stands in for Qwen here: what is checked is the wiring; the real
model's calls are checked in ``tests/local/test_qwen_tools.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.demo.tool_agent import TOOL_AGENT_SYSTEM_PROMPT, build_tool_agent
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.store import InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel


def calls_the_calculator_forever(messages: Sequence[BaseMessage]) -> AIMessage:
    assert isinstance(messages[0], SystemMessage) and messages[0].text == TOOL_AGENT_SYSTEM_PROMPT
    n = sum(isinstance(m, ToolMessage) for m in messages)
    call = {"name": "calculator", "args": {"expression": "12 * 9"}, "id": f"call_{n}"}
    return AIMessage("I multiply the floors by the rooms per floor to count the rooms.", tool_calls=[call])


def test_the_agent_is_recorded_and_ends_at_its_tool_call_limit() -> None:
    store = InMemoryTraceStore()
    agent = build_tool_agent(
        ScriptedChatModel(script=calls_the_calculator_forever), store, checkpointer=InMemorySaver(), tool_call_limit=2
    )
    state = agent.invoke({"messages": [("user", "How many rooms?")]}, {"configurable": {"thread_id": "t1"}})
    results = [m.text for m in state["messages"] if isinstance(m, ToolMessage) and m.status == "success"]
    assert results == ["108", "108"]
    assert len(store.list_traces(thread_id="t1")) == 1


def test_a_tool_call_limit_below_one_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="tool_call_limit"):
        build_tool_agent(
            ScriptedChatModel(script=calls_the_calculator_forever),
            InMemoryTraceStore(),
            checkpointer=InMemorySaver(),
            tool_call_limit=0,
        )


_BOUND: list[list[str]] = []


class _ToolListRecorder(ScriptedChatModel):
    """Records the tools offered to each model call (``bind_tools`` runs once per call in ``create_agent``)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        _BOUND.append([getattr(t, "name", None) or t["function"]["name"] for t in tools])
        return self


def plans_then_answers(messages: Sequence[BaseMessage]) -> AIMessage:
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(f"The answer is {messages[-1].text}.")
    call = {"name": "calculator", "args": {"expression": "12 * 9"}, "id": "call_0"}
    return AIMessage("The hotel has 12 floors of 9 rooms, so I should calculate 12 * 9.", tool_calls=[call])


def test_after_a_tool_result_the_model_answers_with_no_tools_offered() -> None:
    _BOUND.clear()
    model = _ToolListRecorder(script=plans_then_answers)
    agent = build_tool_agent(model, InMemoryTraceStore(), checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [("user", "How many rooms?")]}, {"configurable": {"thread_id": "t1"}})
    assert state["messages"][-1].text == "The answer is 108."
    assert _BOUND[0] == ["calculator", "lookup"]
    assert all(not tools for tools in _BOUND[1:])  # the answering call: no tools (or not bound at all)
    assert len(_BOUND) in (1, 2)
