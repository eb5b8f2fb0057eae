"""The agent's-thread half of the callback handler: a root run's start, its resume, its end.

:class:`RootRuns` is a base of :class:`~ariadne_lc.recorder.AriadneCallbackHandler` (its hooks call these methods,
guarded). A root run's start ignores the auditor's own replays, asks ``sample``, and is tracked under the
``max_runs_in_flight`` cap (beyond it: dropped, counted, warned once). A resume of a run paused in this handler's
memory continues that run; one paused elsewhere is recorded and joined when it is delivered
(:class:`~ariadne_lc.recorder._deliver.TraceDelivery`). A root run's end forgets its descendants, records the
interrupts it stopped at, keeps a paused run for its resume (handlers without a store, bounded), and hands a
:class:`~ariadne_lc.recorder.FinishedRun` to ``on_run_end`` and to the builder: no I/O happens here.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from uuid import UUID

from langgraph.errors import GraphInterrupt
from langgraph.types import Command
from opentelemetry import trace

from ariadne_lc.export.capture import current_agent_span_context
from ariadne_lc.recorder._background import Builder
from ariadne_lc.recorder._build import build_trace
from ariadne_lc.recorder._deliver import TraceDelivery, logger
from ariadne_lc.recorder._nested import AGENT_NAME_KEY, DEFAULT_GRAPH_NAME, Caller, root_metadata
from ariadne_lc.recorder._run import FinishedRun, _Run, new_interrupts, record_answers
from ariadne_lc.recorder._spans import AgentSpans, span_ref
from ariadne_lc.semconv import (
    ARIADNE_PARENT_AGENT,
    ARIADNE_PARENT_CALL_ID,
    ARIADNE_PARENT_TRACE_ID,
    ARIADNE_REPLAY,
    GEN_AI_AGENT_NAME,
)
from ariadne_lc.trace import GraphFingerprint, SpanRef

__all__ = ["RootRuns", "RunSampler", "SpanContextGetter", "span_at_end"]

SpanContextGetter = Callable[[UUID], SpanRef | None]
"""Returns the agent's span context for a root run id, or ``None``."""

RunSampler = Callable[[str, str | None, tuple[str, ...], Mapping[str, Any]], bool]
"""Decides at a root run's start whether to record it, from (trace id, agent name, tags, metadata)."""


def _no_fingerprint() -> GraphFingerprint | None:
    """A sub-agent's trace carries no fingerprint: its graph is not the one the handler knows."""
    return None


def span_at_end(run_id: UUID) -> SpanRef | None:
    """At the root run's end only OpenInference's per-run span is trustworthy: an async OpenLLMetry
    tracer may have left a descendant span attached to the current context (see export.capture)."""
    context = current_agent_span_context(run_id, use_current_context=False)
    if context is None:
        return None
    return SpanRef(
        trace_id=trace.format_trace_id(context.trace_id),
        span_id=trace.format_span_id(context.span_id),
        trace_flags=int(context.trace_flags),
    )


