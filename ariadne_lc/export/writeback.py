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
=========  ==========================================  =====================================
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, runtime_checkable
from uuid import UUID

from ariadne_lc import semconv as sc
from ariadne_lc.errors import AriadneError, ConfigurationError, MissingExtraError

if TYPE_CHECKING:
    import langfuse
    import langsmith
    from opentelemetry.trace import SpanContext
    from phoenix.client import Client as PhoenixClient

    from ariadne_lc.records import AuditResult
    from ariadne_lc.trace import SpanRef

__all__ = [
    "LangSmithScoreWriter",
    "LangfuseScoreWriter",
    "PhoenixScoreWriter",
    "Score",
    "ScoreTarget",
    "ScoreWriter",
    "WriteBackError",
]

_TRACE_ID: Final = re.compile(r"[0-9a-f]{32}")
_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")
_ZERO_TRACE_ID: Final = "0" * 32
_ZERO_SPAN_ID: Final = "0" * 16
# Namespace of the deterministic score ids: the same (target, name, key) always maps to the same id,
# so a retried write updates the score instead of adding a duplicate.
_SCORE_ID_NAMESPACE: Final = uuid.UUID("6f1d1b36-3f7e-4c55-9b8e-5a0c2f6f4a11")
# 404 is retryable: the agent's spans are exported in batches and may not have reached the backend yet.
_RETRYABLE_STATUS: Final = frozenset({404, 408, 429})


class WriteBackError(AriadneError):
    """A backend did not accept a score.

    Attributes:
        backend: ``"phoenix"``, ``"langfuse"`` or ``"langsmith"``.
        retryable: ``True`` when trying again later may succeed (connection failure, timeout, rate
            limit, 5xx, or a span the backend has not ingested yet); ``False`` when the request itself
            is wrong (bad credentials, invalid payload).
    """

    def __init__(self, backend: str, message: str, *, retryable: bool) -> None:
        super().__init__(f"{backend}: {message}")
        self.backend = backend
        self.retryable = retryable


@dataclass(frozen=True, slots=True)
class ScoreTarget:
    """The evaluated agent span, as OpenTelemetry ids. Validated on construction.

    Phoenix and Langfuse key their spans by these ids directly. LangSmith derives run ids from span
    ids for OTLP-ingested traces; a trace recorded by LangSmith's own LangChain tracer is keyed by the
    LangChain run id instead, so pass ``run_id`` for those.
    """

    trace_id: str
    """32 lower-case hex digits (the W3C / OTLP trace id)."""
    span_id: str
    """16 lower-case hex digits."""
    run_id: UUID | None = None
    """The LangChain run id of the agent's root run, for LangSmith's native tracer."""

    def __post_init__(self) -> None:
        if not _TRACE_ID.fullmatch(self.trace_id) or self.trace_id == _ZERO_TRACE_ID:
            raise ConfigurationError(f"trace_id must be 32 lower-case hex digits, not all zero: {self.trace_id!r}")
        if not _SPAN_ID.fullmatch(self.span_id) or self.span_id == _ZERO_SPAN_ID:
            raise ConfigurationError(f"span_id must be 16 lower-case hex digits, not all zero: {self.span_id!r}")

    @classmethod
    def from_span_context(cls, context: SpanContext, *, run_id: UUID | None = None) -> ScoreTarget:
        """The target of an OpenTelemetry span context (e.g. from ``current_agent_span_context``)."""
        return cls(format(context.trace_id, "032x"), format(context.span_id, "016x"), run_id)

    @classmethod
    def from_span_ref(cls, ref: SpanRef, *, run_id: UUID | None = None) -> ScoreTarget:
        """The target of a recorded trace's ``span`` (``Trace.span``)."""
        return cls(ref.trace_id, ref.span_id, run_id)


