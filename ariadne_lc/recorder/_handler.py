"""The callback handler (see the package docstring for the rules it follows)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.errors import GraphInterrupt
from langgraph.types import Command
from opentelemetry import trace

from ariadne_lc._fingerprint import graph_fingerprint
from ariadne_lc.export.capture import agent_span_ref, current_agent_span_context
from ariadne_lc.recorder._background import DEFAULT_MAX_QUEUED_TRACES, Builder
from ariadne_lc.recorder._build import build_trace
from ariadne_lc.recorder._run import (
    FinishedRun,
    RecorderStats,
    _Run,
    new_interrupts,
    record_answers,
)
from ariadne_lc.semconv import ARIADNE_REPLAY, GEN_AI_AGENT_NAME
from ariadne_lc.store import TraceStore
from ariadne_lc.store._pending import DEFAULT_READ_WAIT, Pending, pending_for
from ariadne_lc.trace import GraphFingerprint, SpanRef, Trace

__all__ = [
    "DEFAULT_MAX_PAUSED_RUNS",
    "DEFAULT_MAX_RUNS_IN_FLIGHT",
    "DEFAULT_RESUME_WAIT",
    "AriadneCallbackHandler",
    "RunSampler",
    "SpanContextGetter",
]

logger = logging.getLogger("ariadne_lc.recorder")

DEFAULT_MAX_RUNS_IN_FLIGHT = 10_000
"""Root runs tracked at once; beyond it new runs are dropped and counted, so memory stays bounded."""
DEFAULT_MAX_PAUSED_RUNS = 10_000
"""Runs paused at an interrupt kept in memory for their resume (handlers without a store); beyond it
the oldest is forgotten and counted."""
DEFAULT_RESUME_WAIT = 2.0
"""Seconds the builder looks for the paused trace of a resumed turn before storing the resumed half alone."""
_RESUME_POLL = 0.1

SpanContextGetter = Callable[[UUID], SpanRef | None]
"""Returns the agent's span context for a root run id, or ``None``."""

RunSampler = Callable[[str, str | None, tuple[str, ...], Mapping[str, Any]], bool]
"""Decides at a root run's start whether to record it, from (trace id, agent name, tags, metadata)."""


def _span_at_end(run_id: UUID) -> SpanRef | None:
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


