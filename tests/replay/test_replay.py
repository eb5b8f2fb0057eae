from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ariadne_lc import (
    ConfigurationError,
    NoCheckpointerError,
    NoThoughtError,
    NotReplayableError,
    StepNotFoundError,
)
from ariadne_lc.replay import UNAVAILABLE_TOOL_MESSAGE, Replayer
from ariadne_lc.testing import ScriptedChatModel, faithful_arithmetic_model
from tests.helpers import QUESTION, build_agent, record


def _history(graph: Any, thread: str) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (s.config["configurable"]["checkpoint_id"], s.next)
        for s in graph.get_state_history({"configurable": {"thread_id": thread}})
    ]


def test_replay_follows_the_substituted_thought(builder: str, saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    result = Replayer(graph).replay(trace, 0, "Every box holds the same amount, so I need to add 6 by 7 to get it.")
    assert result.answer == "Following my plan to add (6 + 7), the total is 13."
    assert result.model_calls == 1
    assert result.tools_recorded == 1 and result.tools_unavailable == ()
    assert result.steps[0].message_id == trace.steps[0].message_id  # same message, replaced
    assert result.steps[0].tool_calls[0].args == {"expression": "6 * 7"}  # tool calls kept
    assert result.steps[0].tool_calls[0].output == "42"


def test_production_thread_is_untouched(builder: str, saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    before = _history(graph, "t-1")
    head = graph.get_state({"configurable": {"thread_id": "t-1"}})
    result = Replayer(graph).replay(trace, 0, "Nothing holds, so I need to divide 6 by 7 now.")
    assert _history(graph, "t-1") == before
    after = graph.get_state({"configurable": {"thread_id": "t-1"}})
    assert after.values == head.values and after.config == head.config
    assert result.replay_thread_id != "t-1"
    # the replay's thread lives in a saver of its own, not in the production checkpointer
    assert _history(graph, result.replay_thread_id) == []
    # the next real user turn continues from the production head
    graph.invoke(
        {"messages": [("user", "How many apples are in 2 boxes of 3?")]}, {"configurable": {"thread_id": "t-1"}}
    )
    messages = graph.get_state({"configurable": {"thread_id": "t-1"}}).values["messages"]
    assert [m.id for m in messages[:4]] == [m.id for m in head.values["messages"]]
    assert "divide" not in " ".join(m.text for m in messages)


def test_recorded_policy_never_reruns_tools(builder: str) -> None:
    calls: list[str] = []

    @tool
    def calculator(expression: str) -> str:
        """Multiply (counts its calls)."""
        calls.append(expression)
        return "42"

    def script(messages: list[BaseMessage]) -> AIMessage:
        ai = [m for m in messages if isinstance(m, AIMessage)]
        if not ai:
            return AIMessage(
                content="I need to multiply first.",
                tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "1"}],
            )
        if len(ai) == 1 and "add" in ai[0].text:
            return AIMessage(
                content="Now I add.", tool_calls=[{"name": "calculator", "args": {"expression": "6 + 7"}, "id": "2"}]
            )
        return AIMessage(content="The answer is " + messages[-1].text)

    graph = build_agent(ScriptedChatModel(script=script), builder, InMemorySaver(), [calculator])
    trace = record(graph)
    assert calls == ["6 * 7"]
    same = Replayer(graph).replay(trace, 0, "I need to multiply, definitely.")
    assert calls == ["6 * 7"] and same.tools_recorded == 1
    other = Replayer(graph).replay(trace, 0, "I need to add now.")
    assert calls == ["6 * 7"]  # neither the recorded nor the new call ran
    assert other.tools_unavailable == ("calculator",)
    assert other.answer == "The answer is " + UNAVAILABLE_TOOL_MESSAGE.format(name="calculator")
    safe = Replayer(graph, safe_tools=["calculator"]).replay(trace, 0, "I need to add now.")
    assert calls == ["6 * 7", "6 + 7"] and safe.tools_live == 1 and safe.tools_unavailable == ()
    live = Replayer(graph, tool_policy="live").replay(trace, 0, "I need to multiply, definitely.")
    assert calls == ["6 * 7", "6 + 7", "6 * 7"] and live.tools_live == 1


async def test_async_replay_on_async_sqlite(builder: str, tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        graph = build_agent(faithful_arithmetic_model(), builder, saver)
        from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore

        store = InMemoryTraceStore()
        await graph.ainvoke(
            {"messages": [("user", QUESTION)]},
            {
                "configurable": {"thread_id": "t-1"},
                "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)],
            },
        )
        (trace,) = store.list_traces()
        before = [s.config async for s in graph.aget_state_history({"configurable": {"thread_id": "t-1"}})]
        result = await Replayer(graph).areplay(trace, 0, "so I need to subtract 6 by 7.")
        assert result.answer == "Following my plan to subtract (6 - 7), the total is -1."
        after = [s.config async for s in graph.aget_state_history({"configurable": {"thread_id": "t-1"}})]
        assert after == before


def test_named_errors(tmp_path: Path) -> None:
    no_saver = build_agent(faithful_arithmetic_model(), "hand", None)
    with pytest.raises(NoCheckpointerError, match="compiled without a checkpointer"):
        Replayer(no_saver)
    with pytest.raises(ConfigurationError, match="compiled LangGraph graph"):
        Replayer(object())
    with pytest.raises(ConfigurationError, match="tool_policy"):
        Replayer(build_agent(faithful_arithmetic_model(), "hand", InMemorySaver()), tool_policy="sometimes")

    graph = build_agent(faithful_arithmetic_model(), "hand", InMemorySaver())
    trace = record(graph)
    with pytest.raises(StepNotFoundError, match="step 7 does not exist"):
        Replayer(graph).replay(trace, 7, "x")

    exit_graph = build_agent(faithful_arithmetic_model(), "create_agent", sqlite_saver(tmp_path))
    exit_trace = record(exit_graph, durability="exit")
    with pytest.raises(NotReplayableError, match="durability='exit'"):
        Replayer(exit_graph).replay(exit_trace, 0, "so I need to add 6 by 7.")


def test_a_deleted_thread_is_named_as_the_cause(saver: Any) -> None:
    """Zero checkpoints is no durability='exit' thread (which keeps one): the thread is gone, or the saver is
    another one."""
    _deleted_thread_is_named(saver)


def test_a_deleted_thread_is_named_as_the_cause_on_postgres(postgres_dsn: str) -> None:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with psycopg.connect(postgres_dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        _deleted_thread_is_named(saver)


def _deleted_thread_is_named(saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), "create_agent", saver)
    trace = record(graph)
    saver.delete_thread("t-1")
    assert list(graph.get_state_history({"configurable": {"thread_id": "t-1"}})) == []
    with pytest.raises(NotReplayableError, match="has no checkpoints at all: it was deleted") as refused:
        Replayer(graph).replay(trace, 0, "so I need to add 6 by 7.")
    assert "durability" not in str(refused.value)
    other = build_agent(faithful_arithmetic_model(), "create_agent", InMemorySaver())
    with pytest.raises(NotReplayableError, match="not the one the trace was recorded with"):
        Replayer(other).replay(trace, 0, "so I need to add 6 by 7.")


def sqlite_saver(tmp_path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(tmp_path / "exit.db", check_same_thread=False))


def test_step_without_thought() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        if any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(content="The total is 42.")
        return AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "1"}])

    graph = build_agent(ScriptedChatModel(script=script), "create_agent", InMemorySaver())
    trace = record(graph)
    with pytest.raises(NoThoughtError, match="no thought"):
        Replayer(graph).replay(trace, 0, "x")
