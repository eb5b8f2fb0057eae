"""Getting audit scores into tracing backends: tracer setup, agent span capture, score write-back.

* :func:`configure_tracing` builds a tracer provider for audit spans (console, OTLP/HTTP, OTLP/gRPC,
  in-memory) for people without their own OpenTelemetry setup. It never sets the global provider.
* :func:`current_agent_span_context` finds the agent's span at record time (OpenInference or OpenLLMetry)
  so the audit span can link to it.
* :class:`ScoreWriter` and its Phoenix, Langfuse and LangSmith implementations put the score where each
  backend shows scores natively. They raise only :class:`WriteBackError`.

Optional dependencies are imported only when used: the OpenTelemetry SDK and OTLP exporters (extra
``otlp``), ``arize-phoenix-client`` (``phoenix``), ``langfuse`` (``langfuse``).
"""

from ariadne_lc.export._setup import (
    DEFAULT_SERVICE_NAME,
    ExporterName,
    configure_tracing,
    memory_exporter,
)
from ariadne_lc.export.capture import agent_span_ref, current_agent_span_context
from ariadne_lc.export.writeback import (
    LangfuseScoreWriter,
    LangSmithScoreWriter,
    PhoenixScoreWriter,
    Score,
    ScoreTarget,
    ScoreWriter,
    WriteBackError,
)

__all__ = [
    "DEFAULT_SERVICE_NAME",
    "ExporterName",
    "LangSmithScoreWriter",
    "LangfuseScoreWriter",
    "PhoenixScoreWriter",
    "Score",
    "ScoreTarget",
    "ScoreWriter",
    "WriteBackError",
    "agent_span_ref",
    "configure_tracing",
    "current_agent_span_context",
    "memory_exporter",
]
