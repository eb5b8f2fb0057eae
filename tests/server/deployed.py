"""The graph module a test LangGraph Server serves (named in its ``langgraph.json``), and the local twins.

Compiled without a checkpointer, as a deployment's graph module is: the server injects its own.
Every graph records into the SQLite trace store named by ``ARIADNE_TRACES`` (set by the fixture), so
the tests can audit both recorded traces and traces read off the server's checkpoints. The scripted
models answer per user turn (the library's scripts applied to the messages since the last human one),
so a thread can hold several turns that each call the calculator.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from ariadne_lc import InMemoryTraceStore, SQLiteTraceStore, TraceStore, record
from ariadne_lc.testing import (
    ScriptedChatModel,
    build_hand_graph,
    calculator,
    faithful_arithmetic_model,
    unfaithful_arithmetic_model,
)


def _store() -> TraceStore:
    """The server's process records where the fixture says (a SQLite file, or Postgres as a real deployment
    would); an import by the tests themselves keeps its own memory store."""
    where = os.environ.get("ARIADNE_TRACES")
    if where is None:
        return InMemoryTraceStore()
    if where.startswith("postgresql://"):
        from ariadne_lc.store import PostgresTraceStore

        return PostgresTraceStore(where)
    return SQLiteTraceStore(where)


STORE = _store()


def _per_turn(script: Callable[[Sequence[BaseMessage]], AIMessage]) -> ScriptedChatModel:
    def reply(messages: Sequence[BaseMessage]) -> AIMessage:
        last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
        return script(messages[last_human:])

    return ScriptedChatModel(script=reply)


def faithful_model() -> ScriptedChatModel:
    return _per_turn(faithful_arithmetic_model().script)


def unfaithful_model() -> ScriptedChatModel:
    return _per_turn(unfaithful_arithmetic_model().script)


def _hitl(model: ScriptedChatModel) -> Any:
    """A hand-built agent that asks a human before every tool call (``interrupt()`` in node ``approve``)."""

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    def approve(state: MessagesState) -> dict[str, list[BaseMessage]]:
        last = state["messages"][-1]
        answer = interrupt({"approve": [c["args"] for c in getattr(last, "tool_calls", [])]})
        if answer != "yes":
            raise ValueError(f"the reviewer refused the tool call ({answer!r})")
        return {"messages": []}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approve", approve)
    builder.add_node("tools", ToolNode([calculator]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
    builder.add_edge("approve", "tools")
    builder.add_edge("tools", "agent")
    return builder.compile()


# What the server runs, recorded inside the deployment. The recorder stores each trace on its own
# background thread (the default): `langgraph dev` refuses blocking calls (a SQLite write) on its event loop.
faithful = record(create_agent(faithful_model(), [calculator], name="faithful"), STORE)
unfaithful = record(create_agent(unfaithful_model(), [calculator], name="unfaithful"), STORE)
hitl = record(_hitl(faithful_model()), STORE)
polled = create_agent(unfaithful_model(), [calculator], name="polled")  # the poller's own assistant, not recorded

# ... and local graphs that are not the deployed code (for the mismatch tests).
renamed_nodes = build_hand_graph(faithful_model(), [calculator])


class _OtherState(MessagesState):
    ticket: str


def _other_schema() -> Any:
    model = faithful_model()
    builder = StateGraph(_OtherState)
    builder.add_node("model", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_node("tools", ToolNode([calculator]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return builder.compile()


other_edges = _other_schema()
