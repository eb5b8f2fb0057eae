"""Getting audit scores into tracing backends: tracer setup, agent span capture, score write-back.

* :func:`configure_tracing` builds a tracer provider for audit spans (console, OTLP/HTTP, OTLP/gRPC,
  in-memory) for people without their own OpenTelemetry setup. It never sets the global provider.
* :func:`current_agent_span_context` finds the agent's span at record time (OpenInference or OpenLLMetry)
  so the audit span can link to it.
* :class:`ScoreWriter` and its Phoenix, MLflow, Langfuse and LangSmith implementations put the score where each
  backend shows scores natively. They raise only :class:`WriteBackError`. :func:`write_back` writes runs audited
  earlier, one score per link of each agent run.
* :mod:`ariadne_lc.export.review` turns flagged audits into data: a review dataset and DPO preference pairs.

Optional dependencies are imported only when used: the OpenTelemetry SDK and OTLP exporters (extra
``otlp``), ``arize-phoenix-client`` (``phoenix``), ``mlflow`` (``mlflow``), ``langfuse`` (``langfuse``).
"""

from ariadne_lc.export._datasets import upload_to_mlflow, upload_to_phoenix
from ariadne_lc.export._setup import (
    DEFAULT_SERVICE_NAME,
    ExporterName,
    configure_tracing,
    memory_exporter,
)
from ariadne_lc.export.capture import agent_span_ref, current_agent_span_context
from ariadne_lc.export.review import PreferencePair, ReviewRow, preference_pairs, review_rows, write_jsonl
from ariadne_lc.export.writeback import (
    LangfuseScoreWriter,
    LangSmithScoreWriter,
    LinkScore,
    MLflowScoreWriter,
    PhoenixScoreWriter,
    Score,
    ScoreTarget,
    ScoreWriter,
    WriteBackError,
    WriteBackSummary,
    link_scores,
    mlflow_trace_id,
    write_back,
)

__all__ = [
    "DEFAULT_SERVICE_NAME",
    "ExporterName",
    "LangSmithScoreWriter",
    "LangfuseScoreWriter",
    "LinkScore",
    "MLflowScoreWriter",
    "PhoenixScoreWriter",
    "PreferencePair",
    "ReviewRow",
    "Score",
    "ScoreTarget",
    "ScoreWriter",
    "WriteBackError",
    "WriteBackSummary",
    "agent_span_ref",
    "configure_tracing",
    "current_agent_span_context",
    "link_scores",
    "memory_exporter",
    "mlflow_trace_id",
    "preference_pairs",
    "review_rows",
    "upload_to_mlflow",
    "upload_to_phoenix",
    "write_back",
    "write_jsonl",
]
