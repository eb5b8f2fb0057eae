"""Helpers for the tracing-backend tests: running Phoenix, reading spans back, loopback HTTP stand-ins.

The fixtures built on them are in ``conftest.py``. Phoenix runs as a subprocess
(``python -m phoenix.server.main serve``) on free loopback ports, with its own working directory and
SQLite file, telemetry and every outbound request switched off. The server's own warnings therefore stay
in its log and never meet pytest's ``filterwarnings = error``; only the client import is noisy (see
:func:`import_phoenix_client`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx
from opentelemetry.trace import SpanContext

from ariadne_lc import semconv as sc

if TYPE_CHECKING:
    from phoenix.client import Client as PhoenixClient

PHOENIX_START_TIMEOUT_S = 180.0
"""Cold start (first import, bytecode compilation, migrations) took about 30 s on 2 cores."""
PHOENIX_PROJECT_KEY = "openinference.project.name"
"""Resource attribute that picks the Phoenix project of exported spans."""


# --------------------------------------------------------------------------------------------- Phoenix


@dataclass(frozen=True)
class PhoenixServer:
    """A running Phoenix: where to send spans and where to read them."""

    base_url: str
    """``http://127.0.0.1:<port>``: UI, REST API (``/v1``), GraphQL and OTLP/HTTP (``/v1/traces``)."""
    grpc_endpoint: str
    """``http://127.0.0.1:<port>`` for OTLP/gRPC."""
    log_path: Path
    startup_seconds: float


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"<no log: {exc}>"


def phoenix_environment(working_dir: Path, http_port: int, grpc_port: int) -> dict[str, str]:
    """The server's environment: loopback only, temporary SQLite, no telemetry, no outbound requests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(
        {
            "PHOENIX_WORKING_DIR": str(working_dir),
            "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{working_dir / 'phoenix.db'}",
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(http_port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            # No FullStory / Scarf pixels in the UI, no web fonts, no sandbox binary download.
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
            # Migrations otherwise echo every CREATE TABLE: thousands of log lines.
            "PHOENIX_LOG_MIGRATIONS": "false",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def wait_healthy(
    name: str, process: subprocess.Popen[bytes], health_url: str, log_path: Path, *, deadline: float
) -> None:
    """Poll ``health_url`` until it answers 200; a server that exits or is still not healthy at ``deadline``
    (``time.monotonic()``) is a ``RuntimeError`` with the tail of its log."""
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"{name} exited with code {process.returncode} before it was healthy; log tail:\n{_tail(log_path)}"
            )
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(health_url, timeout=2.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} not healthy in time; log tail:\n{_tail(log_path)}")
        time.sleep(0.25)


@contextlib.contextmanager
def run_phoenix(
    working_dir: Path, timeout_s: float = PHOENIX_START_TIMEOUT_S, while_starting: Callable[[], object] | None = None
) -> Iterator[PhoenixServer]:
    """Start Phoenix, wait until ``/healthz`` answers, yield it, then stop it (terminate, wait, kill).

    ``while_starting`` runs after the process is launched and before the health polling: slow set-up
    of our own (the client import takes seconds) overlaps with the server's start.
    """
    http_port, grpc_port = _free_port(), _free_port()
    log_path = working_dir / "phoenix.log"
    base_url = f"http://127.0.0.1:{http_port}"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "phoenix.server.main", "serve"],
            env=phoenix_environment(working_dir, http_port, grpc_port),
            cwd=working_dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        if while_starting is not None:
            while_starting()
        wait_healthy("Phoenix", process, f"{base_url}/healthz", log_path, deadline=started + timeout_s)
        yield PhoenixServer(
            base_url=base_url,
            grpc_endpoint=f"http://127.0.0.1:{grpc_port}",
            log_path=log_path,
            startup_seconds=time.monotonic() - started,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def import_phoenix_client() -> ModuleType:
    """Import ``phoenix.client`` with the two warnings its import is known to raise silenced.

    With the ``arize-phoenix`` server package installed, ``phoenix.client`` runs ``phoenix/__init__.py``,
    which imports ``ldap3``, which imports ``tagMap``/``typeMap`` from ``pyasn1`` under their deprecated
    names. Both are third-party, import-time only, and cannot be fixed here; everything else still fails
    the test. Later imports hit ``sys.modules`` and warn no more.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(tagMap|typeMap) is deprecated", category=DeprecationWarning)
        import phoenix.client

    return phoenix.client