class AriadneCallbackHandler(BaseCallbackHandler):
    """Records every LangGraph run it sees into a :class:`Trace` and puts it into ``store``.

    Pass it in the run config (``{"callbacks": [handler]}``) or bind it to the graph with
    ``graph.with_config(callbacks=[handler])``. One handler serves any number of concurrent runs,
    sync or async.

    Human in the loop: a turn that pauses at ``interrupt()`` is stored as an unfinished trace
    (``interrupted``, no answer). Its ``Command(resume=...)``, seen by this handler or any other
    writing to the same store (a new handler per request, another replica, another process), is
    joined to that trace when its own trace is built: the store then holds one trace for the turn,
    under the paused trace's id, with the answers in ``Trace.interrupts``. A handler without a store
    keeps paused runs in memory instead (bounded by ``max_paused_runs``), so only it can join them.

    Traces are built and stored on a background thread. Reads of the built-in stores in this process
    wait for the traces of runs that have returned (see :func:`~ariadne_lc.flush_traces`), so
    ``graph.invoke(...)`` then ``store.list_traces()`` sees the run; :meth:`flush` waits for this
    handler's own, and ``synchronous=True`` stores each trace before its run returns.

    Args:
        store: Where traces go. ``None`` keeps only ``on_trace`` / ``on_run_end``.
        on_trace: Called with each trace after the store (on the builder thread, or the agent's
            thread when ``synchronous``); guarded.
        sample: Called at each root run's start (on the agent's thread, guarded); a run it declines
            is not recorded at all.
        on_run_end: Called with each finished or paused run before its trace is built (on the
            agent's thread, guarded); the callee builds the trace when and where it likes.
        span_context_getter: How to find the agent's OpenTelemetry span for a root run id (asked at
            the root run's start and, if that found nothing, at its end). The default finds the span of
            OpenInference's and OpenLLMetry's LangChain instrumentations and of the application's own
            tracing (:mod:`ariadne_lc.export.capture`).
        max_runs_in_flight: Hard cap on tracked root runs.
        max_paused_runs: Hard cap on runs kept waiting for their resume (handlers without a store).
        synchronous: Build and store each trace on the agent's thread when its run ends.
        max_queued: Hard cap on runs waiting for the builder thread.
        graph: The compiled graph the runs come from (``record()`` and ``OnlineAuditor`` pass it): its
            fingerprint is kept on each trace (``Trace.graph``), so that an audit with a changed graph
            is refused (:class:`~ariadne_lc.errors.GraphChangedError`). Computed once per graph, on
            the builder thread. ``None``: traces carry no fingerprint and are audited unchecked.
        resume_wait: Seconds the builder keeps looking for the paused trace of a resumed turn that is
            not in the store yet (another process may still be storing it); then the resumed half is
            stored alone, with an ``error`` saying so. With ``synchronous`` it looks once.

    Examples:
        >>> from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore
        >>> store = InMemoryTraceStore()
        >>> handler = AriadneCallbackHandler(store=store)
    """

    raise_error = False
    run_inline = True  # cheap and lock-guarded: no thread hop, and OTel context is the agent's own

    def __init__(
        self,
        store: TraceStore | None = None,
        *,
        on_trace: Callable[[Trace], None] | None = None,
        span_context_getter: SpanContextGetter | None = None,
        max_runs_in_flight: int = DEFAULT_MAX_RUNS_IN_FLIGHT,
        sample: RunSampler | None = None,
        on_run_end: Callable[[FinishedRun], None] | None = None,
        max_paused_runs: int = DEFAULT_MAX_PAUSED_RUNS,
        synchronous: bool = False,
        max_queued: int = DEFAULT_MAX_QUEUED_TRACES,
        graph: Any = None,
        resume_wait: float = DEFAULT_RESUME_WAIT,
    ) -> None:
        if resume_wait < 0:
            raise ValueError(f"resume_wait must not be negative, got {resume_wait}")
        for name, value in (
            ("max_runs_in_flight", max_runs_in_flight),
            ("max_paused_runs", max_paused_runs),
            ("max_queued", max_queued),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.store = store
        self.on_trace = on_trace
        self.sample = sample
        self.on_run_end = on_run_end
        self.synchronous = synchronous
        self._span_at_start: SpanContextGetter = span_context_getter or agent_span_ref
        self._span_at_end: SpanContextGetter = span_context_getter or _span_at_end
        self.max_runs_in_flight = max_runs_in_flight
        self.max_paused_runs = max_paused_runs
        self.stats = RecorderStats()
        self._lock = threading.Lock()
        self._runs: dict[int, _Run] = {}
        self._root_of: dict[int, _Run] = {}
        """Every run in flight (root and descendants, by ``UUID.int``: hashed in C) -> its root's state."""
        self._paused: OrderedDict[str, _Run] = OrderedDict()
        self._seq = itertools.count()
        self._warned_full = False
        self._builder = Builder(self._deliver, self._dropped_by_builder, max_queued)
        self.graph = graph
        self.resume_wait = resume_wait
        self._pending: Pending | None = None
        if store is not None and not synchronous:
            self._pending = pending_for(store)
            self._pending.attach(self._builder.wake)
        self._warned_no_lookup = False

    # Only chain events matter (see the package docstring).
    @property
    def ignore_llm(self) -> bool:
        return True

    @property
    def ignore_chat_model(self) -> bool:
        return True

    @property
    def ignore_agent(self) -> bool:  # also switches off tool callbacks
        return True

    @property
    def ignore_retriever(self) -> bool:
        return True

    @property
    def ignore_custom_event(self) -> bool:
        return True

    @property
    def runs_in_flight(self) -> int:
        """Root runs currently tracked."""
        return len(self._runs)

    @property
    def runs_paused(self) -> int:
        """Runs paused at an interrupt kept in memory for their resume (handlers without a store)."""
        return len(self._paused)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run that ended so far is built and stored; ``False`` on timeout."""
        return self._builder.flush(timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Store what is queued, then stop the builder thread (later runs are dropped and counted)."""
        return self._builder.shutdown(timeout)

    # -- hooks (agent's thread: guarded, no I/O) ---------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            if parent_run_id is None:
                self._start_root(inputs, run_id, tags, metadata or {}, kwargs.get("name"))
                return
            # No lock on the per-node path: single dict and list operations are atomic, and each
            # run's state is only appended to (see the package docstring).
            run = self._root_of.get(parent_run_id.int)
            if run is None:
                return
            key = run_id.int
            self._root_of[key] = run
            run.children.append(key)
            if metadata is None:
                return
            node = metadata.get("langgraph_node")
            if node is None or kwargs.get("name") != node:
                return
            task_path = metadata.get("langgraph_checkpoint_ns", "")
            # A node's own runnable (e.g. a RunnableLambda named like the node) repeats the namespace.
            parent = run.nodes.get(parent_run_id.int)
            if parent is None or parent[0] != task_path:
                run.nodes[key] = (task_path, metadata.get("langgraph_step"))
        except Exception:
            self._fail("on_chain_start")

    def on_chain_end(
        self, outputs: dict[str, Any] | Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            if parent_run_id is None:
                self._end_root(run_id, outputs, None)
                return
            key = run_id.int
            run = self._root_of.pop(key, None)
            if run is None:
                return
            node_run = run.nodes.pop(key, None)
            if node_run is not None:  # read later, off the agent's thread
                run.pending.append((next(self._seq), node_run[0], node_run[1], outputs))
        except Exception:
            self._fail("on_chain_end")

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            if parent_run_id is None:
                self._end_root(run_id, None, error)
                return
            key = run_id.int
            run = self._root_of.pop(key, None)
            if run is None:
                return
            node_run = run.nodes.pop(key, None)
            if node_run is not None and isinstance(error, GraphInterrupt) and error.args:
                for asked in error.args[0]:  # the innermost node that asked ends first
                    run.asked_by.setdefault(asked.id, (node_run[0], asked.value))
        except Exception:
            self._fail("on_chain_error")

    # -- internals ---------------------------------------------------------------------------------

    def _fail(self, where: str) -> None:
        self.stats.errors += 1
        logger.exception("ariadne recorder: %s failed; the agent run is not affected", where)

    def _dropped_by_builder(self, run: FinishedRun) -> None:
        self._done(run)
        self.stats.dropped += 1
        if not self._warned_full:
            self._warned_full = True
            logger.warning("ariadne recorder: the build queue is full, dropping traces (counted in stats.dropped)")

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

    def _resume(self, run: _Run, resume: Any, run_id: UUID) -> None:
        """Continue a paused turn: record the answers, track the new root run as the same run."""
        record_answers(run, resume)
        with self._lock:
            self._runs[run_id.int] = run
            self._root_of[run_id.int] = run
            self.stats.resumed += 1

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
                run.children.clear()
                run.nodes.clear()
        if run is None:
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
            partial(build_trace, built, outputs, error, run.span, paused, fingerprint=self._fingerprint),
            thread_id=run.thread_id,
            resumes=run.resumes,
            sampled_by_head=run.sampled_by_head,
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

    def _done(self, finished: FinishedRun) -> None:
        if finished.ticket is not None and self._pending is not None:
            self._pending.done(finished.ticket)

    def _fingerprint(self) -> GraphFingerprint | None:
        if self.graph is None:
            return None
        try:
            return graph_fingerprint(self.graph)
        except Exception:
            self._fail("fingerprinting the graph")
            return None

    def _paused_trace(self, finished: FinishedRun) -> Trace | None:
        """The stored trace of the turn ``finished`` resumed (builder thread: may wait and read)."""
        lookup = getattr(self.store, "get_paused", None)
        if lookup is None or finished.thread_id is None:
            if lookup is None and not self._warned_no_lookup:
                self._warned_no_lookup = True
                logger.warning(
                    "ariadne recorder: %s has no get_paused(thread_id); resumed turns cannot be joined",
                    type(self.store).__name__,
                )
            return None
        if self._pending is not None and finished.ticket is not None:
            self._pending.wait_before(finished.ticket, DEFAULT_READ_WAIT)  # this process's earlier runs first
        # On the agent's thread (synchronous) one look only: the run must never sleep for the recorder.
        deadline = time.monotonic() + (0.0 if self.synchronous else self.resume_wait)
        while True:
            try:
                head: Trace | None = lookup(finished.thread_id)
            except Exception:
                self._fail("store.get_paused")
                return None
            left = deadline - time.monotonic()
            if head is not None or left <= 0:
                return head
            time.sleep(min(_RESUME_POLL, left))

    def _deliver(self, finished: FinishedRun) -> None:
        try:
            self._store_trace(finished)
        finally:
            self._done(finished)

    def _store_trace(self, finished: FinishedRun) -> None:
        head = None
        if finished.resumes and self.store is not None:
            head = self._paused_trace(finished)
            with self._lock:
                if head is None and finished.sampled_by_head:
                    self.stats.unsampled += 1  # its paused half was not sampled: neither is the rest of the turn
                    return
                if head is None:
                    self.stats.unjoined += 1
                else:
                    self.stats.resumed += 1
        elif finished.resumes:
            with self._lock:
                self.stats.unjoined += 1
        try:
            trace = finished.build(head)
        except Exception:
            self._fail("building a trace")
            return
        if self.store is not None:
            try:
                self.store.put(trace)
            except Exception:
                self._fail("store.put")
        if self.on_trace is not None:
            try:
                self.on_trace(trace)
            except Exception:
                self._fail("on_trace")
