"""Write audit scores back onto the evaluated agent trace, in the backend's own score model.

Audit spans are the primary export: any OTLP backend stores them. But Phoenix, Langfuse and LangSmith
each show *scores* in a native place (annotations, scores, feedback) that span attributes do not reach,
and that is where people filter and chart. A :class:`ScoreWriter` puts one :class:`Score` on one
:class:`ScoreTarget` (the agent's trace and span ids, as captured by
:func:`ariadne_lc.export.capture.current_agent_span_context`).

Errors: write-back runs inside audit code, after the audit itself succeeded, so a backend hiccup must
not lose the audit. Every writer raises only :class:`WriteBackError` (with ``retryable`` set for
network errors, timeouts, rate limits, 5xx, and 404: a span the backend has not ingested yet), never the
client library's own exceptions; the caller logs it, counts it, and may retry. A missing client
package raises :class:`ariadne_lc.errors.MissingExtraError` at construction, not at write time.

Delivery differs per backend, and each writer's docstring says how:

=========  ==========================================  =====================================
backend    call                                        failure visible to ``write``?
=========  ==========================================  =====================================
Phoenix    ``spans.add_span_annotation`` (REST)        yes (HTTP status); ``sync=True`` also
                                                       reports an unknown span (404)
Langfuse   ``Langfuse.create_score`` (queued, batched) no: the SDK logs failures; ``flush()``
LangSmith  ``Client.create_feedback`` (REST)           yes (after the client's own retries)
MLflow     ``TracingClient.log_assessment`` (REST)     yes (after the client's own retries);
                                                       an unknown trace is retryable
=========  ==========================================  =====================================

:func:`write_back` writes runs audited earlier, one score per link of each agent run (:func:`link_scores`).
"""

from ariadne_lc.export.writeback._langfuse import LangfuseScoreWriter
from ariadne_lc.export.writeback._langsmith import LangSmithScoreWriter
from ariadne_lc.export.writeback._links import LinkScore, WriteBackSummary, link_scores, write_back
from ariadne_lc.export.writeback._mlflow import MLflowScoreWriter, mlflow_trace_id
from ariadne_lc.export.writeback._phoenix import PhoenixScoreWriter
from ariadne_lc.export.writeback._protocol import Score, ScoreTarget, ScoreWriter, WriteBackError

__all__ = [
    "LangSmithScoreWriter",
    "LangfuseScoreWriter",
    "LinkScore",
    "MLflowScoreWriter",
    "PhoenixScoreWriter",
    "Score",
    "ScoreTarget",
    "ScoreWriter",
    "WriteBackError",
    "WriteBackSummary",
    "link_scores",
    "mlflow_trace_id",
    "write_back",
]
