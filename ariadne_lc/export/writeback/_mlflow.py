"""Score write-back to MLflow (see :mod:`ariadne_lc.export.writeback`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, cast

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export.writeback._protocol import RETRYABLE_STATUS, Score, ScoreTarget, WriteBackError, http_status

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.tracing.client import TracingClient

__all__ = ["KEY_METADATA", "MLflowScoreWriter", "mlflow_trace_id"]

KEY_METADATA: Final = "ariadne.key"
"""The metadata entry holding the score's :attr:`~ariadne_lc.export.Score.key`: a second write of the same score
(a retry, a write-back run again) updates the assessment that has it instead of adding another."""
_SOURCE_ID: Final = "ariadne_lc"


def mlflow_trace_id(otel_trace_id: str) -> str:
    """MLflow's id of the trace with OpenTelemetry trace id ``otel_trace_id`` (32 hex digits): ``tr-<hex>``, for
    traces MLflow ingested over OTLP and for those its own tracing (``mlflow.langchain.autolog()``) made."""
    return f"tr-{otel_trace_id}"


def _metadata(score: Score) -> dict[str, str]:
    """MLflow keeps assessment metadata as strings: JSON for anything that is not one already."""
    metadata = {k: v if isinstance(v, str) else json.dumps(v) for k, v in score.metadata.items()}
    if score.label is not None:
        metadata["label"] = score.label
    metadata[KEY_METADATA] = score.key or ""
    return metadata


class MLflowScoreWriter:
    """Feedback assessments on the evaluated span of an MLflow trace, through MLflow's tracing client.

    Each score becomes one ``Feedback`` on the agent span (``span_id``): ``name`` → the assessment's name, ``value``
    → its value (φ), ``explanation`` → its rationale, ``label`` and ``metadata`` → its metadata (as strings), source
    ``CODE``/``ariadne_lc``. A score with no value (an inconclusive audit) has its label as its value: MLflow's UI
    shows a feedback with no value as an error, and the audit did not fail, it gave no verdict (its reason is in the
    rationale). The same score written again (same name
    and key, on the same span) updates its assessment: retries never add a duplicate.

    The trace is the one with the target's OpenTelemetry trace id (:func:`mlflow_trace_id`): an agent traced into
    MLflow over OTLP (``record(..., tracer_provider=...)`` exporting to ``<tracking server>/v1/traces``, or any
    OpenTelemetry instrumentation) or by MLflow's own LangChain tracing (``mlflow.langchain.autolog()``).

    Delivery is synchronous: ``write`` returns once MLflow stored the assessment, and raises
    :class:`WriteBackError` otherwise (``retryable`` for a trace MLflow has not ingested yet, a timeout, 429 or
    5xx). MLflow's HTTP client retries by itself first (``MLFLOW_HTTP_REQUEST_MAX_RETRIES``,
    ``MLFLOW_HTTP_REQUEST_TIMEOUT``): lower them where an unreachable server must fail fast.

    Args:
        tracking_uri: The tracking server, e.g. ``http://localhost:5000``; MLflow's own default
            (``MLFLOW_TRACKING_URI``) when omitted.
        client: An ``mlflow.MlflowClient`` or a ``mlflow.tracing.client.TracingClient`` to use instead.
    """

    backend: Final = "mlflow"

    def __init__(self, tracking_uri: str | None = None, *, client: MlflowClient | TracingClient | None = None) -> None:
        if client is not None and tracking_uri is not None:
            raise ConfigurationError("pass either an MLflow client or a tracking_uri, not both")
        if client is None:
            try:
                from mlflow.tracing.client import TracingClient
            except ImportError as exc:
                raise MissingExtraError("MLflowScoreWriter", "mlflow", "It needs mlflow (3.6 or newer).") from exc
            client = TracingClient(tracking_uri)
        # an MlflowClient (what most code holds) keeps its tracing client inside
        self._client: TracingClient = cast("TracingClient", getattr(client, "_tracing_client", client))

    def _feedback(self, target: ScoreTarget, score: Score) -> Any:
        from mlflow.entities import AssessmentSource, Feedback

        return Feedback(
            name=score.name,
            value=score.value if score.value is not None else score.label,  # see the class docstring
            rationale=score.explanation,
            metadata=_metadata(score),
            span_id=target.span_id,
            source=AssessmentSource(source_type="CODE", source_id=_SOURCE_ID),
        )

    def _existing(self, trace_id: str, target: ScoreTarget, score: Score) -> str | None:
        """The id of the assessment this score was written as before on this span, if any (a trace holds the spans
        of every agent a run called: each has its own)."""
        wanted = (target.span_id, score.name, score.key or "")
        for a in self._client.get_trace_info(trace_id).assessments or ():
            if (a.span_id, a.name, (a.metadata or {}).get(KEY_METADATA)) == wanted:
                return str(a.assessment_id)
        return None

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Add the feedback, or update the one written before. Raises :class:`WriteBackError` on any failure."""
        from mlflow.exceptions import MlflowException

        trace_id = mlflow_trace_id(target.trace_id)
        try:
            feedback = self._feedback(target, score)
            existing = self._existing(trace_id, target, score)
            if existing is None:
                self._client.log_assessment(trace_id, feedback)
            else:
                self._client.update_assessment(trace_id, existing, feedback)
        except MlflowException as exc:
            code = int(exc.get_http_status_code())  # type: ignore[no-untyped-call]
            retryable = exc.error_code == "RESOURCE_DOES_NOT_EXIST" or code in RETRYABLE_STATUS or code >= 500
            raise WriteBackError(self.backend, f"{exc.error_code} for trace {trace_id}: {exc.message}",
                                 retryable=retryable) from exc  # fmt: skip
        except Exception as exc:  # MLflow wraps its HTTP failures (an unreachable server too) in MlflowException
            status = http_status(exc)
            retryable = status is not None and (status in RETRYABLE_STATUS or status >= 500)
            raise WriteBackError(self.backend, f"assessment rejected: {exc!r}", retryable=retryable) from exc
