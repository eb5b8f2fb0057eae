"""Sinks: where each finished audit record goes (span, result store, score write-back, a job store).

The auditor builds a record with a pure function and then hands it, with the trace it audits and the
still-open audit span, to every sink in its list, in order. A sink is anything with an
``accept(finished)`` method (:class:`AuditSink`). Three ship, one per convenience argument of the
:class:`~ariadne_lc.Auditor`: :class:`SpanSink` (always first), :class:`ResultStoreSink`
(``result_store=``), :class:`ScoreWriteBackSink` (``score_writers=``); the caller's ``sinks=`` follow.
A caller that persists results itself (the online worker commits them with its job's state) runs audits
with another list: ``auditor.with_sinks([s for s in auditor.sinks if not isinstance(s, ResultStoreSink)])``.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from opentelemetry.trace import Span

from ariadne_lc.export.writeback import Score, ScoreTarget, ScoreWriter
from ariadne_lc.export.writeback._rationale import audit_rationale
from ariadne_lc.otel import AuditSpans
from ariadne_lc.records import AuditResult
from ariadne_lc.store import ResultStore
from ariadne_lc.trace import Trace

__all__ = ["AuditSink", "FinishedAudit", "ResultStoreSink", "ScoreWriteBackSink", "SpanSink", "dispatch"]

logger = logging.getLogger("ariadne_lc.audit")


@dataclass(frozen=True, slots=True)
class FinishedAudit:
    """What a sink receives: one finished record and its context."""

    result: AuditResult
    """The record (immutable)."""
    trace: Trace
    """The audited trace (its span reference, run id and metadata, for sinks that need them)."""
    span: Span | None
    """The audit span, still open; ``None`` for a trace that could not be audited at all (no audit ran)."""


@runtime_checkable
class AuditSink(Protocol):
    """Receives every finished audit record.

    ``accept`` is called on the thread (or event-loop task) that ran the audit, once per record, for
    records of audits (``finished.span`` set) and of traces that could not be audited (``span`` is
    ``None``). It should not raise: the auditor logs an exception from a sink and goes on to the next
    sink, so one failing sink loses neither the record nor the other sinks' work. A sink used by
    :meth:`~ariadne_lc.Auditor.audit_batch` is called from several threads at once and must be
    thread-safe.
    """

    def accept(self, finished: FinishedAudit) -> None:
        """Take one finished record."""


def dispatch(sinks: Iterable[AuditSink], finished: FinishedAudit) -> None:
    """Hand ``finished`` to each sink in order; an exception of one is logged, never raised."""
    for sink in sinks:
        try:
            sink.accept(finished)
        except Exception:
            logger.exception("ariadne: sink %s failed on result %s", type(sink).__name__, finished.result.result_id)


class SpanSink:
    """Puts the result on its audit span: the score, the verdict, content when capture is on.

    Args:
        spans: The auditor's span factory (its content capture and redaction apply).
    """

    def __init__(self, spans: AuditSpans) -> None:
        self.spans = spans

    def accept(self, finished: FinishedAudit) -> None:
        if finished.span is not None:
            self.spans.finish(finished.span, finished.result, finished.trace.span)


class ResultStoreSink:
    """Puts each result in a :class:`~ariadne_lc.store.ResultStore` as soon as it exists.

    A store error propagates to the auditor, which logs it; the audit itself is not failed.
    """

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    def accept(self, finished: FinishedAudit) -> None:
        self.store.put_result(finished.result)


def _run_id(trace_id: str) -> uuid.UUID | None:
    """The LangChain run id a trace was recorded under (LangSmith feedback keys on it)."""
    try:
        return uuid.UUID(trace_id)
    except ValueError:
        return None


class ScoreWriteBackSink:
    """Writes each contradiction's score back onto the recorded agent span, with every writer.

    Skips controls, failed audits, traces with no step to audit and traces recorded without a span. A
    failed write is logged and counted in :attr:`errors` (safe to read and update from the threads of a
    batch); it never fails the audit.

    Args:
        writers: The backends' score writers (e.g. :class:`~ariadne_lc.export.PhoenixScoreWriter`).
        spans: Decides what of the explanation may leave the process (content capture and redaction).
    """

    def __init__(self, writers: Sequence[ScoreWriter], spans: AuditSpans) -> None:
        self.writers = tuple(writers)
        self.spans = spans
        self._errors = 0
        self._lock = threading.Lock()

    @property
    def errors(self) -> int:
        """Writes that failed so far."""
        with self._lock:
            return self._errors

    def accept(self, finished: FinishedAudit) -> None:
        result, trace = finished.result, finished.trace
        if not self.writers or trace.span is None or result.control or result.status == "failed":
            return
        if result.nothing_to_audit:
            return
        target = ScoreTarget.from_span_ref(trace.span, run_id=_run_id(trace.trace_id))
        # what was changed and what moved, in words; thoughts and answers quoted only under content capture
        quoted = self.spans.content(audit_rationale(result, quote=True))
        score = Score.from_audit_result(result, explanation=quoted or audit_rationale(result, quote=False))
        for writer in self.writers:
            try:
                writer.write(target, score)
            except Exception as exc:  # WriteBackError, or a writer's own bug: never fail the audit
                with self._lock:
                    self._errors += 1
                logger.warning("ariadne: score write-back with %s failed: %s", type(writer).__name__, exc)
