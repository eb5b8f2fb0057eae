"""The node that stands for a tool node in a replay: every shape of input LangGraph gives a tool node, answered from
the recording, no tool run but a safe one, refusals reported in the replay's order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from ariadne_lc.errors import ReplayError
from ariadne_lc.replay._tools import Served, serving_node
from ariadne_lc.trace import Step, ToolCall, Trace

RECORDED = Trace(
    trace_id="t",
    query="q",
    steps=(
        Step(
            index=0,
            node="model",
            thought="look",
            tool_calls=(ToolCall(id="c0", name="lookup", args={"key": 1}, output="7"),),
        ),
    ),
)
CALLS = [
    {"name": "lookup", "args": {"key": 1}, "id": "n1", "type": "tool_call"},
    {"name": "send_mail", "args": {"to": "x"}, "id": "n2", "type": "tool_call"},
    {"name": "clock", "args": {}, "id": "n3", "type": "tool_call"},
]
RAN: list[str] = []


@tool
def clock() -> str:
    """The time (safe: no side effect)."""
    RAN.append("clock")
    return "noon"


@tool
def send_mail(to: str) -> str:
    """Sends a mail (a side effect)."""
    RAN.append("send_mail")
    return "sent"


@dataclass
class _State:
    messages: list[BaseMessage] = field(default_factory=list)


def _node(served: Served, early: bool = False) -> Any:
    tools = {"clock": clock, "send_mail": send_mail}
    return serving_node("tools", served, tools, frozenset({"clock"}), early)


def _asking() -> AIMessage:
    return AIMessage(content="", tool_calls=[{k: c[k] for k in ("name", "args", "id")} for c in CALLS], id="a")


@pytest.mark.parametrize(
    "given, bare",
    [
        ({"messages": [HumanMessage("q"), _asking()]}, False),  # the state (tools_condition graphs)
        (CALLS, False),  # create_agent's Send of calls
        (_State([HumanMessage("q"), _asking()]), False),  # a state schema that is an object
        ([HumanMessage("q"), _asking()], True),  # a MessageGraph's list
    ],
)
def test_each_input_shape_is_answered_from_the_recording_and_no_unsafe_tool_runs(given: Any, bare: bool) -> None:
    RAN.clear()
    served = Served(RECORDED)
    out = _node(served).invoke(given)
    messages = out if bare else out["messages"]
    assert [m.tool_call_id for m in messages] == ["n1", "n2", "n3"]
    assert [m.content for m in messages[:1]] == ["7"] and "unavailable" in str(messages[1].content)
    assert messages[2].content == "noon" and RAN == ["clock"]  # the safe tool ran, the mail was never sent
    assert (served.recorded, served.live) == (1, 1)
    assert served.unavailable_in([_asking()]) == ("send_mail",)


def test_one_call_with_its_context_and_early_answering_refuses_every_call() -> None:
    served = Served(RECORDED)
    given = {"__type": "tool_call_with_context", "tool_call": CALLS[0], "state": {}}
    assert _node(served).invoke(given)["messages"][0].content == "7"
    refused = _node(Served(RECORDED), early=True).invoke(CALLS)["messages"]
    assert all(isinstance(m, ToolMessage) and m.status == "error" for m in refused)


def test_refusals_are_reported_in_the_order_the_messages_call_them() -> None:
    served = Served(RECORDED)
    node = _node(served)
    node.invoke([CALLS[2]])  # parallel tasks may answer in any order
    node.invoke([CALLS[1]])
    node.invoke([{**CALLS[1], "id": "n0", "name": "wipe_disk"}])
    asked = AIMessage(content="", tool_calls=[{"name": "wipe_disk", "args": {}, "id": "n0"}, *CALLS[1:]], id="b")
    assert served.unavailable_in([HumanMessage("q"), asked]) == ("wipe_disk", "send_mail")


def test_a_tool_node_run_without_calls_is_a_replay_error() -> None:
    with pytest.raises(ReplayError, match="asks for no tool"):
        _node(Served(RECORDED)).invoke({"messages": [HumanMessage("q")]})


async def test_the_async_node_answers_alike() -> None:
    RAN.clear()
    out = await _node(Served(RECORDED)).ainvoke(CALLS)
    assert out["messages"][0].content == "7" and RAN == ["clock"]
