"""Screenshot of audit assessments in a real MLflow, for docs/backends.md (docs/img/mlflow_assessments.png).

Starts an MLflow tracking server on 127.0.0.1 (the one `make test` builds in .venv/servers/mlflow, on SQLite in a
temporary folder), runs LangChain's sub-agent pattern (a main agent that asks a researcher agent through a tool, from
the tests: the main agent answers from a belief whatever its researcher found, the researcher reads its tool),
recorded by ``record(graph, store, tracer_provider=...)`` whose agent spans go to MLflow over OTLP, audits both
agents with ``MLflowScoreWriter`` (the audit spans go to the same experiment), writes one assessment per link per run
with ``write_back``, and takes a headless Chromium screenshot of the main agent's trace with its assessments.
Needs Chromium (``apt-get update && apt-get install -y chromium``). Usage::

    .venv/bin/python docs/scripts/mlflow_screenshot.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the tests' agents and server helper

from _chromium import find_chromium, screenshot_after  # noqa: E402  (a sibling module, found beside this file)

WINDOW = (1500, 1000)
ASSESS = "[...document.querySelectorAll('button')].find(b => b.innerText.trim().startsWith('Assess'))"
"""The trace view's "Assess" button: it opens the panel of the selected span's assessments."""
EXPAND = ("[...document.querySelectorAll('button, [role=button]')].filter(b => b.closest('div') && "
          "b.parentElement.innerText.trim().startsWith('0')).slice(0, 1).forEach(b => b.click())")
"""The chevron of the first feedback whose value is 0 (observation_faithfulness): its rationale and metadata."""


def record_and_audit(uri: str) -> tuple[str, str]:
    """Record and audit the two-agent system into MLflow; return (experiment id, the main agent's MLflow trace id)."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from mlflow import MlflowClient
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ariadne_lc import Auditor, InMemoryTraceStore, record
    from ariadne_lc.export import MLflowScoreWriter, mlflow_trace_id, write_back
    from tests.subagent_plain import ask_researcher, main_model

    experiment = str(MlflowClient(uri).create_experiment("ariadne-lc audits"))

    def provider(service: str) -> TracerProvider:
        made = TracerProvider(resource=Resource.create({"service.name": service}), shutdown_on_exit=False)
        exporter = OTLPSpanExporter(endpoint=f"{uri}/v1/traces", headers={"x-mlflow-experiment-id": experiment})
        made.add_span_processor(SimpleSpanProcessor(exporter))
        return made

    agents, audits = provider("shop-agent"), provider("ariadne-lc-audit")
    graph = create_agent(main_model("ask_researcher", "researcher", reads="belief"), [ask_researcher],
                         checkpointer=InMemorySaver(), name="main")  # fmt: skip
    store = InMemoryTraceStore()
    running = record(graph, store, tracer_provider=agents, synchronous=True)
    running.invoke({"messages": [("user", "What is the price of the pear?")]}, {"configurable": {"thread_id": "t1"}})
    agents.force_flush()
    writer = MLflowScoreWriter(uri)
    traces = store.list_traces()
    report = Auditor(graph, tracer_provider=audits, score_writers=[writer]).audit_batch(traces)
    audits.force_flush()
    write_back(report.results, {t.trace_id: t.span for t in traces}, [writer])
    main = next(t for t in traces if t.agent_name == "main")
    assert main.span is not None
    return experiment, mlflow_trace_id(main.span.trace_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "mlflow_assessments.png")
    args = parser.parse_args()
    find_chromium()
    from tests.export.mlflow_server import run_mlflow

    with tempfile.TemporaryDirectory() as folder, run_mlflow(Path(folder)) as server:
        experiment, trace_id = record_and_audit(server.tracking_uri)
        url = f"{server.tracking_uri}/#/experiments/{experiment}/traces?selectedEvaluationId={trace_id}"
        screenshot_after(
            url,
            args.out,
            width=WINDOW[0],
            height=WINDOW[1],
            ready=f"!!{ASSESS}",
            action=f"{ASSESS}.click(); setTimeout(() => {EXPAND}, 2000)",  # the assessments, then the first one whole
            done="document.body.innerText.includes('Worst:')",
        )
    print(args.out)


if __name__ == "__main__":
    main()
