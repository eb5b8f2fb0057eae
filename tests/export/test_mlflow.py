"""Audit scores in a real MLflow tracking server (a subprocess on loopback, SQLite), read back through MLflow's client.

Both ways a LangGraph team traces into MLflow: OpenTelemetry spans over OTLP (here the recorder's own GenAI spans,
``record(graph, store, tracer_provider=...)``) and MLflow's own LangChain tracing (``mlflow.langchain.autolog()``).
Each agent of a sub-agent system is assessed on its own span; a write-back of runs audited earlier gives one
assessment per link of each run, and writing it again updates, never duplicates.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ariadne_lc import Auditor, InMemoryTraceStore, record
from ariadne_lc import semconv as sc
from ariadne_lc.export import MLflowScoreWriter, mlflow_trace_id, write_back
from ariadne_lc.records import AuditResult
from tests.export.mlflow_server import MLflowServer
from tests.subagent_plain import ask_researcher, main_model


def _provider(server: MLflowServer, experiment: str, service: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}), shutdown_on_exit=False)
    exporter = OTLPSpanExporter(endpoint=f"{server.tracking_uri}/v1/traces", headers=server.otlp_headers(experiment))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _trace(server: MLflowServer, otel_trace_id: str, timeout_s: float = 30.0) -> Any:
    """The MLflow trace with this OpenTelemetry id, once MLflow has it whole (spans and assessments)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracing.client import TracingClient

    client, deadline = TracingClient(server.tracking_uri), time.monotonic() + timeout_s
    while True:
        try:
            found = client.get_trace(mlflow_trace_id(otel_trace_id))
            if found is not None and found.data.spans:
                return found
        except MlflowException:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"MLflow never showed trace {otel_trace_id}")
        time.sleep(0.3)


def _written(results: tuple[AuditResult, ...], agent: str) -> list[AuditResult]:
    """The results the auditor's write-back writes for ``agent``: every audit but controls and failures."""
    return [r for r in results if r.agent_name == agent and not r.control and r.status != "failed"
            and not r.nothing_to_audit]  # fmt: skip


