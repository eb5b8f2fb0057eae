"""Reading your own writes: after ``graph.invoke`` returns, a read of the store in the same process sees the
run, with no flush, while the trace is still built and stored off the agent's thread."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import (
    AriadneCallbackHandler,
    AriadneMiddleware,
    InMemoryTraceStore,
    SQLiteTraceStore,
    Trace,
    flush_traces,
    record,
)
from ariadne_lc.testing import calculator, faithful_arithmetic_model

QUESTION = {"messages": [("user", "How many apples are in 6 boxes of 7?")]}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A store whose ``put`` notes the thread it ran on."""
    if request.param == "memory":
        made: Any = InMemoryTraceStore()
    elif request.param == "sqlite":
        made = SQLiteTraceStore(tmp_path / "traces.db")
    else:
        from ariadne_lc.store import PostgresTraceStore

        made = PostgresTraceStore(request.getfixturevalue("postgres_dsn"))
    put, made.put_threads = made.put, []

    def noting(trace: Trace) -> None:
        made.put_threads.append(threading.get_ident())
        put(trace)

    made.put = noting
    yield made
    if hasattr(made, "close"):
        made.close()


def _agent(**kwargs: Any) -> Any:
    return create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver(), **kwargs)


def _config(thread: str, *callbacks: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "callbacks": list(callbacks)}


def test_each_way_of_recording_is_read_right_after_its_run(store: Any) -> None:
    agent = _agent()
    record(agent, store).invoke(QUESTION, _config("r-1"))
    assert [t.thread_id for t in store.list_traces()] == ["r-1"]
    agent.invoke(QUESTION, _config("r-2", AriadneCallbackHandler(store=store)))
    assert store.list_traces()[-1].thread_id == "r-2"
    _agent(middleware=[AriadneMiddleware(store)]).invoke(QUESTION, _config("r-3"))
    assert [t.thread_id for t in store.list_traces()] == ["r-1", "r-2", "r-3"]
    assert store.get(store.list_traces()[-1].trace_id).final_answer is not None
    assert threading.get_ident() not in store.put_threads and len(store.put_threads) == 3


def test_a_handler_dropped_when_its_request_returns_still_stores_its_trace() -> None:
    store = InMemoryTraceStore()
    agent = _agent()
    for i in range(5):  # the README's per-call pattern: nothing keeps the handler once invoke returns
        agent.invoke(QUESTION, _config(f"p-{i}", AriadneCallbackHandler(store=store)))
        gc.collect()
    assert sorted(t.thread_id or "" for t in store.list_traces()) == [f"p-{i}" for i in range(5)]


def test_a_read_waits_for_a_build_in_progress_and_a_read_on_the_builder_thread_does_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryTraceStore()
    gate, seen_by_hook = threading.Event(), []

    def on_trace(trace: Trace) -> None:
        seen_by_hook.append(len(store.list_traces()))  # the builder's own read: never waits for itself
        gate.wait(60)

    agent = _agent()
    agent.invoke(QUESTION, _config("w", AriadneCallbackHandler(store=store, on_trace=on_trace)))
    found: list[int] = []
    reader = threading.Thread(target=lambda: found.append(len(store.list_traces())))
    with caplog.at_level(logging.WARNING, logger="ariadne_lc"):
        reader.start()
        reader.join(0.5)
        assert reader.is_alive()  # the trace is stored but its build (the hook) is not done: the read waits
        gate.set()
        reader.join(30)
    assert found == [1] and seen_by_hook == [1]
    assert not [r for r in caplog.records if "still being built" in r.message]


def test_flush_traces_waits_for_every_recorder_of_a_store() -> None:
    store, other = InMemoryTraceStore(), InMemoryTraceStore()
    agent = _agent()
    agent.invoke(QUESTION, _config("f-1", AriadneCallbackHandler(store=store)))
    agent.invoke(QUESTION, _config("f-2", AriadneCallbackHandler(store=other)))
    assert flush_traces(store, timeout=30) and flush_traces(timeout=30)
    assert len(store._table.values()) == 1 and len(other._table.values()) == 1  # stored, not read-waited


def test_two_sqlite_store_objects_on_one_file_share_their_pending_builds(tmp_path: Path) -> None:
    writer, reader = SQLiteTraceStore(tmp_path / "t.db"), SQLiteTraceStore(tmp_path / "t.db")
    record(_agent(), writer).invoke(QUESTION, _config("s-1"))
    assert [t.thread_id for t in reader.list_traces()] == ["s-1"]


def test_a_script_that_records_and_exits_at_once_loses_nothing(tmp_path: Path) -> None:
    """The builder is a daemon thread: the interpreter's exit waits for the traces it still holds."""
    import os
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import sys\n"
        "from langchain.agents import create_agent\n"
        "from langgraph.checkpoint.memory import InMemorySaver\n"
        "from ariadne_lc import SQLiteTraceStore, record\n"
        "from ariadne_lc.testing import calculator, faithful_arithmetic_model\n"
        "graph = record(create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver()),"
        " SQLiteTraceStore(sys.argv[1]))\n"
        "for i in range(3):\n"
        "    graph.invoke({'messages': [('user', 'How many apples are in 6 boxes of 7?')]},"
        " {'configurable': {'thread_id': f'x-{i}'}})\n",
        encoding="utf-8",
    )
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH")) if p)}
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "t.db")], env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert [t.thread_id for t in SQLiteTraceStore(tmp_path / "t.db").list_traces()] == ["x-0", "x-1", "x-2"]


def test_the_exit_flush_covers_stores_known_by_identity(tmp_path: Path) -> None:
    """An in-memory store (or a Postgres store on a pool of yours) is keyed by identity: its pending builds
    must survive until the exit flush, so that an ``on_trace`` export still runs for a script's last run."""
    import os
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import sys\n"
        "from langchain.agents import create_agent\n"
        "from langgraph.checkpoint.memory import InMemorySaver\n"
        "from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore\n"
        "from ariadne_lc.testing import calculator, faithful_arithmetic_model\n"
        "out = open(sys.argv[1], 'w')\n"
        "def export(trace):\n"
        "    out.write(trace.final_answer + '\\n')\n"
        "    out.flush()\n"
        "handler = AriadneCallbackHandler(store=InMemoryTraceStore(), on_trace=export)\n"
        "agent = create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())\n"
        "agent.invoke({'messages': [('user', 'How many apples are in 6 boxes of 7?')]},"
        " {'configurable': {'thread_id': 'x'}, 'callbacks': [handler]})\n",
        encoding="utf-8",
    )
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH")) if p)}
    exported = tmp_path / "exported.txt"
    run = subprocess.run([sys.executable, str(script), str(exported)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert exported.read_text(encoding="utf-8") == "Following my plan to multiply (6 * 7), the total is 42.\n"
