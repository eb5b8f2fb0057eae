"""configure_tracing: exporters, environment variables, resource, exit behaviour, missing extras."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export import DEFAULT_SERVICE_NAME, configure_tracing, memory_exporter
from tests.export.backends import Recorded, RecordingServer, recording_server


def _accept(_: Recorded) -> tuple[int, bytes]:
    return 200, b""


def _exported(request: Recorded) -> tuple[dict[str, object], list[str]]:
    """Resource attributes and span names of one OTLP/HTTP protobuf request."""
    message = ExportTraceServiceRequest.FromString(request.body)
    (resource_spans,) = message.resource_spans
    resource = {kv.key: kv.value.string_value for kv in resource_spans.resource.attributes}
    names = [span.name for scope in resource_spans.scope_spans for span in scope.spans]
    return resource, names


@pytest.fixture
def otlp_sink() -> Iterator[RecordingServer]:
    with recording_server(_accept) as server:
        yield server


@pytest.fixture(autouse=True)
def _clean_otel_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("OTEL_"):
            monkeypatch.delenv(key)


def test_memory_exporter_reads_spans_back_and_names_the_audit_service() -> None:
    provider = configure_tracing("memory")
    provider.get_tracer("t").start_span("evaluation causal_faithfulness").end()
    (span,) = memory_exporter(provider).get_finished_spans()
    assert span.name == "evaluation causal_faithfulness"
    assert span.resource.attributes["service.name"] == DEFAULT_SERVICE_NAME == "ariadne-lc-audit"
    provider.shutdown()


def test_the_provider_is_never_installed_globally() -> None:
    before = trace.get_tracer_provider()
    provider = configure_tracing("none")
    assert trace.get_tracer_provider() is before
    assert trace.get_tracer_provider() is not provider
    provider.shutdown()


def test_resource_merges_environment_but_explicit_arguments_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "the-agent")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=staging,team=ml")
    provider = configure_tracing("memory", resource_attributes={"team": "evals"})
    attributes = provider.resource.attributes
    assert attributes["service.name"] == DEFAULT_SERVICE_NAME  # audit traffic keeps its own service
    assert attributes["deployment.environment"] == "staging"
    assert attributes["team"] == "evals"
    provider.shutdown()


def test_otlp_http_appends_the_traces_path_to_a_bare_endpoint(otlp_sink: RecordingServer) -> None:
    provider = configure_tracing(
        "otlp-http", endpoint=otlp_sink.url, headers={"Authorization": "Basic cGs6c2s="}, service_name="audits"
    )
    provider.get_tracer("t").start_span("evaluation causal_faithfulness").end()
    assert provider.force_flush()
    provider.shutdown()

    (request,) = otlp_sink.requests
    assert (request.method, request.path) == ("POST", "/v1/traces")
    assert request.headers["authorization"] == "Basic cGs6c2s="
    resource, names = _exported(request)
    assert resource["service.name"] == "audits"
    assert names == ["evaluation causal_faithfulness"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/", "/v1/traces"),
        ("/api/public/otel", "/api/public/otel/v1/traces"),  # Langfuse's documented base URL
        ("/api/public/otel/v1/traces", "/api/public/otel/v1/traces"),
        ("/otel/v1/traces/", "/otel/v1/traces/"),
    ],
)
def test_otlp_http_endpoint_is_a_base_url(otlp_sink: RecordingServer, path: str, expected: str) -> None:
    provider = configure_tracing("otlp-http", endpoint=otlp_sink.url + path)
    provider.get_tracer("t").start_span("x").end()
    provider.shutdown()
    assert [r.path for r in otlp_sink.requests] == [expected]


def test_otlp_http_reads_the_standard_environment_variables(
    otlp_sink: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_sink.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=1,x-overridden=env")
    provider = configure_tracing("otlp-http")
    provider.get_tracer("t").start_span("from-env").end()
    provider.shutdown()

    (request,) = otlp_sink.requests
    assert request.path == "/v1/traces"  # the SDK appends the signal path to OTEL_EXPORTER_OTLP_ENDPOINT
    assert request.headers["x-from-env"] == "1"
    assert _exported(request)[1] == ["from-env"]


def test_explicit_headers_replace_the_environment_headers(
    otlp_sink: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-overridden=env")
    provider = configure_tracing("otlp-http", endpoint=otlp_sink.url, headers={"x-overridden": "arg"})
    provider.get_tracer("t").start_span("x").end()
    provider.shutdown()
    assert otlp_sink.requests[0].headers["x-overridden"] == "arg"


def test_an_exporter_instance_is_accepted() -> None:
    exporter = InMemorySpanExporter()
    provider = configure_tracing(exporter)
    provider.get_tracer("t").start_span("x").end()
    assert [s.name for s in exporter.get_finished_spans()] == ["x"]  # in-memory: exported at once
    provider.shutdown()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exporter": "jaeger"}, "unknown exporter 'jaeger'"),
        ({"exporter": "console", "endpoint": "http://localhost:4318"}, "only to the 'otlp-http' and 'otlp-grpc'"),
        ({"exporter": "memory", "headers": {"a": "b"}}, "only to the 'otlp-http' and 'otlp-grpc'"),
    ],
)
def test_bad_arguments_are_configuration_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        configure_tracing(**kwargs)  # type: ignore[arg-type]


def test_memory_exporter_of_another_provider_is_an_error() -> None:
    provider = configure_tracing("none")
    with pytest.raises(ConfigurationError, match="not made by configure_tracing"):
        memory_exporter(provider)
    provider.shutdown()


@pytest.mark.parametrize(
    ("exporter", "module"),
    [
        ("otlp-http", "opentelemetry.exporter.otlp.proto.http.trace_exporter"),
        ("otlp-grpc", "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"),
    ],
)
def test_missing_exporter_names_the_extra(exporter: str, module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes the import fail as if not installed
    with pytest.raises(MissingExtraError) as caught:
        configure_tracing(exporter)  # type: ignore[arg-type]
    assert caught.value.extra == "otlp"
    assert isinstance(caught.value, ImportError)
    assert "pip install 'ariadne-lc[otlp]'" in str(caught.value)


def test_spans_are_batched_and_flushed_at_interpreter_exit() -> None:
    """Without shutdown(): the batch processor holds the span until the atexit flush prints it."""
    script = textwrap.dedent(
        """
        from ariadne_lc.export import configure_tracing
        provider = configure_tracing("console")
        provider.get_tracer("t").start_span("evaluation causal_faithfulness").end()
        print("MARKER: main finished", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    marker = done.stdout.index("MARKER: main finished")
    span = done.stdout.index('"name": "evaluation causal_faithfulness"')
    assert marker < span, done.stdout
    assert done.stderr == ""
