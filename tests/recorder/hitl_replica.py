"""One replica of a web server running a human-in-the-loop agent (run it as a module from the repo root).

``python -m tests.recorder.hitl_replica ask|approve STORE CHECKPOINTS THREAD``: build the agent on the
SQLite checkpointer file CHECKPOINTS, open the trace store STORE (a SQLite path or a PostgreSQL URI), and
serve one request the way the README says, with a new handler for the request: ``ask`` puts the question
(the turn pauses for approval of its calculator call), ``approve`` resumes the thread with the approval.
Then the process exits at once, without flushing anything: the recorder's exit flush must store the trace.
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from ariadne_lc import AriadneCallbackHandler, SQLiteTraceStore, TraceStore
from ariadne_lc.testing import calculator, faithful_arithmetic_model

QUESTION = "How many apples are in 6 boxes of 7?"
APPROVE = {"decisions": [{"type": "approve"}]}


def build_agent(checkpoints: str) -> Any:
    """The agent every replica (and the auditor) builds: the same code, its own checkpointer connection."""
    saver = SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False))
    return create_agent(
        faithful_arithmetic_model(),
        [calculator],
        checkpointer=saver,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )


def open_store(where: str) -> TraceStore:
    if where.startswith("postgresql://"):
        from ariadne_lc.store import PostgresTraceStore

        return PostgresTraceStore(where)
    return SQLiteTraceStore(where)


def main(action: str, store_at: str, checkpoints: str, thread: str) -> None:
    agent, store = build_agent(checkpoints), open_store(store_at)
    payload: Any = {"messages": [("user", QUESTION)]} if action == "ask" else Command(resume=APPROVE)
    config = {"configurable": {"thread_id": thread}, "callbacks": [AriadneCallbackHandler(store=store, graph=agent)]}
    agent.invoke(payload, config)


if __name__ == "__main__":
    main(*sys.argv[1:5])
