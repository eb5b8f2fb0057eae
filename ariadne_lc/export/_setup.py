"""A ready-made tracer provider for audit traffic, for people who have no OpenTelemetry setup yet.

The library itself never needs this: :class:`ariadne_lc.otel.AuditSpans` and the :class:`Auditor` take any
``TracerProvider``. ``configure_tracing`` exists because "install the SDK, pick an exporter, remember the
batch processor, remember to flush at exit" is the step where people give up, and because audit traffic
should carry its own ``service.name`` so that backends can tell it apart from the agent's own spans.

The provider it returns is *not* installed as the global provider: a library that sets globals fights
with the application's own setup (and with instrumentations such as OpenInference that read the global
provider). Pass it explicitly, e.g. ``Auditor(graph, tracer_provider=configure_tracing("otlp-http"))``.

The SDK and the exporters are optional dependencies (the ``otlp`` extra); a missing one raises
:class:`ariadne_lc.errors.MissingExtraError` naming the extra.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from ariadne_lc.errors import ConfigurationError, MissingExtraError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.util.types import AttributeValue

__all__ = [
    "DEFAULT_SERVICE_NAME",
    "OTLP_EXTRA",
    "ExporterName",
    "configure_tracing",
    "memory_exporter",
]

ExporterName = Literal["console", "otlp-http", "otlp-grpc", "memory", "none"]
"""Where :func:`configure_tracing` sends spans."""

DEFAULT_SERVICE_NAME: Final = "ariadne-lc-audit"
"""``service.name`` of audit traffic: distinct from the agent's service so backends can filter on it."""

OTLP_EXTRA: Final = "otlp"
"""The extra that brings the OpenTelemetry SDK and the OTLP exporters."""

_OTLP_HTTP_TRACES_PATH: Final = "/v1/traces"
_EXPORTER_NAMES: Final[tuple[str, ...]] = get_args(ExporterName)

# The in-memory exporter of each provider made with exporter="memory", so tests can read the spans
# back without us widening the return type. Weak keys: forgetting the provider forgets the exporter.
_MEMORY_EXPORTERS: weakref.WeakKeyDictionary[TracerProvider, InMemorySpanExporter] = weakref.WeakKeyDictionary()


def configure_tracing(
    exporter: ExporterName | SpanExporter = "console",
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    service_name: str = DEFAULT_SERVICE_NAME,
    resource_attributes: Mapping[str, AttributeValue] | None = None,
) -> TracerProvider:
    """Build a tracer provider that exports audit spans, without touching the global provider.

    The standard ``OTEL_EXPORTER_OTLP_*`` variables (endpoint, headers, timeout, compression,
    certificates) are read by the OTLP exporters themselves; ``endpoint`` and ``headers`` given here
    override them. ``OTEL_RESOURCE_ATTRIBUTES`` is merged into the resource; ``service_name`` and
    ``resource_attributes`` win over it, because this provider is for audit traffic only.

    Exporting is batched (``BatchSpanProcessor``) except for ``"memory"``, which exports each span as it
    ends so tests can assert right away. The provider flushes and shuts down at interpreter exit.

    Args:
        exporter: ``"console"`` (stdout), ``"otlp-http"``, ``"otlp-grpc"``, ``"memory"`` (read back with
            :func:`memory_exporter`), ``"none"`` (spans are created but go nowhere), or any SDK
            ``SpanExporter`` instance.
        endpoint: OTLP endpoint. For ``otlp-http`` a base URL, as in ``OTEL_EXPORTER_OTLP_ENDPOINT``:
            ``/v1/traces`` is appended unless the URL already ends with it (``http://localhost:6006``,
            ``https://cloud.langfuse.com/api/public/otel`` and ``http://host:4318/v1/traces`` all work).
            For ``otlp-grpc``: ``http://host:4317``.
        headers: Extra request headers, e.g. ``{"Authorization": "Basic ..."}`` for Langfuse.
        service_name: The ``service.name`` resource attribute.
        resource_attributes: More resource attributes (``deployment.environment``, ...).

    Returns:
        An SDK ``TracerProvider``; pass it to the auditor. Call ``shutdown()`` on it to flush early.

    Raises:
        MissingExtraError: The SDK or the chosen exporter is not installed.
        ConfigurationError: Unknown exporter name, or ``endpoint``/``headers`` given for an exporter
            that does not use them.

    Examples:
        >>> provider = configure_tracing("memory")
        >>> provider.get_tracer("demo").start_span("x").end()
        >>> [s.name for s in memory_exporter(provider).get_finished_spans()]
        ['x']
    """
    if isinstance(exporter, str) and exporter not in _EXPORTER_NAMES:
        raise ConfigurationError(f"unknown exporter {exporter!r}; use one of {', '.join(_EXPORTER_NAMES)}")
    if (endpoint is not None or headers is not None) and exporter not in ("otlp-http", "otlp-grpc"):
        raise ConfigurationError("endpoint and headers apply only to the 'otlp-http' and 'otlp-grpc' exporters")

    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:  # pragma: no cover - the dev environment always has the SDK
        raise MissingExtraError("configure_tracing", OTLP_EXTRA, "It needs opentelemetry-sdk.") from exc

    attributes: dict[str, AttributeValue] = {"service.name": service_name}
    attributes.update(resource_attributes or {})
    # shutdown_on_exit registers provider.shutdown with atexit; shutdown flushes the batch processor.
    provider = TracerProvider(resource=Resource.create(attributes), shutdown_on_exit=True)

    if exporter == "none":
        return provider
    if exporter == "memory":
        memory = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        _MEMORY_EXPORTERS[provider] = memory
        return provider
    span_exporter = _named_exporter(exporter, endpoint, headers) if isinstance(exporter, str) else exporter
    if isinstance(span_exporter, InMemorySpanExporter):
        provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    else:
        provider.add_span_processor(BatchSpanProcessor(span_exporter))
    return provider


