"""Qwen2.5-Coder-0.5B-Instruct behind the local server, driven by ``ChatOpenAI`` and ``create_agent`` unchanged: real
tool calls, a trailing assistant message continued as prefill, and the same reply to the same request.

One server for the module (start-up is seconds, each call several seconds on 2 shared cores); short ``max_tokens``.
What the model picked is printed (``pytest -s``), not asserted, where the brief is only that the call is well formed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from ariadne_lc.local import LocalModelServer

QUESTION = "How many rooms does a hotel with 12 floors of 9 rooms have?"
THOUGHT = "The hotel has 12 floors and 9 rooms per floor, so I should add 12 and 9."


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def qwen() -> Iterator[LocalModelServer]:
    with LocalModelServer.for_model("qwen2.5-coder-0.5b") as server:
        yield server


def well_formed(reply: AIMessage) -> None:
    assert reply.response_metadata["finish_reason"] == "tool_calls", reply
    assert reply.tool_calls and not reply.invalid_tool_calls, reply
    for call in reply.tool_calls:
        assert call["name"] in {"add", "multiply"} and call["id"] and call["id"].startswith("call_"), call
        assert set(call["args"]) == {"a", "b"} and all(isinstance(v, int) for v in call["args"].values()), call


def test_create_agent_answers_with_a_real_tool_call(qwen: LocalModelServer) -> None:
    # The 0.5B model calls multiply(12, 9) but then calls it again after every result instead of answering (seen
    # with five renderings of the result and four system prompts), so the run is ended after the first call.
    agent = create_agent(
        qwen.chat_model(max_tokens=48),
        [multiply],
        middleware=[ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")],
    )
    began = time.monotonic()
    state = agent.invoke({"messages": [HumanMessage(QUESTION)]})
    print(f"\ncreate_agent run: {time.monotonic() - began:.1f} s, {len(state['messages'])} messages")
    for message in state["messages"]:
        print(f"  {type(message).__name__}: {message.text[:80]!r} {getattr(message, 'tool_calls', '')}")
    calls = {c["id"]: c for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls}
    results = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.status == "success"]
    assert results, state["messages"]
    first = results[0]
    assert first.name == "multiply" and calls[first.tool_call_id]["args"] == {"a": 12, "b": 9}
    assert first.text == "108"


def test_a_trailing_assistant_thought_is_continued_with_a_tool_call(qwen: LocalModelServer) -> None:
    model = qwen.chat_model(max_tokens=40).bind_tools([add, multiply])
    reply = model.invoke([SystemMessage("You are a helpful assistant."), HumanMessage(QUESTION), AIMessage(THOUGHT)])
    assert isinstance(reply, AIMessage)
    print(f"\nafter the thought {THOUGHT!r} the model called: {[(c['name'], c['args']) for c in reply.tool_calls]}")
    assert reply.text.startswith(THOUGHT)
    well_formed(reply)


def test_the_same_request_gets_the_same_reply_after_another(qwen: LocalModelServer) -> None:
    model = qwen.chat_model(max_tokens=32).bind_tools([add, multiply])
    request = [HumanMessage(QUESTION), AIMessage(THOUGHT)]
    first = model.invoke(request)
    model.invoke([HumanMessage("What is 7 times 6?")])
    again = model.invoke(request)
    assert isinstance(first, AIMessage) and isinstance(again, AIMessage)
    assert (again.text, again.tool_calls) == (first.text, first.tool_calls)
    well_formed(first)
    assert json.dumps(first.tool_calls, sort_keys=True) == json.dumps(again.tool_calls, sort_keys=True)


def test_a_streamed_reply_carries_the_same_tool_calls(qwen: LocalModelServer) -> None:
    model = qwen.chat_model(max_tokens=32).bind_tools([add, multiply])
    request = [HumanMessage(QUESTION), AIMessage(THOUGHT)]
    whole = model.invoke(request)
    streamed = None
    for chunk in model.stream(request):
        streamed = chunk if streamed is None else streamed + chunk
    assert isinstance(whole, AIMessage) and streamed is not None
    assert streamed.text == whole.text
    assert [(c["name"], c["args"], c["id"]) for c in streamed.tool_calls] == [
        (c["name"], c["args"], c["id"]) for c in whole.tool_calls
    ]