def test_each_agent_is_assessed_on_its_own_span_with_the_audit_a_click_away(
    mlflow_server: MLflowServer, mlflow_experiment: str
) -> None:
    """OTLP both ways: the recorder's agent spans and the audit's own spans go to one experiment; each audit becomes a
    feedback on the span of the agent it audited, naming the audit's trace, which MLflow holds."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    agent_provider = _provider(mlflow_server, mlflow_experiment, "demo-agent")
    audit_provider = _provider(mlflow_server, mlflow_experiment, "ariadne-audit")
    graph = create_agent(main_model("ask_researcher", "researcher", reads="belief"), [ask_researcher],
                         checkpointer=InMemorySaver(), name="main")  # fmt: skip
    store = InMemoryTraceStore()
    running = record(graph, store, tracer_provider=agent_provider, synchronous=True)
    running.invoke({"messages": [("user", "What is the price of the fig?")]}, {"configurable": {"thread_id": "ml"}})
    agent_provider.force_flush()
    traces = {t.agent_name: t for t in store.list_traces()}
    assert sorted(traces) == ["main", "researcher"]
    writer = MLflowScoreWriter(mlflow_server.tracking_uri)
    auditor = Auditor(graph, tracer_provider=audit_provider, score_writers=[writer])
    report = auditor.audit_batch(list(traces.values()))
    assert audit_provider.force_flush() and auditor.writeback_errors == 0

    for name, recorded in traces.items():
        assert recorded.span is not None
        found = _trace(mlflow_server, recorded.span.trace_id)
        spans = {s.span_id: s for s in found.data.spans}
        assert spans[recorded.span.span_id].name == f"invoke_agent {name}"
        mine = [a for a in found.info.assessments if a.span_id == recorded.span.span_id]
        expected = _written(report.results, name)
        assert expected and len(mine) == len(expected), name
        assert all(a.source.source_type == "CODE" and a.source.source_id == "ariadne_lc" for a in mine)
        violations = {a.name for a in mine if a.metadata["label"] == "violation"}
        # the main agent answers from a belief whatever its researcher found; the researcher reads its tool
        assert violations == ({"observation_faithfulness"} if name == "main" else set()), (name, violations)
        by_key = {a.metadata["ariadne.key"]: a for a in mine}
        for r in expected:
            key = f"{r.intervention_type}/{r.step_index}" + ("" if r.link == "thought->answer" else f"/{r.link}")
            assessment = by_key[key]
            assert assessment.name == sc.evaluation_name(r.link)
            assert assessment.value == (r.phi if r.phi is not None else r.label) and assessment.error is None
            assert assessment.metadata["label"] == r.label
            assert assessment.rationale.startswith(f"{r.intervention_type} on step {r.step_index} ({r.link})")
            # the evidence: the audit's own trace, in the same experiment
            audit = _trace(mlflow_server, assessment.metadata["audit_trace_id"])
            assert any(s.span_id == assessment.metadata["audit_span_id"] and s.name.startswith("evaluation ")
                       for s in audit.data.spans)  # fmt: skip
    agent_provider.shutdown()
    audit_provider.shutdown()


@pytest.fixture
def mlflow_langchain_tracing(mlflow_server: MLflowServer, mlflow_experiment: str) -> Iterator[None]:
    """MLflow's own LangChain tracing into the experiment, off again after the test (it is process-wide)."""
    import mlflow

    with warnings.catch_warnings():  # an import-time warning of MLflow's own about its type hints: not ours to fix
        warnings.filterwarnings("ignore", message=r".*Any type hint is inferred as AnyType", category=UserWarning)
        import mlflow.langchain
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(mlflow_server.tracking_uri)
    mlflow.set_experiment(experiment_id=mlflow_experiment)
    mlflow.langchain.autolog()
    try:
        yield
    finally:
        mlflow.langchain.autolog(disable=True)
        mlflow.flush_trace_async_logging()
        mlflow.set_tracking_uri(previous)


