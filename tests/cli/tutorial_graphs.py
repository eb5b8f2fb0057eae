"""Tutorial-shaped agents for the CLI tests, importable as ``--graph tests.cli.tutorial_graphs:<name>``."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore, SQLiteTraceStore
from tests.tutorial_agents import LOOKUP, WEATHER, Shape, shape_model


def _agent(shape: Shape, *, thought: bool) -> Any:
    checkpoints = SqliteSaver(sqlite3.connect(os.environ["ARIADNE_TEST_CHECKPOINTS"], check_same_thread=False))
    traces = os.environ.get("ARIADNE_TEST_TRACES")
    store = SQLiteTraceStore(traces) if traces else InMemoryTraceStore()
    model = shape_model(shape, thought=thought)
    return create_agent(model, list(shape.tools), checkpointer=checkpoints, middleware=[AriadneMiddleware(store)])


def quickstart() -> Any:
    """The ``create_agent`` quick start: no text before the call."""
    return _agent(WEATHER, thought=False)


def lookup() -> Any:
    """A lookup by name whose thought plans the call."""
    return _agent(LOOKUP, thought=True)
