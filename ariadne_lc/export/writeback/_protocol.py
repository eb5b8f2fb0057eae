"""The write-back protocol: a :class:`ScoreWriter` puts one :class:`Score` on one :class:`ScoreTarget`.

Backends implement it in their own modules (``_phoenix``, ``_langfuse``, ``_langsmith``); see the
package docstring for what each does and how it fails.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable
from uuid import UUID

from ariadne_lc import semconv as sc
from ariadne_lc.errors import AriadneError, ConfigurationError
from ariadne_lc.links import THOUGHT_ANSWER

if TYPE_CHECKING:
    from opentelemetry.trace import SpanContext

    from ariadne_lc.records import AuditResult
    from ariadne_lc.trace import SpanRef

__all__ = ["RETRYABLE_STATUS", "Score", "ScoreTarget", "ScoreWriter", "WriteBackError", "http_status", "score_metadata"]

_TRACE_ID: Final = re.compile(r"[0-9a-f]{32}")
_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")
_ZERO_TRACE_ID: Final = "0" * 32
_ZERO_SPAN_ID: Final = "0" * 16
# Namespace of the deterministic score ids: the same (target, name, key) always maps to the same id,
# so a retried write updates the score instead of adding a duplicate.
_SCORE_ID_NAMESPACE: Final = uuid.UUID("6f1d1b36-3f7e-4c55-9b8e-5a0c2f6f4a11")
# 404 is retryable: the agent's spans are exported in batches and may not have reached the backend yet.
RETRYABLE_STATUS: Final = frozenset({404, 408, 429})


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
    def from_span_ref(cls, ref: SpanRef | None, *, run_id: UUID | None = None) -> ScoreTarget:
        """The target of a recorded trace's ``span`` (``Trace.span``).

        Raises:
            ConfigurationError: ``ref`` is ``None``: the trace was recorded with no agent span to write onto.
        """
        if ref is None:
            raise ConfigurationError(
                "the trace has no agent span (Trace.span is None): it was recorded without a span to score, so there "
                "is nothing to write back onto. Record inside your tracing (OpenInference or OpenLLMetry "
                "instrumentation, or an active span), with AriadneCallbackHandler(span_context_getter=agent_span_ref); "
                "docs/backends.md#capture-points"
            )
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
            "link": result.link,
        }
        if result.strength is not None:
            metadata["strength"] = result.strength
        if result.audit_span is not None:  # the evidence: the audit's own trace, its edit, replay and score spans
            metadata["audit_trace_id"] = result.audit_span.trace_id
            metadata["audit_span_id"] = result.audit_span.span_id
        return cls(
            name=sc.evaluation_name(result.link),
            value=result.phi,
            label=result.label,
            explanation=explanation,
            metadata=metadata,
            key=f"{result.intervention_type}/{result.step_index}"
            + ("" if result.link == THOUGHT_ANSWER.name else f"/{result.link}"),  # the link before links: no suffix
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


def score_metadata(score: Score) -> dict[str, Any]:
    return dict(score.metadata)


def http_status(exc: BaseException) -> int | None:
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
