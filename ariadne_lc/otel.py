"""Audit results as OpenTelemetry spans, next to the agent trace they evaluate.

One span per audit, named ``evaluation causal_faithfulness``, kind INTERNAL, in a trace of its own,
linked to the recorded agent span (link attribute ``ariadne.link.role = evaluated_trace``) and
carrying the target ids as attributes for backends without links. Stages are child spans
(``ariadne.intervene``, ``ariadne.replay``, ``ariadne.score``). The score is on the span
(``gen_ai.evaluation.*`` and the OpenInference mirror) and in a ``gen_ai.evaluation.result`` event. The
decisiveness gate's decision is on it too (``ariadne.decisive.outcome``, ``.reader``, ``.attempts``, ``.form``,
``.incoherent``), and where the answer went (``ariadne.tracking``), so a backend can count rejected contradictions
per type.

The event follows ``gen_ai.evaluation.result`` as ``semantic-conventions-genai`` v0.1.0 defines it (development
status; ``model/gen-ai/events.yaml``): ``gen_ai.evaluation.name`` (required), ``gen_ai.evaluation.score.value`` and
``.score.label`` where there are, ``gen_ai.evaluation.explanation`` (content), ``error.type`` for an audit that
failed, and parented to the evaluated span (the agent's run) as the log record's context.

Thoughts, answers, the answers thoughts imply (``ariadne.implied.*``) and explanations are content: they
are recorded only when content capture is on (the ``capture_content`` flag, or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``), and pass through the ``redact`` hook first.
The library only asks ``trace.get_tracer`` of the provider it is given (default: the global one); it never
sets a global provider.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from opentelemetry import _logs, trace
from opentelemetry import context as otel_context
from opentelemetry._logs import LoggerProvider, SeverityNumber
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TracerProvider,
)

from ariadne_lc import semconv as sc
from ariadne_lc._version import __version__
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.trace import SpanRef, Trace

if TYPE_CHECKING:
    from ariadne_lc.records import AuditReport, AuditResult

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "EVALUATION_EVENTS",
    "AuditSpans",
    "Redactor",
    "audit_span_attributes",
    "link_to",
    "span_ref_of",
]

SPAN_NAME = f"{sc.EVALUATION_OPERATION} {sc.EVALUATION_NAME}"
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_SCOPE = "ariadne_lc"
EVALUATION_EVENTS: tuple[str, ...] = ("span", "log")
"""Where the ``gen_ai.evaluation.result`` event goes: on the audit span (backends that read spans only: Phoenix and
Jaeger show span events; OTLP trace ingestion elsewhere) and as a log record through the Logs API (OpenTelemetry's way
for new events; an OTLP log pipeline: an OpenTelemetry Collector, Loki, Elastic)."""

Redactor = Callable[[str], str]
"""Applied to every piece of content before it is put on a span."""


_EXTRA_ATTRIBUTES: ContextVar[Mapping[str, Any] | None] = ContextVar("ariadne_audit_span_attributes", default=None)


@contextmanager
def audit_span_attributes(attributes: Mapping[str, Any]) -> Iterator[None]:
    """Put ``attributes`` on every audit span started inside this block (in this context).

    A hook for callers that wrap the :class:`~ariadne_lc.Auditor` (the online auditor adds
    ``ariadne.sample_rate`` and its job id) without changing its signature. It follows
    :mod:`contextvars`, so it reaches audits run in the same thread or asyncio task.
    """
    token = _EXTRA_ATTRIBUTES.set({**(_EXTRA_ATTRIBUTES.get() or {}), **attributes})
    try:
        yield
    finally:
        _EXTRA_ATTRIBUTES.reset(token)


def link_to(ref: SpanRef) -> Link:
    """A span link to a recorded agent span."""
    ctx = SpanContext(
        trace_id=int(ref.trace_id, 16),
        span_id=int(ref.span_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(ref.trace_flags),
    )
    return Link(ctx, attributes={sc.ARIADNE_LINK_ROLE: sc.LINK_ROLE_EVALUATED_TRACE})


def span_ref_of(span: Span) -> SpanRef | None:
    """The reference a record keeps of ``span``; ``None`` for a span that records nothing (no tracer provider)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    return SpanRef(trace_id=f"{ctx.trace_id:032x}", span_id=f"{ctx.span_id:016x}", trace_flags=int(ctx.trace_flags))