@dataclass(frozen=True, slots=True)
class Score:
    """One evaluation result to attach to a target. Validated on construction.

    At least one of ``value`` and ``label`` is required: an inconclusive audit has a label but no value.
    """

    name: str
    """Metric name, e.g. ``causal_faithfulness``."""
    value: float | None = None
    """The score (φ for causal faithfulness); ``None`` when the audit was inconclusive."""
    label: str | None = None
    """``faithful``, ``violation`` or ``inconclusive``."""
    explanation: str | None = None
    """Free text shown next to the score. Content: pass it only when content capture is on."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """JSON-serialisable extras (intervention type, step index, metrics). Open for new keys."""
    key: str | None = None
    """Tells apart several scores of the same name on one target (e.g. ``"logic_flip/step-2"``).
    Backends that keep one score per (span, name) overwrite each other's scores without it."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigurationError("a score needs a name")
        if self.value is None and self.label is None:
            raise ConfigurationError(f"score {self.name!r} needs a value or a label")
        if self.value is not None and not math.isfinite(self.value):
            raise ConfigurationError(f"score {self.name!r} value must be finite, got {self.value!r}")

    @classmethod
    def from_audit_result(cls, result: AuditResult, *, explanation: str | None = None) -> Score:
        """The score of one audit: φ and its label, keyed by intervention and step.

        The explanation is content (it quotes thoughts and answers), so it is not copied from the
        result: pass it (redacted as needed) only when content capture is on.
        """
        metadata: dict[str, Any] = {
            "intervention": result.intervention_type,
            "step": result.step_index,
            "violation": result.violation,
            "status": result.status,
        }
        if result.strength is not None:
            metadata["strength"] = result.strength
        return cls(
            name=sc.EVALUATION_NAME,
            value=result.phi,
            label=result.label,
            explanation=explanation,
            metadata=metadata,
            key=f"{result.intervention_type}/{result.step_index}",
        )

    def stable_id(self, target: ScoreTarget) -> UUID:
        """A UUID that is the same for the same target, name and key: makes retries idempotent."""
        return uuid.uuid5(_SCORE_ID_NAMESPACE, f"{target.trace_id}/{target.span_id}/{self.name}/{self.key or ''}")


@runtime_checkable
class ScoreWriter(Protocol):
    """Puts scores where a backend shows them natively.

    ``write`` is called from audit code (possibly an online-audit worker thread). It may block for one
    HTTP round trip; it raises only :class:`WriteBackError`.
    """

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Attach ``score`` to ``target``.

        Raises:
            WriteBackError: The backend did not take the score; ``retryable`` says whether to retry.
        """
        ...


def _metadata(score: Score) -> dict[str, Any]:
    return dict(score.metadata)


class PhoenixScoreWriter:
    """Span annotations in Arize Phoenix, through ``arize-phoenix-client``.

    Each score becomes one annotation on the agent span: ``name`` → annotation name, ``value`` → score,
    ``label``, ``explanation``, ``metadata``; ``key`` → the annotation ``identifier`` (Phoenix keeps one
    annotation per span, name and identifier, and updates it on a second write).

    ``sync=False`` (the default) queues the annotation in Phoenix: Phoenix retries attaching it for about
    ten minutes if the span has not arrived yet (the agent's spans are exported in batches, so it often
    has not), but a bad annotation is then dropped without telling us. ``sync=True`` inserts at once and
    reports an unknown span as a retryable 404.

    Args:
        client: A ``phoenix.client.Client``; built from ``base_url``/``api_key`` (or Phoenix's own
            ``PHOENIX_*`` variables) when omitted.
        base_url: Phoenix's URL, e.g. ``http://localhost:6006``.
        api_key: For Phoenix with authentication on.
        annotator_kind: ``"CODE"`` for rule-based audits, ``"LLM"`` when an LLM judge scored.
        sync: Insert synchronously (see above).

    Note:
        With the full ``arize-phoenix`` server package installed in the same environment, importing
        ``phoenix.client`` imports the whole server (several seconds). Install only
        ``arize-phoenix-client`` where the audit runs.
    """

    backend: Final = "phoenix"

    def __init__(
        self,
        client: PhoenixClient | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        annotator_kind: Literal["LLM", "CODE", "HUMAN"] = "CODE",
        sync: bool = False,
    ) -> None:
        if client is not None and (base_url is not None or api_key is not None):
            raise ConfigurationError("pass either a Phoenix client or base_url/api_key, not both")
        if client is None:
            try:
                from phoenix.client import Client
            except ImportError as exc:
                raise MissingExtraError("PhoenixScoreWriter", "phoenix", "It needs arize-phoenix-client.") from exc
            client = Client(base_url=base_url, api_key=api_key)
        self._client = client
        self._annotator_kind: Literal["LLM", "CODE", "HUMAN"] = annotator_kind
        self._sync = sync

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Add or update the annotation. Raises :class:`WriteBackError` on any failure."""
        import httpx

        try:
            self._client.spans.add_span_annotation(
                span_id=target.span_id,
                annotation_name=score.name,
                annotator_kind=self._annotator_kind,
                label=score.label,
                score=score.value,
                explanation=score.explanation,
                metadata=_metadata(score) or None,
                identifier=score.key,
                sync=self._sync,
            )
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            retryable = status in _RETRYABLE_STATUS or status >= 500
            raise WriteBackError(self.backend, f"HTTP {status} for span {target.span_id}", retryable=retryable) from exc
        except httpx.TransportError as exc:
            raise WriteBackError(self.backend, f"cannot reach Phoenix: {exc}", retryable=True) from exc
        except Exception as exc:
            raise WriteBackError(self.backend, f"annotation rejected: {exc!r}", retryable=False) from exc


