"""Reproduce docs/img/phoenix_audit_span.png: a real audit, viewed in a local Arize Phoenix.

What it does, all on loopback:

1. starts Phoenix (``python -m phoenix.server.main serve``) in a temporary directory, or uses
   ``--phoenix-url``;
2. runs the scripted "faithful arithmetic" agent under OpenInference's LangChain instrumentation, so
   its trace lands in the Phoenix project ``demo-agent``, and records it with ``AriadneCallbackHandler``
   (``span_context_getter=agent_span_ref`` keeps the agent span's ids);
3. audits the recorded trace with ``Auditor``; the audit span goes to the project ``ariadne-audits``
   through ``configure_tracing("otlp-http", ...)``;
4. writes each score back onto the agent span as a Phoenix annotation (``PhoenixScoreWriter``);
5. takes headless Chromium screenshots of the audit span and of the annotated agent span.

Needs: ``pip install -e '.[dev]' arize-phoenix arize-phoenix-client openinference-instrumentation-langchain
opentelemetry-exporter-otlp`` and Debian's ``chromium``.

Usage::

    python docs/scripts/phoenix_screenshot.py [--out-dir docs/img] [--phoenix-url http://127.0.0.1:6006]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

PROJECT_KEY = "openinference.project.name"
AGENT_PROJECT = "demo-agent"
AUDIT_PROJECT = "ariadne-audits"
AGENT_WINDOW = "1400,900"
AUDIT_WINDOW = "1400,1650"
"""Tall enough for all of the audit span's attributes, score value and label included."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def phoenix(url: str | None) -> Iterator[str]:
    """Yield the URL of a Phoenix: the given one, or a fresh local one that is stopped afterwards."""
    if url is not None:
        yield url.rstrip("/")
        return
    work = Path(tempfile.mkdtemp(prefix="phoenix-shot-"))
    port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(
        PHOENIX_WORKING_DIR=str(work),
        PHOENIX_SQL_DATABASE_URL=f"sqlite:///{work / 'phoenix.db'}",
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        PHOENIX_DISABLE_AGENT_ASSISTANT="true",
        PHOENIX_LOG_MIGRATIONS="false",
    )
    log = (work / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"Phoenix did not start; see {work / 'phoenix.log'}")
            time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def record_and_audit(base: str) -> tuple[str, str]:
    """Run, record and audit a faithful and an unfaithful agent; return the unfaithful one's
    (audit span id, agent span id): a violation is the more instructive picture."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore
    from ariadne_lc.export import PhoenixScoreWriter, Score, ScoreTarget, agent_span_ref, configure_tracing
    from ariadne_lc.testing import calculator, faithful_arithmetic_model, unfaithful_arithmetic_model

    # The application's own tracing: OpenInference into the agent's Phoenix project.
    resource = Resource.create({"service.name": "demo-agent", PROJECT_KEY: AGENT_PROJECT})
    agent_provider = TracerProvider(resource=resource)
    agent_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=agent_provider)

    graphs: dict[str, Any] = {}
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, span_context_getter=agent_span_ref, synchronous=True)
    for thread, model in (("faithful-1", faithful_arithmetic_model()), ("unfaithful-1", unfaithful_arithmetic_model())):
        graphs[thread] = create_agent(model, [calculator], checkpointer=InMemorySaver(), name="demo-agent")
        graphs[thread].invoke(
            {"messages": [("user", "How many apples are in 6 boxes of 7?")]},
            {"configurable": {"thread_id": thread}, "callbacks": [handler]},
        )
    # Replays of an instrumented graph are traced too: switch it off so the agent project shows production only.
    instrumentor.uninstrument()
    agent_provider.shutdown()

    audit_provider = configure_tracing("otlp-http", endpoint=base, resource_attributes={PROJECT_KEY: AUDIT_PROJECT})
    writer = PhoenixScoreWriter(base_url=base)
    shown: str | None = None
    for trace in store.list_traces():
        assert trace.span is not None and trace.thread_id is not None, "the agent span was not captured"
        results = Auditor(graphs[trace.thread_id], tracer_provider=audit_provider).audit(
            trace, interventions=["logic_flip"]
        )
        target = ScoreTarget.from_span_ref(trace.span)
        for result in results:
            print(
                f"{trace.thread_id}: {result.intervention_type} step {result.step_index}: {result.phi=} {result.label=}"
            )
            writer.write(target, Score.from_audit_result(result))
        if trace.thread_id.startswith("unfaithful"):
            shown = trace.span.span_id
    audit_provider.shutdown()
    assert shown is not None

    client = _phoenix_client(base)
    deadline = time.monotonic() + 30
    while True:
        spans = client.spans.get_spans(
            project_identifier=AUDIT_PROJECT, attributes={"ariadne.target.span_id": shown}, limit=1
        )
        if spans:
            return spans[0]["context"]["span_id"], shown
        if time.monotonic() > deadline:
            raise SystemExit("the audit span did not reach Phoenix")
        time.sleep(0.5)


def _phoenix_client(base: str) -> Any:
    with warnings.catch_warnings():  # ldap3 imports deprecated pyasn1 names when the server package is present
        warnings.simplefilter("ignore", DeprecationWarning)
        from phoenix.client import Client
    return Client(base_url=base)


def screenshot(url: str, out: Path, window: str) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium not found: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={window}",
                "--virtual-time-budget=20000",
                f"--screenshot={out}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    print(f"wrote {out} ({url})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parents[1] / "img")
    parser.add_argument("--phoenix-url", help="use a running Phoenix instead of starting one")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with phoenix(args.phoenix_url) as base:
        audit_span_id, agent_span_id = record_and_audit(base)
        screenshot(f"{base}/redirects/spans/{audit_span_id}", args.out_dir / "phoenix_audit_span.png", AUDIT_WINDOW)
        screenshot(
            f"{base}/redirects/spans/{agent_span_id}", args.out_dir / "phoenix_agent_annotation.png", AGENT_WINDOW
        )


if __name__ == "__main__":
    main()
