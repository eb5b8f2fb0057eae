"""The demo's tool-calling agent: built on ``create_agent``, recorded by the middleware, capped in tool calls.

A scripted model (the same one a user can run) stands in for Qwen here: what is checked is the wiring; the real
model's calls are checked in ``tests/local/test_qwen_tools.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

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