class LangfuseScoreWriter:
    """Scores in Langfuse, through the Langfuse Python SDK's ``create_score``.

    Langfuse keys OTLP-ingested traces by the OpenTelemetry ids, so the target's ``trace_id`` and
    ``span_id`` are Langfuse's trace id and observation id. A numeric ``value`` becomes a ``NUMERIC``
    score (the label goes into its metadata and is prefixed to the comment); a score with only a
    label becomes a ``CATEGORICAL`` score. ``key`` makes the score id deterministic, so writing the
    same score twice updates it.

    Delivery is fire-and-forget: ``create_score`` queues the score for a background thread, which logs
    (does not raise) rejected batches. ``write`` raises :class:`WriteBackError` only if the SDK itself
    raises. Call :meth:`flush` before the process exits.

    Only tested against a local stand-in for the ingestion endpoint, not a real Langfuse server.

    Args:
        client: A ``langfuse.Langfuse``. When omitted one is built from the arguments or the
            ``LANGFUSE_*`` variables, with a private tracer provider, because a Langfuse client built
            without one installs itself as the *global* tracer provider.
        public_key, secret_key, base_url: Passed to ``Langfuse`` when ``client`` is omitted.
        environment: Langfuse environment of the scores.
    """

    backend: Final = "langfuse"

    def __init__(
        self,
        client: langfuse.Langfuse | None = None,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        environment: str | None = None,
    ) -> None:
        if client is not None and (public_key or secret_key or base_url):
            raise ConfigurationError("pass either a Langfuse client or its keys/base_url, not both")
        if client is None:
            try:
                from langfuse import Langfuse
                from opentelemetry.sdk.trace import TracerProvider
            except ImportError as exc:
                raise MissingExtraError("LangfuseScoreWriter", "langfuse", "It needs the langfuse package.") from exc
            client = Langfuse(
                public_key=public_key,
                secret_key=secret_key,
                base_url=base_url,
                tracer_provider=TracerProvider(shutdown_on_exit=False),
            )
        self._client = client
        self._environment = environment

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Queue the score. Raises :class:`WriteBackError` only if the SDK raises synchronously."""
        metadata = _metadata(score)
        score_id = score.stable_id(target).hex if score.key is not None else None
        try:
            if score.value is not None:
                if score.label is not None:
                    metadata["label"] = score.label
                comment = score.explanation
                if score.label is not None:
                    comment = f"{score.label}: {comment}" if comment else score.label
                self._client.create_score(
                    name=score.name,
                    value=float(score.value),
                    data_type="NUMERIC",
                    trace_id=target.trace_id,
                    observation_id=target.span_id,
                    score_id=score_id,
                    comment=comment,
                    metadata=metadata or None,
                    environment=self._environment,
                )
            else:
                assert score.label is not None  # Score guarantees a value or a label
                self._client.create_score(
                    name=score.name,
                    value=score.label,
                    data_type="CATEGORICAL",
                    trace_id=target.trace_id,
                    observation_id=target.span_id,
                    score_id=score_id,
                    comment=score.explanation,
                    metadata=metadata or None,
                    environment=self._environment,
                )
        except Exception as exc:
            raise WriteBackError(self.backend, f"score not queued: {exc!r}", retryable=False) from exc

    def flush(self) -> None:
        """Block until queued scores have been sent (or their failure logged by the SDK)."""
        self._client.flush()


class LangSmithScoreWriter:
    """Feedback in LangSmith, through ``langsmith.Client.create_feedback``.

    The run is ``target.run_id`` when set (traces from LangSmith's own LangChain tracer), otherwise the
    run id LangSmith derives from the span id when it ingests OTLP
    (``langsmith.integrations.otel.langsmith_run_id_from_otel_span_id``). ``value`` → feedback score,
    ``label`` → feedback value, ``explanation`` → comment, ``metadata`` → ``extra``; ``key`` makes the
    feedback id deterministic.

    LangSmith deprecates run feedback without the project (session) id and warns on every call without
    it, so pass ``project_id``. The request is synchronous; the client retries it up to
    ``stop_after_attempt`` times before :class:`WriteBackError` is raised.

    Only tested against a local stand-in for the LangSmith API, not a real LangSmith server.

    Args:
        client: A ``langsmith.Client``; one is built from the ``LANGSMITH_*`` variables when omitted.
        project_id: The tracing project's id (``client.read_project(project_name=...).id``).
        stop_after_attempt: Attempts per write, including the first.
    """

    backend: Final = "langsmith"

    def __init__(
        self,
        client: langsmith.Client | None = None,
        *,
        project_id: UUID | str | None = None,
        stop_after_attempt: int = 3,
    ) -> None:
        if stop_after_attempt < 1:
            raise ConfigurationError(f"stop_after_attempt must be at least 1, got {stop_after_attempt}")
        if client is None:
            try:
                import langsmith as _langsmith
            except ImportError as exc:  # pragma: no cover - langsmith comes with langchain-core
                raise MissingExtraError("LangSmithScoreWriter", "langsmith", "It needs the langsmith package.") from exc
            client = _langsmith.Client()
        self._client = client
        self._project_id = project_id
        self._stop_after_attempt = stop_after_attempt

    def write(self, target: ScoreTarget, score: Score) -> None:
        """Create the feedback. Raises :class:`WriteBackError` on any failure."""
        from langsmith import utils as ls_utils
        from langsmith.integrations.otel import langsmith_run_id_from_otel_span_id

        run_id = target.run_id or langsmith_run_id_from_otel_span_id(int(target.span_id, 16))
        try:
            self._client.create_feedback(
                run_id=run_id,
                key=score.name,
                score=score.value,
                value=score.label,
                comment=score.explanation,
                extra=_metadata(score) or None,
                feedback_id=score.stable_id(target) if score.key is not None else None,
                session_id=self._project_id,
                stop_after_attempt=self._stop_after_attempt,
            )
        except (ls_utils.LangSmithConnectionError, ls_utils.LangSmithRequestTimeout) as exc:
            raise WriteBackError(self.backend, f"cannot reach LangSmith: {exc}", retryable=True) from exc
        except Exception as exc:
            status = _http_status(exc)
            retryable = status is not None and (status in _RETRYABLE_STATUS or status >= 500)
            raise WriteBackError(self.backend, f"feedback not created: {exc}", retryable=retryable) from exc


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status behind a client exception: its own ``response`` or the one it was raised from.

    langsmith maps only some statuses to exception classes (502/503 become a plain ``LangSmithError``)
    but raises them inside the handler of the ``requests.HTTPError``, which stays as ``__context__``.
    """
    for candidate in (exc, exc.__cause__, exc.__context__):
        response = getattr(candidate, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status
    return None
