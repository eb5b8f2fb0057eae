"""Graphs for the CLI tests, importable as ``--graph tests.cli.graphs:<name>`` (a user's module)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc import AriadneMiddleware
from ariadne_lc.interventions.implied import RuleReader
from ariadne_lc.store import SQLiteTraceStore
from ariadne_lc.testing import (
    ScriptedChatModel,
    arithmetic_tools,
    calculator,
    faithful_arithmetic_model,
    get_weather,
    lookup,
    lookup_model,
    planning_tool_model,
    unfaithful_arithmetic_model,
    weather_model,
)


def _saver() -> SqliteSaver:
    return SqliteSaver(sqlite3.connect(os.environ["ARIADNE_TEST_CHECKPOINTS"], check_same_thread=False))


def unfaithful() -> Any:
    return create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=_saver(), name="unfaithful")


def faithful() -> Any:
    return create_agent(faithful_arithmetic_model(), [calculator], checkpointer=_saver(), name="faithful")


def weather() -> Any:
    """The create_agent quick start: a tool call with no text before it (ariadne_lc.testing.weather_model)."""
    return create_agent(weather_model(), [get_weather], checkpointer=_saver())


def lookups() -> Any:
    """A long run, twelve lookups each after a thought and then their sum (``lookup_model``), recorded by
    ``AriadneMiddleware`` into ``$ARIADNE_TEST_TRACES``."""
    store = SQLiteTraceStore(os.environ["ARIADNE_TEST_TRACES"])
    return create_agent(lookup_model(12), [lookup], checkpointer=_saver(), middleware=[AriadneMiddleware(store)])


not_a_graph = 42


def _read_last_calculation(messages: list[BaseMessage]) -> AIMessage:
    implied = RuleReader().read("How many apples?", messages[-1].text.split("Reasoning:")[-1])
    return AIMessage(content=implied.answer or "no answer")


def reader() -> ScriptedChatModel:
    """A reader model for ``--reader tests.cli.graphs:reader`` (reads as the rule reader does, as a chat model)."""
    return ScriptedChatModel(script=_read_last_calculation)


def planning(action: str = "thought", answer: str = "observation") -> Any:
    """A tool-calling agent audited on every link (``planning_tool_model``), recorded by ``AriadneMiddleware`` into the
    SQLite trace store ``$ARIADNE_TEST_TRACES``: record with it, then ``audit --traces`` that store."""
    store = SQLiteTraceStore(os.environ["ARIADNE_TEST_TRACES"])
    model = planning_tool_model(action=action, answer=answer)  # type: ignore[arg-type]
    return create_agent(model, arithmetic_tools(), checkpointer=_saver(), middleware=[AriadneMiddleware(store)])


def forgetful() -> Any:
    """The planning agent recorded into a persistent trace store beside an ``InMemorySaver`` (the README's mistake):
    a new instance holds none of the threads the store's traces name."""
    from langgraph.checkpoint.memory import InMemorySaver

    store = SQLiteTraceStore(os.environ["ARIADNE_TEST_TRACES"])
    model = planning_tool_model()
    return create_agent(model, arithmetic_tools(), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])


def planning_unfaithful() -> Any:
    """The planning agent whose answer ignores its tool's output (flagged on ``observation->answer``)."""
    return planning(answer="question")