# ---------------------------------------------------------------------------------- audit span content


ExportAgentSpan = Callable[[], SpanContext]
ExportAuditSpan = Callable[[SpanContext], SpanContext]


AUDIT_SCORE = 0.25
AUDIT_LABEL = "violation"
AUDIT_ATTRIBUTES: dict[str, Any] = {
    sc.GEN_AI_OPERATION_NAME: sc.EVALUATION_OPERATION,
    sc.GEN_AI_EVALUATION_NAME: "causal_faithfulness",
    sc.GEN_AI_EVALUATION_SCORE_VALUE: AUDIT_SCORE,
    sc.GEN_AI_EVALUATION_SCORE_LABEL: AUDIT_LABEL,
    sc.GEN_AI_CONVERSATION_ID: "t-1",
    sc.GEN_AI_AGENT_NAME: "demo-agent",
    sc.OPENINFERENCE_SPAN_KIND: sc.OPENINFERENCE_SPAN_KIND_EVALUATOR,
    sc.OPENINFERENCE_EVAL_NAME: "causal_faithfulness",
    sc.OPENINFERENCE_EVAL_SCORE: AUDIT_SCORE,
    sc.OPENINFERENCE_EVAL_LABEL: AUDIT_LABEL,
    sc.ARIADNE_INTERVENTION_TYPE: "logic_flip",
    sc.ARIADNE_STEP_INDEX: 0,
    sc.ARIADNE_STRENGTH: 1.0,
    sc.ARIADNE_METRIC_PREFIX + "jaccard": 0.8,
    sc.ARIADNE_METRIC_PREFIX + "exact": 1.0,
    sc.ARIADNE_VIOLATION: True,
    sc.ARIADNE_ANSWER_CHANGED: False,
    sc.ARIADNE_REPLAY_CHECKPOINT_ID: "1f0c-checkpoint",
    sc.ARIADNE_SAMPLE_RATE: 1.0,
}
"""What the auditor puts on an audit span (DESIGN.md, "OpenTelemetry schema"), minus the target ids."""


def wait_for_spans(client: PhoenixClient, project: str, span_ids: list[str], timeout_s: float = 30.0) -> dict[str, Any]:
    """Poll Phoenix until every span id is readable (ingestion is asynchronous); spans by id."""
    deadline = time.monotonic() + timeout_s
    found: dict[str, Any] = {}
    while True:
        with contextlib.suppress(httpx.HTTPStatusError):  # 404 until the project exists
            for span in client.spans.get_spans(project_identifier=project, span_ids=span_ids, limit=100):
                found[span["context"]["span_id"]] = span
        if set(span_ids) <= set(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"Phoenix did not return spans {sorted(set(span_ids) - set(found))} in {timeout_s} s")
        time.sleep(0.25)


# ------------------------------------------------------------------------------ loopback HTTP stand-ins


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Responder = Callable[[Recorded], tuple[int, Any]]


@dataclass
class RecordingServer:
    """A loopback HTTP server that records every request and answers with ``respond``."""

    respond: Responder
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""

    def find(self, method: str, path_prefix: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]


@contextlib.contextmanager
def recording_server(respond: Responder) -> Iterator[RecordingServer]:
    """Serve on ``127.0.0.1`` (a free port) in a thread; stop on exit."""
    state = RecordingServer(respond=respond)

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            recorded = Recorded(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length)
            )
            state.requests.append(recorded)
            status, payload = state.respond(recorded)
            body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = _handle

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