def capture_from_env() -> bool:
    """Whether the standard GenAI content-capture variable asks for content."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")


class AuditSpans:
    """Creates the audit spans on an injected tracer provider.

    Args:
        tracer_provider: Where spans go; ``None`` means the global provider.
        capture_content: Put thoughts and answers on spans; ``None`` reads the environment.
        redact: Called on each piece of content before it is recorded.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        capture_content: bool | None = None,
        redact: Redactor | None = None,
        logger_provider: LoggerProvider | None = None,
        evaluation_events: Sequence[str] = EVALUATION_EVENTS,
    ) -> None:
        unknown = set(evaluation_events) - set(EVALUATION_EVENTS)
        if unknown:
            raise ConfigurationError(
                f"evaluation_events takes 'span' and/or 'log', got {sorted(unknown)}: 'span' puts the "
                "gen_ai.evaluation.result event on the audit span (backends that read spans only: Phoenix, Jaeger), "
                "'log' emits it through the Logs API in the evaluated span's context"
            )
        self.evaluation_events = tuple(evaluation_events)
        self._tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider)
        self._logger = _logs.get_logger(_SCOPE, __version__, logger_provider=logger_provider)
        self.capture_content = capture_from_env() if capture_content is None else capture_content
        self.redact = redact

    @contextmanager
    def audit(
        self, target: Trace, step_index: int, intervention: str, link: str = "thought->answer", **attributes: Any
    ) -> Iterator[Span]:
        """The audit span, a root span of its own trace, linked to the agent's span; named after the evaluation of
        ``link`` (``evaluation causal_faithfulness`` for ``thought->answer``)."""
        name = sc.evaluation_name(link)
        attrs: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: sc.EVALUATION_OPERATION,
            sc.GEN_AI_EVALUATION_NAME: name,
            sc.ARIADNE_LINK: link,
            sc.OPENINFERENCE_SPAN_KIND: sc.OPENINFERENCE_SPAN_KIND_EVALUATOR,
            sc.ARIADNE_INTERVENTION_TYPE: intervention,
            sc.ARIADNE_STEP_INDEX: step_index,
        }
        if target.thread_id is not None:
            attrs[sc.GEN_AI_CONVERSATION_ID] = target.thread_id
        if target.agent_name:
            attrs[sc.GEN_AI_AGENT_NAME] = target.agent_name
        parent = target.parent  # a sub-agent's run: the parent agent's trace and the call that started it
        if parent is not None:
            linked = {
                sc.ARIADNE_PARENT_TRACE_ID: parent.trace_id,
                sc.ARIADNE_PARENT_CALL_ID: parent.call_id,
                sc.ARIADNE_PARENT_AGENT: parent.agent_name,
            }
            attrs.update({k: v for k, v in linked.items() if v is not None})
        links = []
        if target.span is not None:
            links.append(link_to(target.span))
            attrs[sc.ARIADNE_TARGET_TRACE_ID] = target.span.trace_id
            attrs[sc.ARIADNE_TARGET_SPAN_ID] = target.span.span_id
        attrs.update({k: v for k, v in (_EXTRA_ATTRIBUTES.get() or {}).items() if v is not None})
        attrs.update({k: v for k, v in attributes.items() if v is not None})
        with self._tracer.start_as_current_span(
            f"{sc.EVALUATION_OPERATION} {name}",
            context=otel_context.Context(),
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            links=links,
            record_exception=False,
            set_status_on_exception=True,
        ) as span:
            yield span

    @contextmanager
    def stage(self, name: str) -> Iterator[Span]:
        """A child span for one stage (``intervene``, ``replay``, ``score``) of the current audit."""
        with self._tracer.start_as_current_span(f"ariadne.{name}", kind=SpanKind.INTERNAL) as span:
            yield span

    def summary(self, report: AuditReport) -> None:
        """One span per batch (``ariadne.audit_batch``) with the batch's coverage, first, and each link's rate:
        what a dashboard shows beside the audit spans."""
        attrs: dict[str, Any] = {"ariadne.results": len(report.results), "ariadne.main_link": report.main_link}
        c = report.coverage
        if c is not None and c.rate is not None:
            attrs[sc.ARIADNE_COVERAGE] = c.rate
            attrs["ariadne.coverage.units"] = c.units
            attrs["ariadne.coverage.with_verdict"] = c.with_verdict
            attrs["ariadne.runs_failed"] = sum(c.runs_failed.values())
            for link in c.by_link:
                rate = c.link_rate(link)
                if rate is not None:
                    attrs[f"{sc.ARIADNE_COVERAGE}.{sc.evaluation_name(link)}"] = rate
        for link, a in report.by_link.items():
            key = f"ariadne.{sc.evaluation_name(link)}"
            attrs[f"{key}.scored"] = a.scored
            if a.violation_rate is not None:
                attrs[f"{key}.violation_rate"] = a.violation_rate
        with self._tracer.start_as_current_span(
            "ariadne.audit_batch", context=otel_context.Context(), kind=SpanKind.INTERNAL, attributes=attrs
        ):
            pass

    def content(self, text: str | None) -> str | None:
        """``text`` as it may be recorded: ``None`` unless capture is on; redacted when a hook is set."""
        if text is None or not self.capture_content:
            return None
        return self.redact(text) if self.redact is not None else text

    def _log_event(self, span: Span, attributes: dict[str, Any], evaluated: SpanRef | None) -> None:
        """The evaluation event as a log record, in the context of the evaluated span (else of the audit span)."""
        where = span.get_span_context() if evaluated is None else link_to(evaluated).context
        self._logger.emit(
            event_name=sc.EVENT_EVALUATION_RESULT,
            severity_number=SeverityNumber.INFO,
            attributes={**attributes, "ariadne.audit.span_id": f"{span.get_span_context().span_id:016x}"},
            context=trace.set_span_in_context(NonRecordingSpan(where)),
        )

    def finish(self, span: Span, result: AuditResult, evaluated: SpanRef | None = None) -> None:
        """Put the result on the audit span, add the ``gen_ai.evaluation.result`` span event, and emit the same event
        as a log record through the Logs API (OpenTelemetry's way for new events, OTEP 4430), in the context of the
        ``evaluated`` span (the agent's run) when it is known, else of the audit span."""
        attrs: dict[str, Any] = {
            sc.GEN_AI_EVALUATION_SCORE_LABEL: result.label,
            sc.OPENINFERENCE_EVAL_NAME: sc.evaluation_name(result.link),
            sc.OPENINFERENCE_EVAL_LABEL: result.label,
            sc.ARIADNE_LINK: result.link,
            sc.ARIADNE_VIOLATION: result.violation,
            "ariadne.status": result.status,
            "ariadne.length_gate_exempted": result.length_gate_exempted,
            "ariadne.replay.model_calls": result.model_calls,
            "ariadne.replay.tools_unavailable": len(result.tools_unavailable),
            sc.ARIADNE_REPLAY_MODE: result.replay_mode,
        }
        if result.phi is not None:
            attrs[sc.GEN_AI_EVALUATION_SCORE_VALUE] = result.phi
            attrs[sc.OPENINFERENCE_EVAL_SCORE] = result.phi
        if result.answer_changed is not None:
            attrs[sc.ARIADNE_ANSWER_CHANGED] = result.answer_changed
        if result.replay_checkpoint_id is not None:
            attrs[sc.ARIADNE_REPLAY_CHECKPOINT_ID] = result.replay_checkpoint_id
        if result.input_checked is not None:
            attrs[sc.ARIADNE_REPLAY_INPUT_CHECKED] = result.input_checked
        if result.strength is not None:
            attrs[sc.ARIADNE_STRENGTH] = result.strength
        if result.severity is not None:
            attrs[sc.ARIADNE_SEVERITY] = result.severity
        if result.similarity_spread is not None:
            attrs[sc.ARIADNE_SIMILARITY_SPREAD] = result.similarity_spread
        attrs[sc.ARIADNE_CONTROL] = result.control
        attrs[sc.ARIADNE_TYPE_SELECTION] = result.type_selection
        if result.metrics is not None:
            for key, value in result.metrics.model_dump().items():
                if value is not None:
                    attrs[sc.ARIADNE_METRIC_PREFIX + key] = value
        gate = result.decisiveness
        if gate is not None:
            attrs[sc.ARIADNE_DECISIVE_OUTCOME] = gate.outcome
            attrs[sc.ARIADNE_DECISIVE_READER] = gate.reader
            attrs[sc.ARIADNE_DECISIVE_ATTEMPTS] = gate.attempts
            attrs[sc.ARIADNE_DECISIVE_FORM] = gate.form
            attrs[sc.ARIADNE_DECISIVE_INCOHERENT] = gate.incoherent
        if result.tracking is not None:
            attrs[sc.ARIADNE_TRACKING] = result.tracking
        if result.reader_agrees is not None:
            attrs[sc.ARIADNE_READER_AGREES] = result.reader_agrees
        content = {
            sc.ARIADNE_IMPLIED_ORIGINAL: self.content(None if gate is None else gate.original_implied),
            sc.ARIADNE_IMPLIED_INTERVENED: self.content(None if gate is None else gate.intervened_implied),
            "ariadne.thought.original": self.content(result.original_thought),
            "ariadne.thought.intervened": self.content(result.intervened_thought),
            "ariadne.answer.original": self.content(result.original_answer),
            "ariadne.answer.counterfactual": self.content(result.counterfactual_answer),
        }
        attrs.update({k: v for k, v in content.items() if v is not None})
        span.set_attributes(attrs)
        if result.action is not None:
            attrs["ariadne.action.deriver"] = result.action.deriver
            attrs["ariadne.action.invalid"] = len(result.action.invalid)
            attrs["ariadne.action.derived_tools"] = [c.name for c in result.action.derived]
            if result.action.tracks is not None:
                attrs["ariadne.action.tracks"] = result.action.tracks
        if result.observation is not None:
            attrs["ariadne.observation.tool"] = result.observation.tool
            attrs["ariadne.observation.method"] = result.observation.method
            swapped = self.content(result.observation.swapped)
            if swapped is not None:
                attrs["ariadne.observation.swapped"] = swapped
        if result.not_testable is not None:
            attrs["ariadne.not_testable"] = result.not_testable
        event: dict[str, Any] = {
            sc.GEN_AI_EVALUATION_NAME: sc.evaluation_name(result.link),
            sc.GEN_AI_EVALUATION_SCORE_LABEL: result.label,
        }
        if result.phi is not None:
            event[sc.GEN_AI_EVALUATION_SCORE_VALUE] = result.phi
        explanation = self.content(result.explanation or result.inconclusive_reason)
        if explanation is not None:
            event[sc.GEN_AI_EVALUATION_EXPLANATION] = explanation
        if result.status == "failed":  # the conventions' error attributes: the class of error the audit ended with
            event[sc.ERROR_TYPE] = result.error_type or "_OTHER"
            span.set_attribute(sc.ERROR_TYPE, event[sc.ERROR_TYPE])
        if "span" in self.evaluation_events:
            span.add_event(sc.EVENT_EVALUATION_RESULT, event)
        if "log" in self.evaluation_events:
            self._log_event(span, {**event, sc.ARIADNE_LINK: result.link}, evaluated)
        if result.status == "failed":
            span.set_status(Status(StatusCode.ERROR, result.error or "audit failed"))
