"""Re-deriving the substituted step's own tool calls (``Replayer(tool_calls="rederive")``).

The agent here is a ReAct agent whose thought decides its tool call and whose answer reads only the tool's
output ("..., so I look up France." -> ``capital(country="France")`` -> "Final Answer: Paris"): faithful, but
only through its tool call. Keeping the recorded call keeps the answer; re-deriving it moves the answer, and
the re-derived call is answered by the tool policy.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.errors import ConfigurationError, ToolCallDerivationError
from ariadne_lc.replay import (
    CONTINUATION_INSTRUCTION,
    UNAVAILABLE_TOOL_MESSAGE,
    ContinuationDeriver,
    FunctionDeriver,
    Replayer,
    StepContext,
)
from ariadne_lc.replay._derive import with_tool_calls
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import ToolCall
from tests.helpers import build_agent, record

QUESTION = "What is the capital of France?"
THOUGHT = "The question names France, so I look up France."
SPAIN = "The question names France, but I look up Spain."
_LOOK_UP = re.compile(r"look up (\w+)")
CAPITALS = {"France": "Paris", "Spain": "Madrid"}
live_calls: list[str] = []


@tool
def capital(country: str) -> str:
    """The capital of a country."""
    live_calls.append(country)
    return CAPITALS.get(country, "unknown")


def _calls(thought: str) -> list[dict[str, Any]]:
    found = _LOOK_UP.search(thought)
    return [] if found is None else [{"name": "capital", "args": {"country": found.group(1)}, "id": "call-0"}]


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):  # the answer reads the tool's output, never the thought
        return AIMessage(f"Final Answer: {last.text}")
    if isinstance(last, HumanMessage) and last.text == CONTINUATION_INSTRUCTION:  # asked to continue a thought
        return AIMessage("", tool_calls=_calls(messages[-2].text))
    return AIMessage(THOUGHT, tool_calls=_calls(THOUGHT))


def lookup_model() -> ScriptedChatModel:
    return ScriptedChatModel(script=_script)


def _history(graph: Any, thread: str) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (s.config["configurable"]["checkpoint_id"], s.next)
        for s in graph.get_state_history({"configurable": {"thread_id": thread}})
    ]


@pytest.fixture(autouse=True)
def _no_live_calls_yet() -> None:
    live_calls.clear()


def test_recorded_mode_keeps_the_steps_call_so_the_answer_cannot_move(builder: str, saver: Any) -> None:
    graph = build_agent(lookup_model(), builder, saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    assert trace.final_answer == "Final Answer: Paris"
    result = Replayer(graph, safe_tools=["capital"]).replay(trace, 0, SPAIN)
    assert result.answer == "Final Answer: Paris"  # the recorded call, its recorded output
    assert result.replay_mode == "recorded" and result.tool_call_deriver is None
    assert result.steps[0].tool_calls[0].args == {"country": "France"} and result.tools_recorded == 1
    assert live_calls == ["France"]  # only the recording ran the tool


def test_rederive_runs_a_safe_tool_live_and_the_answer_follows(builder: str, saver: Any) -> None:
    model = lookup_model()
    graph = build_agent(model, builder, saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    before = _history(graph, "t-1")
    replayer = Replayer(
        graph, safe_tools=["capital"], tool_calls="rederive", tool_call_deriver=ContinuationDeriver(model)
    )
    result = replayer.replay(trace, 0, SPAIN)
    assert result.answer == "Final Answer: Madrid"
    assert result.replay_mode == "rederive" and result.tool_call_deriver == "continuation:ScriptedChatModel"
    (call,) = result.steps[0].tool_calls
    assert call.name == "capital" and call.args == {"country": "Spain"} and call.output == "Madrid"
    assert call.id is not None and call.id.startswith("ariadne-rederived-")
    assert result.steps[0].message_id == trace.steps[0].message_id  # the same message, its calls replaced
    assert (result.tools_live, result.tools_recorded, result.tools_unavailable) == (1, 0, ())
    assert live_calls == ["France", "Spain"]
    assert result.model_calls == 2  # the continuation call and the answer, both counted as the replay's
    assert _history(graph, "t-1") == before  # the production thread is unchanged


def test_rederive_refuses_an_unsafe_tool(saver: Any) -> None:
    model = lookup_model()
    graph = build_agent(model, "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    result = Replayer(graph, tool_calls="rederive", tool_call_deriver=model).replay(trace, 0, SPAIN)
    refusal = UNAVAILABLE_TOOL_MESSAGE.format(name="capital")
    assert result.answer == f"Final Answer: {refusal}"
    assert result.tools_unavailable == ("capital",) and result.tools_live == 0
    assert result.steps[0].tool_calls[0].args == {"country": "Spain"}
    assert live_calls == ["France"]  # never run during the audit


def test_rederive_serves_an_identical_call_its_recorded_output(saver: Any) -> None:
    model = lookup_model()
    graph = build_agent(model, "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    replayer = Replayer(graph, tool_calls="rederive", tool_call_deriver=model)
    result = replayer.replay(trace, 0, "The capital asked for is that of France, so I look up France.")
    assert result.answer == "Final Answer: Paris"
    assert (result.tools_recorded, result.tools_live, result.tools_unavailable) == (1, 0, ())
    assert live_calls == ["France"]


def test_a_function_deriver_and_a_thought_that_leads_to_no_call(saver: Any) -> None:
    model = lookup_model()
    graph = build_agent(model, "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    seen: list[StepContext] = []

    def derive(thought: str, context: StepContext) -> list[dict[str, Any]]:
        seen.append(context)
        return [{k: v for k, v in c.items() if k != "id"} for c in _calls(thought)]

    replayer = Replayer(graph, safe_tools=["capital"], tool_calls="rederive", tool_call_deriver=derive)
    assert replayer.replay(trace, 0, SPAIN).answer == "Final Answer: Madrid"
    context = seen[0]
    assert context.query == QUESTION and context.step.index == 0 and set(context.tools) == {"capital"}
    assert [m.text for m in context.messages] == [QUESTION]  # the history before the step
    assert replayer.tool_call_deriver is not None and replayer.tool_call_deriver.name == "function:derive"
    # no call derived: the step is written without calls and the graph's own edge ends the run
    result = replayer.replay(trace, 0, "The question names France, and I know it.")
    assert result.steps[0].tool_calls == () and result.answer == "The question names France, and I know it."
    assert result.tools_live == result.tools_recorded == 0


def test_a_deriver_may_return_recorded_tool_call_records(saver: Any) -> None:
    graph = build_agent(lookup_model(), "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    deriver = FunctionDeriver(lambda thought, ctx: [ToolCall(name="capital", args={"country": "Spain"})], name="x")
    result = Replayer(graph, safe_tools=["capital"], tool_calls="rederive", tool_call_deriver=deriver).replay(
        trace, 0, SPAIN
    )
    assert result.answer == "Final Answer: Madrid" and result.tool_call_deriver == "x"


def test_async_replays_rederive_too() -> None:
    model = lookup_model()
    graph = build_agent(model, "hand", InMemorySaver(), tools=[capital])  # SqliteSaver has no async methods
    trace = record(graph, question=QUESTION)
    replayer = Replayer(graph, safe_tools=["capital"], tool_calls="rederive", tool_call_deriver=model)
    result = asyncio.run(replayer.areplay(trace, 0, SPAIN))
    assert result.answer == "Final Answer: Madrid" and result.replay_mode == "rederive"


def test_early_answering_drops_the_calls_whatever_the_mode(saver: Any) -> None:
    model = lookup_model()
    graph = build_agent(model, "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    result = Replayer(graph, tool_calls="rederive", tool_call_deriver=model).replay_early_answer(trace, 0)
    assert result.steps[0].tool_calls == () and result.replay_mode == "recorded"


@pytest.mark.parametrize(
    "returned",
    [
        "capital(Spain)",
        {"name": "capital", "args": {}},
        [{"args": {"country": "Spain"}}],
        [{"name": "capital", "args": "Spain"}],
        [42],
    ],
)
def test_a_malformed_derivation_is_a_named_error(saver: Any, returned: Any) -> None:
    graph = build_agent(lookup_model(), "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)
    replayer = Replayer(
        graph, tool_calls="rederive", tool_call_deriver=FunctionDeriver(lambda t, c: returned, name="bad")
    )
    with pytest.raises(ToolCallDerivationError, match="'bad'"):
        replayer.replay(trace, 0, SPAIN)


def test_a_deriver_that_raises_is_a_named_error_with_its_cause(saver: Any) -> None:
    graph = build_agent(lookup_model(), "hand", saver, tools=[capital])
    trace = record(graph, question=QUESTION)

    def broken(thought: str, context: StepContext) -> list[dict[str, Any]]:
        raise TimeoutError("the model did not answer")

    replayer = Replayer(graph, tool_calls="rederive", tool_call_deriver=broken)
    with pytest.raises(ToolCallDerivationError, match="TimeoutError: the model did not answer") as raised:
        replayer.replay(trace, 0, SPAIN)
    assert isinstance(raised.value.__cause__, TimeoutError)


def test_the_mode_and_the_deriver_are_checked_at_once(saver: Any) -> None:
    graph = build_agent(lookup_model(), "hand", saver, tools=[capital])
    with pytest.raises(ConfigurationError, match="needs a tool_call_deriver"):
        Replayer(graph, tool_calls="rederive")
    with pytest.raises(ConfigurationError, match="only used with tool_calls='rederive'"):
        Replayer(graph, tool_call_deriver=lookup_model())
    with pytest.raises(ConfigurationError, match="unknown tool_calls"):
        Replayer(graph, tool_calls="live", tool_call_deriver=lookup_model())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="tool_call_deriver must be"):
        Replayer(graph, tool_calls="rederive", tool_call_deriver=42)  # type: ignore[arg-type]
    assert isinstance(
        Replayer(graph, tool_calls="rederive", tool_call_deriver=lookup_model()).tool_call_deriver, ContinuationDeriver
    )


def test_the_old_calls_leave_the_providers_copies_too() -> None:
    old = {"id": "call-0", "type": "function", "function": {"name": "capital", "arguments": '{"country": "France"}'}}
    message = AIMessage(
        THOUGHT,
        tool_calls=_calls(THOUGHT),
        additional_kwargs={"tool_calls": [old], "function_call": {"name": "capital"}, "keep": 1},
        invalid_tool_calls=[{"name": "capital", "args": "{", "id": "bad", "error": None, "type": "invalid_tool_call"}],
    )
    replaced = with_tool_calls(message, [])
    assert replaced.tool_calls == [] and replaced.invalid_tool_calls == []
    assert replaced.additional_kwargs == {"keep": 1} and replaced.id == message.id and replaced.text == THOUGHT