class RootRuns(TraceDelivery):
    """Starts, resumes and ends root runs; the handler sets the attributes declared here."""

    sample: RunSampler | None
    on_run_end: Callable[[FinishedRun], None] | None
    max_runs_in_flight: int
    max_paused_runs: int
    _span_at_start: SpanContextGetter
    _span_at_end: SpanContextGetter
    _runs: dict[int, _Run]
    _root_of: dict[int, _Run]
    _paused: OrderedDict[str, _Run]
    _tool_calls: dict[int, tuple[Any, Caller, _Run]]
    _builder: Builder
    _agent_spans: AgentSpans | None

    def _start_root(
        self, inputs: Any, run_id: UUID, tags: list[str] | None, metadata: dict[str, Any], name: str | None
    ) -> None:
        if metadata.get(ARIADNE_REPLAY):
            self.stats.ignored += 1
            return
        thread = metadata.get("thread_id")
        thread_id = None if thread is None else str(thread)
        resume = inputs.resume if isinstance(inputs, Command) else None
        if thread_id is not None and self._paused:  # only handlers without a store keep paused runs
            with self._lock:
                paused = self._paused.pop(thread_id, None)
            if paused is not None and resume is not None:
                self._resume(paused, resume, run_id)
                return
            # A new turn on a thread whose interrupt was never answered: that turn stays unfinished.
        agent_name = metadata.get(GEN_AI_AGENT_NAME) or name
        # A resume joined through the store follows the sampling of its paused half (its trace id decided it,
        # maybe on another replica): recorded here, kept at delivery only if that half is in the store.
        sampled_by_head = resume is not None and self.store is not None and self.sample is not None
        if self.sample is not None and not sampled_by_head:
            try:
                keep = self.sample(str(run_id), agent_name, tuple(tags or ()), metadata)
            except Exception:
                self._fail("sample")
                keep = False
            if not keep:
                with self._lock:
                    self.stats.unsampled += 1
                return
        run = _Run(
            trace_id=str(run_id),
            thread_id=thread_id,
            inputs=inputs,
            agent_name=agent_name,
            tags=tuple(tags) if tags else (),
            metadata=metadata,
            span=self._span(self._span_at_start, run_id),
            started=time.time(),
        )
        if resume is not None:  # joined to its paused trace in the store when built, or stored alone
            run.resumes, run.resume, run.sampled_by_head = True, resume, sampled_by_head
        with self._lock:
            full = len(self._runs) >= self.max_runs_in_flight
            if full:
                self.stats.dropped += 1
                warn = not self._warned_full
                self._warned_full = True
            else:
                self._runs[run_id.int] = run
                self._root_of[run_id.int] = run
        if full and warn:
            logger.warning(
                "ariadne recorder: %d runs in flight, dropping new runs (counted in stats.dropped)",
                self.max_runs_in_flight,
            )
        if not full:
            self._open_span(run, None)

    def _start_nested(
        self,
        caller: Caller,
        inputs: Any,
        run_id: UUID,
        tags: list[str] | None,
        metadata: Mapping[str, Any],
        name: str | None,
    ) -> None:
        """A run started right inside a tool call of a run this handler records: a sub-agent's, its own run linked
        both ways to the call (:mod:`._nested`). It follows its caller's sampling (the caller was recorded)."""
        if metadata.get(ARIADNE_REPLAY):
            return
        own = root_metadata(metadata)
        own.update({
            ARIADNE_PARENT_TRACE_ID: caller.trace_id,
            ARIADNE_PARENT_CALL_ID: caller.call_id,
            ARIADNE_PARENT_AGENT: caller.agent_name,
        })  # fmt: skip
        thread = metadata.get("thread_id")
        run = _Run(
            trace_id=str(run_id),
            thread_id=None if thread is None else str(thread),
            inputs=inputs,
            # its graph's own name first: metadata it inherits from a config the tool passed on is the caller's
            agent_name=(name if name and name != DEFAULT_GRAPH_NAME else None)
            or metadata.get(GEN_AI_AGENT_NAME)
            or metadata.get(AGENT_NAME_KEY)
            or name,
            tags=tuple(tags) if tags else (),
            metadata=own,
            span=self._span(self._span_at_start, run_id),
            started=time.time(),
            caller=caller,
        )
        with self._lock:
            full = len(self._runs) >= self.max_runs_in_flight
            if full:
                self.stats.dropped += 1
            else:
                self._runs[run_id.int] = run
                self._root_of[run_id.int] = run
        if not full:
            caller.agents.append(run.trace_id)
            self._open_span(run, caller.tool_span)

    def _resume(self, run: _Run, resume: Any, run_id: UUID) -> None:
        """Continue a paused turn: record the answers, track the new root run as the same run."""
        record_answers(run, resume)
        with self._lock:
            self._runs[run_id.int] = run
            self._root_of[run_id.int] = run
            self.stats.resumed += 1

    def _open_span(self, run: _Run, parent: Any) -> None:
        """Start the run's own ``invoke_agent`` span (a tracer given): the span its trace names, and audits score."""
        if self._agent_spans is None:
            return
        try:
            run.agent_span = self._agent_spans.agent(run.agent_name, run.thread_id, parent)
            run.span = span_ref(run.agent_span) or run.span
        except Exception:
            self._fail("tracer")

    def _close_span(self, run: _Run, error: BaseException | None) -> None:
        """End the run's span: the run was an agent's, and its trace is kept (a run left unended exports nothing)."""
        span, run.agent_span = run.agent_span, None
        try:
            AgentSpans.end(span, error)
        except Exception:
            self._fail("tracer")

    def _span(self, getter: SpanContextGetter, run_id: UUID) -> SpanRef | None:
        try:
            return getter(run_id)
        except Exception:
            self._fail("span_context_getter")
            return None

    def _end_root(self, run_id: UUID, outputs: Any, error: BaseException | None) -> None:
        with self._lock:
            run = self._runs.pop(run_id.int, None)
            self._root_of.pop(run_id.int, None)
            if run is not None:  # children that never ended (cancelled, crashed) go with their root
                for child in run.children:
                    self._root_of.pop(child, None)
                    self._tool_calls.pop(child, None)  # a tool call that never ended (cancelled) goes too
                run.children.clear()
                run.nodes.clear()
        if run is None:
            return
        if run.records_itself:  # its own recorder's trace is the one kept (module docstring of ._nested)
            self.stats.ignored += 1
            return
        if run.caller is not None and not run.pending and error is None:  # a plain chain inside a tool: no agent ran
            run.caller.forget(run.trace_id)
            self.stats.ignored += 1
            return
        asked = (
            new_interrupts(run, outputs, error)
            if run.asked_by or error is not None or (isinstance(outputs, dict) and "__interrupt__" in outputs)
            else []
        )
        paused = bool(asked) or isinstance(error, GraphInterrupt)
        if not run.pending and not run.asked and error is None and not paused:
            self.stats.ignored += 1
            return
        if paused and run.caller is not None:
            # a sub-agent that stopped at an interrupt stops its caller's turn too, on the same thread: only the
            # caller's half is kept, so that the resume joins the caller's turn (the sub-agent's run after the resume
            # is recorded then, as its own run)
            run.caller.forget(run.trace_id)
            self.stats.ignored += 1
            return
        self._close_span(run, None if paused else error)
        if run.span is None:
            run.span = self._span(self._span_at_end, run_id)  # here: the current context is the agent's
        run.ended = time.time()
        built = run
        if paused:
            run.asked.extend(asked)
            with self._lock:
                self.stats.paused += 1
            if self.store is None:  # no store to pause in: keep the run for its resume, in memory
                built = run.snapshot()  # the turn goes on after its resume; the builder reads a copy
                self._pause(run)
        finished = FinishedRun(
            run.trace_id,
            paused or error is not None or run.resumes,
            partial(
                build_trace,
                built,
                outputs,
                error,
                run.span,
                paused,
                # a sub-agent's graph is not the handler's: its trace carries no fingerprint of it
                fingerprint=self._fingerprint if run.caller is None else _no_fingerprint,
            ),
            thread_id=run.thread_id,
            resumes=run.resumes,
            sampled_by_head=run.sampled_by_head,
            model_calls=len(run.model_inputs),
        )
        if self.on_run_end is not None:
            try:
                self.on_run_end(finished)
            except Exception:
                self._fail("on_run_end")
        if self.store is not None or self.on_trace is not None:
            if self.synchronous:
                self._deliver(finished)
            else:
                if self._pending is not None:
                    finished.ticket = self._pending.add()
                self._builder.submit(finished)
        self.stats.recorded += 1

    def _pause(self, run: _Run) -> None:
        if run.thread_id is None:
            return  # no thread, no resume
        with self._lock:
            self._paused[run.thread_id] = run
            while len(self._paused) > self.max_paused_runs:
                self._paused.popitem(last=False)
                self.stats.paused_dropped += 1
