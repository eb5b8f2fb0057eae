"""A real LangGraph Server (``langgraph dev``, in-memory runtime) on loopback, for the whole session.

The fixture writes a ``langgraph.json`` into a fresh folder naming the graphs of
``tests/server/deployed.py`` (copied there, like a user's project), starts ``langgraph dev
--no-browser --no-reload`` on a free port with everything that would reach the internet switched
off (LangSmith tracing, CLI analytics), waits for ``GET /ok``, and stops the process it started at
the end. A server that does not come up fails the tests with one line and the tail of its log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ariadne_lc import Trace, TraceStore

REPO = Path(__file__).resolve().parents[2]
GRAPHS = ("faithful", "unfaithful", "hitl", "polled")
OFFLINE_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGSMITH_API_KEY": "",
    "LANGCHAIN_API_KEY": "",
    "LANGGRAPH_API_KEY": "",
}
_STARTUP_LIMIT = 180.0  # a guard against a hung start, not a measurement


@dataclass(frozen=True)
class Server:
    url: str
    folder: Path
    traces: Path
    """The SQLite trace store the deployment records into."""


RECORDING_LIMIT = 60.0
"""Seconds a test waits for the deployment's recorder to store a finished turn: a guard against a recorder
that never does, not a measurement."""


def finished(trace: Trace) -> bool:
    """Whether ``trace`` is a whole turn: not paused, every interrupt answered, an answer (or an error)."""
    done = trace.final_answer is not None or trace.error is not None
    return done and not trace.interrupted and all(i.answered for i in trace.interrupts)


def recorded_turns(store: TraceStore, thread: str, turns: int = 1) -> list[Trace]:
    """The ``turns`` turns the deployment recorded for ``thread``, oldest first, once each is finished.

    The recorder stores on its background thread, and a human-in-the-loop turn twice: its paused half
    first, completed in place once the resumed half is joined. A trace that merely exists can be that
    paused half, so this waits until the turns are finished, up to :data:`RECORDING_LIMIT`.
    """
    deadline = time.monotonic() + RECORDING_LIMIT
    while True:
        traces = sorted(store.list_traces(thread_id=thread), key=lambda t: t.started_at)
        if len(traces) >= turns and all(finished(t) for t in traces):
            return traces
        if time.monotonic() >= deadline:
            seen = [(t.trace_id, t.interrupted, [(i.node, i.answered) for i in t.interrupts]) for t in traces]
            raise AssertionError(f"thread {thread}: {turns} finished turns expected, the store holds {seen}")
        time.sleep(0.05)  # the store is another process's file: poll it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_langgraph_dev(folder: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    langgraph = Path(sys.executable).with_name("langgraph")
    with (folder / "server.log").open("wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_until_up(process: subprocess.Popen[bytes], url: str, folder: Path) -> None:
    deadline = time.monotonic() + _STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    tail = (folder / "server.log").read_text(errors="replace")[-1500:]
    stop(process)
    pytest.fail(f"langgraph dev did not come up at {url} (exit {process.poll()}); log tail:\n{tail}", pytrace=False)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def server_env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, **OFFLINE_ENV, **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return env


API_KEY = "ariadne-test-key"
_AUTH = f"""
from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict) -> str:
    if headers.get(b"x-api-key") != b"{API_KEY}":
        raise Auth.exceptions.HTTPException(status_code=401, detail="a valid x-api-key header is required")
    return "auditor"
"""


def _serve(folder: Path, *, auth: bool, traces_at: str | None = None) -> Iterator[Server]:
    shutil.copy(Path(__file__).with_name("deployed.py"), folder / "deployed.py")
    config: dict[str, object] = {"dependencies": ["."], "graphs": {name: f"./deployed.py:{name}" for name in GRAPHS}}
    if auth:
        (folder / "auth.py").write_text(_AUTH)
        config["auth"] = {"path": "./auth.py:auth"}
    (folder / "langgraph.json").write_text(json.dumps(config))
    traces = folder / "traces.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_langgraph_dev(folder, port, server_env({"ARIADNE_TRACES": traces_at or str(traces)}))
    wait_until_up(process, url, folder)
    try:
        yield Server(url=url, folder=folder, traces=traces)
    finally:
        stop(process)


@pytest.fixture(scope="session")
def langgraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _serve(tmp_path_factory.mktemp("deployment"), auth=False)


@pytest.fixture
def postgres_recording_server(tmp_path: Path, postgres_dsn: str) -> Iterator[Server]:
    """The deployment recording into PostgreSQL (a schema of its own), as a real deployment would."""
    yield from _serve(tmp_path, auth=False, traces_at=postgres_dsn)


@pytest.fixture(scope="session")
def authed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same deployment behind custom auth: every request needs ``x-api-key: API_KEY``."""
    yield from _serve(tmp_path_factory.mktemp("authed"), auth=True)
