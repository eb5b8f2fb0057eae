"""Fixtures for the tracing-backend tests: a real Phoenix server and the span plumbing around it.

Phoenix runs as a subprocess, so its own warnings stay in its log and never meet pytest's
``filterwarnings = error`` (see :mod:`tests.export.backends`). The span plumbing is in fixtures so that
the hand-made audit span can later be replaced by one that the real auditor emits:
``export_agent_span`` and ``export_audit_span`` are the two seams.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from opentelemetry import context as otel_context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, SpanContext, SpanKind

from ariadne_lc import semconv as sc
from ariadne_lc.export import configure_tracing
from tests.export.backends import (
    AUDIT_ATTRIBUTES,
    AUDIT_LABEL,
    AUDIT_SCORE,
    PHOENIX_PROJECT_KEY,
    ExportAgentSpan,
    ExportAuditSpan,
    PhoenixServer,
    import_phoenix_client,
    run_phoenix,
)
from tests.export.mlflow_server import MLflowServer, run_mlflow

if TYPE_CHECKING:
    from phoenix.client import Client as PhoenixClient


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """One Phoenix server for the whole session (starting one costs tens of seconds)."""
    with run_phoenix(tmp_path_factory.mktemp("phoenix"), while_starting=import_phoenix_client) as server:
        print(f"\nPhoenix healthy after {server.startup_seconds:.1f} s at {server.base_url}")
        yield server


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MLflowServer]:
    """One MLflow tracking server for the whole session (on SQLite, from its own environment)."""
    with run_mlflow(tmp_path_factory.mktemp("mlflow")) as server:
        print(f"\nMLflow healthy after {server.startup_seconds:.1f} s at {server.tracking_uri}")
        yield server


@pytest.fixture
def mlflow_experiment(mlflow_server: MLflowServer) -> str:
    """A fresh MLflow experiment per test, so each reads back only its own traces and datasets."""
    from mlflow import MlflowClient

    return str(MlflowClient(mlflow_server.tracking_uri).create_experiment(f"ariadne-{uuid.uuid4().hex[:8]}"))


@pytest.fixture(scope="session")
def phoenix_client(phoenix_server: PhoenixServer) -> PhoenixClient:
    client: PhoenixClient = import_phoenix_client().Client(base_url=phoenix_server.base_url)
    return client


@pytest.fixture
def phoenix_project() -> str:
    """A fresh Phoenix project per test, so tests read back only their own spans."""
    return f"ariadne-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def agent_provider(phoenix_server: PhoenixServer, phoenix_project: str) -> Iterator[TracerProvider]:
    """Stands for the application's own provider (what an instrumentation of the agent would use)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(
        resource=Resource.create({"service.name": "demo-agent", PHOENIX_PROJECT_KEY: phoenix_project}),
        shutdown_on_exit=False,
    )
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix_server.base_url}/v1/traces")))
    yield provider
    provider.shutdown()


@pytest.fixture
def audit_provider(phoenix_server: PhoenixServer, phoenix_project: str) -> Iterator[TracerProvider]:
    """The audit side, made the way a user without an OpenTelemetry setup would: ``configure_tracing``."""
    provider = configure_tracing(
        "otlp-http", endpoint=phoenix_server.base_url, resource_attributes={PHOENIX_PROJECT_KEY: phoenix_project}
    )
    yield provider
    provider.shutdown()


@pytest.fixture
def export_agent_span(agent_provider: TracerProvider) -> ExportAgentSpan:
    """Export a hand-made agent span (root of its trace) and return its context."""

    def export() -> SpanContext:
        tracer = agent_provider.get_tracer("demo-agent")
        with tracer.start_as_current_span(
            "LangGraph",
            context=otel_context.Context(),
            attributes={sc.OPENINFERENCE_SPAN_KIND: "AGENT", sc.GEN_AI_AGENT_NAME: "demo-agent"},
        ) as span:
            context = span.get_span_context()
        agent_provider.force_flush()
        return context

    return export


@pytest.fixture
def export_audit_span(audit_provider: TracerProvider) -> ExportAuditSpan:
    """Export a hand-made audit span for ``target`` and return its context.

    The seam for the real auditor: replace the body with an audit of a recorded trace whose span
    context is ``target``, keeping the signature.
    """

    def export(target: SpanContext) -> SpanContext:
        tracer = audit_provider.get_tracer("ariadne_lc")
        attributes = dict(AUDIT_ATTRIBUTES)
        attributes[sc.ARIADNE_TARGET_TRACE_ID] = format(target.trace_id, "032x")
        attributes[sc.ARIADNE_TARGET_SPAN_ID] = format(target.span_id, "016x")
        link = Link(target, {sc.ARIADNE_LINK_ROLE: sc.LINK_ROLE_EVALUATED_TRACE})
        with tracer.start_as_current_span(
            "evaluation causal_faithfulness",
            context=otel_context.Context(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=[link],
        ) as span:
            span.add_event(
                sc.EVENT_EVALUATION_RESULT,
                {
                    sc.GEN_AI_EVALUATION_NAME: "causal_faithfulness",
                    sc.GEN_AI_EVALUATION_SCORE_VALUE: AUDIT_SCORE,
                    sc.GEN_AI_EVALUATION_SCORE_LABEL: AUDIT_LABEL,
                },
            )
            context = span.get_span_context()
        assert audit_provider.force_flush(), "the audit span was not exported"
        return context

    return export
