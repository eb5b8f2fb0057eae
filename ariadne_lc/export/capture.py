"""Find the span context of the agent run being recorded, so audit spans can link to it later.

Two instrumentations are common for LangGraph, and they expose the agent's span differently:

* **OpenInference** (``openinference-instrumentation-langchain``, Arize Phoenix) keeps a span per
  LangChain run and never attaches it to the OpenTelemetry context, so ``trace.get_current_span()``
  sees nothing; ``LangChainInstrumentor().get_span(run_id)`` returns it.
* **OpenLLMetry** (``opentelemetry-instrumentation-langchain``, Traceloop) opens an
  ``invoke_agent <graph>`` span around ``Pregel.stream`` and attaches its spans to the context, so
  ``trace.get_current_span()`` works inside callbacks.

When each is available to a callback handler of the root run (``parent_run_id is None``), measured on
langchain-core 1.7, langgraph 1.2, openinference-instrumentation-langchain 0.1.80 and
opentelemetry-instrumentation-langchain 0.62 with the handler passed in ``config["callbacks"]``
(handlers given there run before the instrumentation's own handler, which is appended after them):

==============  =========================================  ==============================================
call point      OpenInference                              OpenLLMetry
==============  =========================================  ==============================================
on_chain_start  nothing yet (its span starts after us)     the trace's root span ``invoke_agent <graph>``
                                                           (``invoke``/``stream``, or any mode when the
                                                           handler has ``run_inline = True``); the root
                                                           run's ``<graph>.workflow`` span (its child)
                                                           for a non-inline handler under ``ainvoke``
on_chain_end    the root run's span, the trace's root      ``<graph>.workflow`` (sync) or a *descendant*
                (sync and async)                           left attached by the async tracer: do not use
==============  =========================================  ==============================================

So: call :func:`current_agent_span_context` at the root run's ``on_chain_start``; if it returns
``None``, call it again at the root run's ``on_chain_end`` with ``use_current_context=False`` and keep
the first non-``None`` answer. :func:`agent_span_ref` is the same lookup in the shape the recorder
stores (``AriadneCallbackHandler(span_context_getter=agent_span_ref)``). Under ``ainvoke`` make the
handler ``run_inline = True``: inline handlers run first and in order, so the instrumentation's
``on_chain_end`` cannot pop the span before we read it (non-inline sync handlers run concurrently in an
executor).

MLflow's own LangChain tracing (``mlflow.langchain.autolog()``, MLflow 3.17) adds its handler after the caller's: at
a run's start it has not opened the run's span yet, at the run's end it has not closed it, so the end asks MLflow for
its active span (sync runs; under ``ainvoke`` MLflow's context does not reach the handler).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING
from uuid import UUID

from opentelemetry import trace
from opentelemetry.trace import SpanContext

if TYPE_CHECKING:
    from ariadne_lc.trace import SpanRef

__all__ = ["agent_span_ref", "current_agent_span_context"]

_logger = logging.getLogger(__name__)
_OPENINFERENCE_MODULE = "openinference.instrumentation.langchain"
_MLFLOW_MODULE = "mlflow.langchain"


def current_agent_span_context(run_id: UUID, *, use_current_context: bool = True) -> SpanContext | None:
    """The span context of LangChain run ``run_id`` if an instrumentation traced it, else ``None``.

    Tries, in order: OpenInference's span for ``run_id``; then the span attached to the current OpenTelemetry
    context, which is where OpenLLMetry puts it, or, with ``use_current_context`` false (at the run's end), the span
    MLflow's LangChain tracing has open for the run (:func:`_mlflow_span_context`). Only
    valid contexts are returned. Safe to call from any callback on any thread: it never raises and
    never imports an instrumentation that the application has not imported itself.

    Args:
        run_id: The LangChain run id (the ``run_id`` argument of the callback).
        use_current_context: Consult ``trace.get_current_span()``. Turn it off at ``on_chain_end``,
            where an async tracer may have left a descendant span attached (MLflow's span is read there instead).

    Examples:
        >>> from uuid import uuid4
        >>> current_agent_span_context(uuid4()) is None   # nothing is instrumented here
        True
    """
    try:
        context = _openinference_span_context(run_id)
        if context is not None:
            return context
        if not use_current_context:
            return _mlflow_span_context()
        current = trace.get_current_span().get_span_context()
        if current.is_valid:
            return current
    except Exception:  # a callback must never raise into the user's agent
        _logger.debug("could not read the agent span context of run %s", run_id, exc_info=True)
    return None


def agent_span_ref(run_id: UUID) -> SpanRef | None:
    """:func:`current_agent_span_context` as the :class:`~ariadne_lc.trace.SpanRef` a recorded trace keeps.

    Meant as the recorder's ``span_context_getter``: it asks at the root run's start and, when that
    found nothing (OpenInference), again at its end. Never raises.
    """
    context = current_agent_span_context(run_id)
    if context is None:
        return None
    try:
        from ariadne_lc.trace import SpanRef

        return SpanRef(
            trace_id=trace.format_trace_id(context.trace_id),
            span_id=trace.format_span_id(context.span_id),
            trace_flags=int(context.trace_flags),
        )
    except Exception:
        _logger.debug("could not convert the span context of run %s", run_id, exc_info=True)
        return None


def _openinference_span_context(run_id: UUID) -> SpanContext | None:
    module = sys.modules.get(_OPENINFERENCE_MODULE)
    if module is None:  # not imported, so not instrumented: do not pay for the import
        return None
    instrumentor = module.LangChainInstrumentor()  # a singleton (BaseInstrumentor.__new__)
    if not instrumentor.is_instrumented_by_opentelemetry:
        return None  # get_span would log an error about a missing tracer
    span = instrumentor.get_span(run_id)
    if span is None:
        return None
    context = span.get_span_context()
    return context if context.is_valid else None


def _mlflow_span_context() -> SpanContext | None:
    """The span MLflow's own LangChain tracing (``mlflow.langchain.autolog()``) has open for the run that is ending.

    MLflow's handler is added after the caller's, so at a run's end ours runs first and MLflow's span of that run is
    still its active span; at a run's start MLflow has not opened it yet (its active span is the parent's), so this
    is asked at the end only. Under ``ainvoke`` MLflow's context does not reach the handler and nothing is found.
    """
    if _MLFLOW_MODULE not in sys.modules:  # MLflow's LangChain tracing is not on: do not pay for the import
        return None
    import mlflow

    span = mlflow.get_current_active_span()
    if span is None or not str(span.trace_id).startswith("tr-"):
        return None
    context = SpanContext(
        trace_id=int(str(span.trace_id)[3:], 16),
        span_id=int(str(span.span_id), 16),
        is_remote=False,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    return context if context.is_valid else None
