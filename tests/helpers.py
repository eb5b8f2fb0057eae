"""Agents and a recording helper shared by the tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents import create_agent
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