def memory_exporter(provider: TracerProvider) -> InMemorySpanExporter:
    """The in-memory exporter of a provider made with ``configure_tracing("memory")``.

    Raises:
        ConfigurationError: The provider was not made with ``exporter="memory"``.
    """
    try:
        return _MEMORY_EXPORTERS[provider]
    except KeyError:
        raise ConfigurationError("this provider was not made by configure_tracing('memory')") from None


def _named_exporter(name: ExporterName, endpoint: str | None, headers: Mapping[str, str] | None) -> SpanExporter:
    header_dict = dict(headers) if headers is not None else None
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if name == "otlp-http":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
        except ImportError as exc:
            raise MissingExtraError(
                "configure_tracing('otlp-http')", OTLP_EXTRA, "It needs opentelemetry-exporter-otlp-proto-http."
            ) from exc
        # Typed local: stays checked when mypy runs without the optional exporters installed.
        http_exporter: SpanExporter = HttpExporter(endpoint=_http_traces_endpoint(endpoint), headers=header_dict)
        return http_exporter
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
    except ImportError as exc:
        raise MissingExtraError(
            "configure_tracing('otlp-grpc')", OTLP_EXTRA, "It needs opentelemetry-exporter-otlp-proto-grpc."
        ) from exc
    grpc_exporter: SpanExporter = GrpcExporter(endpoint=endpoint, headers=header_dict)
    return grpc_exporter


def _http_traces_endpoint(endpoint: str | None) -> str | None:
    """Treat ``endpoint`` as a base URL, like ``OTEL_EXPORTER_OTLP_ENDPOINT``: append ``/v1/traces``.

    The HTTP exporter uses an explicit ``endpoint`` argument verbatim, so ``http://localhost:4318`` or
    Langfuse's documented ``.../api/public/otel`` would be posted to and answered with a 404 that names no
    cause: the most common OTLP/HTTP mistake. A URL that already ends in ``/v1/traces`` is kept. ``None``
    stays ``None`` so that the exporter reads the environment variables itself.
    """
    if endpoint is None:
        return None
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    if path.endswith(_OTLP_HTTP_TRACES_PATH):
        return endpoint
    return urlunsplit(parts._replace(path=path + _OTLP_HTTP_TRACES_PATH))