@pytest.mark.usefixtures("mlflow_langchain_tracing")
def test_runs_traced_by_mlflow_itself_get_one_assessment_per_link_written_back_later(
    mlflow_server: MLflowServer, mlflow_experiment: str
) -> None:
    """``mlflow.langchain.autolog()`` traces the agent; the recorder keeps each agent run's MLflow span; audited later,
    ``write_back`` puts one feedback per link on each run's span (verdict, mean φ, interval, what changed); a second
    write-back updates them in place."""
    import mlflow
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from ariadne_lc import AriadneCallbackHandler

    graph = create_agent(main_model("ask_researcher", "researcher", reads="belief"), [ask_researcher],
                         checkpointer=InMemorySaver(), name="main")  # fmt: skip
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    config = {"configurable": {"thread_id": "autolog"}, "callbacks": [handler]}
    graph.invoke({"messages": [("user", "What is the price of the pear?")]}, config)
    mlflow.flush_trace_async_logging()
    traces = {t.agent_name: t for t in store.list_traces()}
    assert sorted(traces) == ["main", "researcher"] and all(t.span is not None for t in traces.values())
    main_span, researcher_span = traces["main"].span, traces["researcher"].span
    assert main_span is not None and researcher_span is not None
    assert main_span.trace_id == researcher_span.trace_id, "one MLflow trace: the sub-agent's span is inside it"
    found = _trace(mlflow_server, main_span.trace_id)
    spans = {s.span_id: s for s in found.data.spans}
    assert spans[main_span.span_id].name == "main" and spans[main_span.span_id].parent_id is None
    assert spans[researcher_span.span_id].name == "researcher"

    audit_provider = _provider(mlflow_server, mlflow_experiment, "ariadne-audit")
    auditor = Auditor(graph, tracer_provider=audit_provider)  # audited later, without a writer
    results = auditor.audit_batch(list(traces.values())).results
    assert audit_provider.force_flush()
    spans_of = {t.trace_id: t.span for t in traces.values()}
    from mlflow import MlflowClient

    writer = MLflowScoreWriter(client=MlflowClient(mlflow_server.tracking_uri))  # the client most code holds
    summary = write_back(results, spans_of, [writer])
    assert summary.failed == 0 and summary.no_span == 0 and summary.written > 0
    assessments = _trace(mlflow_server, main_span.trace_id).info.assessments
    assert len(assessments) == summary.written
    for name, recorded in traces.items():
        links = {r.link for r in results if r.agent_name == name and not r.control and not r.nothing_to_audit}
        mine = {a.name: a for a in assessments if a.span_id == recorded.span.span_id}  # type: ignore[union-attr]
        assert set(mine) == {sc.evaluation_name(link) for link in links}, name
        for link in links:
            a = mine[sc.evaluation_name(link)]
            audits = [r for r in results if r.agent_name == name and r.link == link and not r.control]
            scored = [r for r in audits if r.status == "scored"]
            assert a.metadata["ariadne.key"] == f"link/{link}" and int(a.metadata["scored"]) == len(scored)
            if scored:
                phis = [r.phi for r in scored if r.phi is not None]
                assert a.value == pytest.approx(sum(phis) / len(phis))
                label = "violation" if any(r.violation for r in scored) else "faithful"
                assert a.metadata["label"] == label and a.rationale.startswith(f"{label}: ")
                assert "95% CI of the rate [" in a.rationale and " Worst: " in a.rationale
            worst = next(r for r in audits if r.result_id in json.loads(a.metadata["result_ids"]) and
                         r.audit_span is not None and r.audit_span.span_id == a.metadata["audit_span_id"])  # fmt: skip
            evidence = _trace(mlflow_server, a.metadata["audit_trace_id"])  # the worst audit, a click away
            assert any(s.span_id == worst.audit_span.span_id for s in evidence.data.spans)  # type: ignore[union-attr]
            if not scored:  # nothing scored on the link (its thoughts commit to nothing): no verdict, and not an error
                assert a.value == "inconclusive" and a.error is None and a.rationale.startswith("no verdict: ")
    # the main agent ignores what its researcher found; the researcher reads its tool
    main_labels = {a.name: a.metadata["label"] for a in assessments if a.span_id == main_span.span_id}
    assert main_labels["observation_faithfulness"] == "violation"
    assert all(a.metadata["label"] != "violation" for a in assessments if a.span_id == researcher_span.span_id)

    again = write_back(results, spans_of, [writer])
    assert again.written == summary.written and again.failed == 0
    assert len(_trace(mlflow_server, main_span.trace_id).info.assessments) == summary.written, "updated, not added"


def test_an_unknown_trace_is_a_retryable_write_back_error(mlflow_server: MLflowServer) -> None:
    from ariadne_lc.export import Score, ScoreTarget, WriteBackError

    writer = MLflowScoreWriter(mlflow_server.tracking_uri)
    with pytest.raises(WriteBackError) as raised:
        writer.write(ScoreTarget("1" * 32, "2" * 16), Score(name="causal_faithfulness", value=1.0, label="faithful"))
    assert raised.value.retryable and raised.value.backend == "mlflow"


def test_an_unreachable_server_is_a_retryable_write_back_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow's client retries by itself first (``MLFLOW_HTTP_REQUEST_MAX_RETRIES``); then the writer says so, once."""
    from ariadne_lc.export import Score, ScoreTarget, WriteBackError
    from tests.export.backends import _free_port

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    writer = MLflowScoreWriter(f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(WriteBackError, match="tr-1111") as raised:
        writer.write(ScoreTarget("1" * 32, "2" * 16), Score(name="causal_faithfulness", value=1.0, label="faithful"))
    assert raised.value.retryable
