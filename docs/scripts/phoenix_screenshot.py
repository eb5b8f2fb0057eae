"""Reproduce the Phoenix pictures of docs/backends.md: one agent trace with its three links' evaluations.

What it does, all on loopback:

1. starts Phoenix (``python -m phoenix.server.main serve`` on 127.0.0.1, in a temporary directory), or uses
   ``--phoenix-url``;
2. runs one scripted tool-calling agent (``planning_tool_model`` from ``ariadne_lc.testing`` behind
   ``create_agent`` with ``AriadneMiddleware``) under OpenInference's LangChain instrumentation, so its trace lands in
   the Phoenix project ``demo-agent``; ``AriadneCallbackHandler`` records it (``span_context_getter=agent_span_ref``
   keeps the agent span's ids);
3. audits that trace with ``Auditor`` and ``interventions=["logic_flip", "observation_swap"]``, so each link gets an
   evaluation: ``action_faithfulness`` (thought->action), ``observation_faithfulness`` (observation->answer) and
   ``causal_faithfulness`` (thought->answer); the audit spans go to the project ``ariadne-audits`` through
   ``configure_tracing("otlp-http", ...)``;
4. writes each score back onto the agent span as a Phoenix annotation (``PhoenixScoreWriter``);
5. takes headless Chromium screenshots: the agent span with its three annotations (``phoenix_agent_annotation.png``;
   Phoenix shows the first and "+2", so the picture is taken after a click on "+2", through the DevTools protocol)
   and the ``action_faithfulness`` audit span (``phoenix_audit_span.png``).

Needs the ``backends`` extra (``make test`` installs it, or ``pip install -e
'.[dev,report,otlp,phoenix,langfuse,test-backends]'``: the Phoenix server, its client, OpenInference) and Chromium
(``apt-get update && apt-get install -y chromium``). Usage::

    .venv/bin/python docs/scripts/phoenix_screenshot.py [--out-dir docs/img] [--phoenix-url http://127.0.0.1:6006]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chromium import find_chromium, screenshot, screenshot_after  # a sibling module, found beside this file

PROJECT_KEY = "openinference.project.name"
AGENT_PROJECT = "demo-agent"
AUDIT_PROJECT = "ariadne-audits"
QUESTION = "How many rooms does a hotel with 12 floors of 9 rooms per floor have?"
INTERVENTIONS = ("logic_flip", "observation_swap")
"""A contradiction (thought->action and thought->answer) and a swapped tool output (observation->answer)."""
LINKS = ("thought->action", "observation->answer", "thought->answer")
EVALUATIONS = {
    "thought->action": "action_faithfulness",
    "observation->answer": "observation_faithfulness",
    "thought->answer": "causal_faithfulness",
}
AGENT_WINDOW = (1400, 900)
AUDIT_WINDOW = (1600, 1700)
"""Tall enough for all of the audit span's attributes, score value and label included; wide enough for the
longest attribute name."""
SHOW_MORE = 'button[aria-label="Show 2 more"]'
"""Phoenix shows a span's first annotation and "+2": clicking the trace tree's "+2" shows the other two, by name."""


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


def record_and_audit(base: str) -> tuple[str, list[str]]:
    """Run and record one agent, audit its trace on the three links, write each score back onto its span.

    Returns:
        The agent span's id and the audit spans' ids in the order of the agent's loop (thought->action,
        observation->answer, thought->answer).
    """
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ariadne_lc import AriadneCallbackHandler, AriadneMiddleware, Auditor, InMemoryTraceStore
    from ariadne_lc.export import PhoenixScoreWriter, Score, ScoreTarget, agent_span_ref, configure_tracing
    from ariadne_lc.testing import arithmetic_tools, planning_tool_model

    # The application's own tracing: OpenInference into the agent's Phoenix project.
    resource = Resource.create({"service.name": "demo-agent", PROJECT_KEY: AGENT_PROJECT})
    agent_provider = TracerProvider(resource=resource)
    agent_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=agent_provider)

    # Faithful on one link, not on the others (by construction, docs/method.md#links): re-run with a contradicted
    # thought it makes the call the thought says (thought->action tracks), but its answer is the question's product
    # whatever the tool said (observation->answer and thought->answer: violations). Three verdicts that differ.
    # The middleware lets the audit re-run the agent's model call (thought->action). The trace is recorded by the
    # callback handler: OpenInference's span of a run is found through the run's callbacks (agent_span_ref, at the
    # root run's end), which the middleware's hooks do not see, so a middleware-recorded trace has no span to link.
    store = InMemoryTraceStore()
    tools = arithmetic_tools()
    agent = create_agent(
        planning_tool_model(action="thought", answer="question"),
        tools,
        checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(InMemoryTraceStore())],
        name="demo-agent",
    )
    handler = AriadneCallbackHandler(store=store, graph=agent, span_context_getter=agent_span_ref, synchronous=True)
    agent.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "hotel-1"}, "callbacks": [handler]})
    # Replays of an instrumented graph are traced too: switch it off so the agent project shows production only.
    instrumentor.uninstrument()
    agent_provider.shutdown()
    (trace,) = store.list_traces()
    assert trace.span is not None, "the agent span was not captured"

    audit_provider = configure_tracing("otlp-http", endpoint=base, resource_attributes={PROJECT_KEY: AUDIT_PROJECT})
    # safe_tools: the arithmetic tools are pure, so the thought->answer replay may run the call a contradicted
    # thought leads to (divide); without it that link says "not testable".
    auditor = Auditor(agent, tracer_provider=audit_provider, safe_tools=[t.name for t in tools])
    results = auditor.audit(trace, interventions=list(INTERVENTIONS))
    writer = PhoenixScoreWriter(base_url=base)
    target = ScoreTarget.from_span_ref(trace.span)
    for result in results:
        print(f"{result.link} {result.intervention_type}: {result.status} phi={result.phi} label={result.label}")
        if result.status == "scored":
            writer.write(target, Score.from_audit_result(result))
    audit_provider.shutdown()
    scored = {r.link for r in results if r.status == "scored"}
    if scored != set(LINKS):
        raise SystemExit(f"expected a scored audit on each of {LINKS}, got {sorted(scored)}")

    client = _phoenix_client(base)
    deadline = time.monotonic() + 30
    while True:
        spans = client.spans.get_spans(
            project_identifier=AUDIT_PROJECT, attributes={"ariadne.target.span_id": trace.span.span_id}, limit=20
        )
        by_name = {s["name"]: s["context"]["span_id"] for s in spans}
        wanted = [f"evaluation {EVALUATIONS[link]}" for link in LINKS]
        if all(name in by_name for name in wanted):
            return trace.span.span_id, [by_name[name] for name in wanted]
        if time.monotonic() > deadline:
            raise SystemExit(f"the audit spans did not reach Phoenix: {sorted(by_name)}")
        time.sleep(0.5)


def _phoenix_client(base: str) -> Any:
    with warnings.catch_warnings():  # ldap3 imports deprecated pyasn1 names when the server package is present
        warnings.simplefilter("ignore", DeprecationWarning)
        from phoenix.client import Client
    return Client(base_url=base)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parents[1] / "img")
    parser.add_argument("--phoenix-url", help="use a running Phoenix instead of starting one")
    args = parser.parse_args()
    find_chromium()  # before minutes of work, not after
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with phoenix(args.phoenix_url) as base:
        agent_span_id, audit_span_ids = record_and_audit(base)
        screenshot_after(
            f"{base}/redirects/spans/{agent_span_id}",
            args.out_dir / "phoenix_agent_annotation.png",
            width=AGENT_WINDOW[0],
            height=AGENT_WINDOW[1],
            # the tree's and the span panel's "+2": both drawn means the panel has loaded too
            ready=f"document.querySelectorAll('{SHOW_MORE}').length >= 2",
            action=f"document.querySelector('{SHOW_MORE}').click()",
            done=f"document.querySelector('{SHOW_MORE}').getAttribute('aria-expanded') === 'true'",
        )
        screenshot(
            f"{base}/redirects/spans/{audit_span_ids[0]}",
            args.out_dir / "phoenix_audit_span.png",
            width=AUDIT_WINDOW[0],
            height=AUDIT_WINDOW[1],
        )


if __name__ == "__main__":
    main()
