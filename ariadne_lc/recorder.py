"""The callback handler that turns live LangGraph runs into :class:`~ariadne_lc.trace.Trace` records.

It runs inside the user's agent, on the agent's threads, so it follows the rules of OpenTelemetry's
span processors: it never raises (every hook is guarded; failures are logged and counted), never
blocks on I/O it does not own (the store's ``put`` is the one call out), keeps state only for runs in
flight (popped on end or error) under a hard cap with a drop counter, and ignores the replays that
the auditor itself runs.

Only chain events are needed: a node's output holds the AI message it wrote (thought, tool calls,
id) and the tool messages answering earlier calls, which is exactly what the graph state records.
The handler therefore switches off LLM, tool and retriever callbacks, which keeps its overhead near
that of a handler that does nothing.

Two optional hooks keep the agent's thread even lighter for online auditing: ``sample`` decides at a
root run's start whether to record it at all (an unrecorded run costs almost nothing more), and
``on_run_end`` receives a :class:`FinishedRun` whose trace is built later, on the consumer's thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from opentelemetry import trace

from ariadne_lc._messages import first_human_text, last_ai_text, messages_in, thought_of, tool_call_record
from ariadne_lc.export.capture import agent_span_ref, current_agent_span_context
from ariadne_lc.semconv import ARIADNE_REPLAY, GEN_AI_AGENT_NAME
from ariadne_lc.store import TraceStore
from ariadne_lc.trace import CheckpointRef, SpanRef, Step, Trace

__all__ = [
    "DEFAULT_MAX_RUNS_IN_FLIGHT",
    "AriadneCallbackHandler",
    "FinishedRun",
    "RecorderStats",
    "RunSampler",
    "SpanContextGetter",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_RUNS_IN_FLIGHT = 10_000
"""Root runs tracked at once; beyond it new runs are dropped and counted, so memory stays bounded."""

SpanContextGetter = Callable[[UUID], SpanRef | None]
"""Returns the agent's span context for a root run id, or ``None``."""

RunSampler = Callable[[str, str | None, tuple[str, ...], Mapping[str, Any]], bool]
"""Decides at a root run's start whether to record it, from (trace id, agent name, tags, metadata)."""

_GRAPH_INTERRUPT = "GraphInterrupt"


class FinishedRun:
    """A root run that has ended, its :class:`Trace` not built yet.

    :meth:`build` makes the trace; it may be called later and on another thread (the run's state
    is no longer touched by the recorder), once.
    """

    __slots__ = ("_build", "failed", "trace_id")

    def __init__(self, trace_id: str, failed: bool, build: Callable[[], Trace]) -> None:
        self.trace_id = trace_id
        """The trace id the built trace will have."""
        self.failed = failed
        """The run raised or stopped at an interrupt: it has no final answer."""
        self._build = build

    def build(self) -> Trace:
        """The run's trace."""
        return self._build()


@dataclass(slots=True)
class RecorderStats:
    """Counters of what the recorder did; read them to alert on a misbehaving set-up."""

    recorded: int = 0
    """Traces handed to the store."""
    dropped: int = 0
    """Root runs not tracked because ``max_runs_in_flight`` was reached."""
    errors: int = 0
    """Exceptions caught inside the handler or the store (each was logged)."""
    ignored: int = 0
    """Root runs that were not LangGraph runs, or were ariadne replays."""
    unsampled: int = 0
    """Root runs the ``sample`` hook chose not to record."""


@dataclass(slots=True)
class _Draft:
    seq: int
    task_path: str
    langgraph_step: int | None
    message: AIMessage


@dataclass(slots=True)
class _Run:
    trace_id: str
    thread_id: str | None
    query: str
    agent_name: str | None
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    span: SpanRef | None
    started_at: datetime
    drafts: list[_Draft] = field(default_factory=list)
    outputs: dict[str, ToolMessage] = field(default_factory=dict)
    nodes: dict[UUID, tuple[str, int | None]] = field(default_factory=dict)
    """Run id of each node run in flight -> its checkpoint namespace and LangGraph step."""
    children: set[UUID] = field(default_factory=set)
    """Every descendant run in flight, so that nothing outlives the root."""
    pending: list[tuple[int, tuple[str, int | None], Any]] = field(default_factory=list)
    """Node outputs kept as they came, read only when the trace is built (``on_run_end`` alone)."""


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


def _jsonable(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if isinstance(v, str | int | float | bool) or v is None}


class AriadneCallbackHandler(BaseCallbackHandler):
    """Records every LangGraph run it sees into a :class:`Trace` and puts it into ``store``.

    Pass it in the run config (``{"callbacks": [handler]}``) or bind it to the graph with
    ``graph.with_config(callbacks=[handler])``. One handler serves any number of concurrent runs,
    sync or async.

    Args:
        store: Where finished traces go. ``None`` keeps only ``on_trace``.
        on_trace: Called with each finished trace (after the store). It runs on the agent's thread:
            it must be quick and must not raise (it is guarded anyway).
        sample: Called at each root run's start (on the agent's thread, guarded); a run it declines
            is not recorded at all.
        on_run_end: Called with each finished run before its trace is built (on the agent's thread,
            guarded); the callee builds the trace when and where it likes. Used by the online auditor.
        span_context_getter: How to find the agent's OpenTelemetry span for a root run id (asked at
            the root run's start and, if that found nothing, at its end). The default finds the span of
            OpenInference's and OpenLLMetry's LangChain instrumentations and of the application's own
            tracing (:mod:`ariadne_lc.export.capture`).
        max_runs_in_flight: Hard cap on tracked root runs.

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
    ) -> None:
        if max_runs_in_flight < 1:
            raise ValueError(f"max_runs_in_flight must be at least 1, got {max_runs_in_flight}")
        self.store = store
        self.on_trace = on_trace
        self.sample = sample
        self.on_run_end = on_run_end
        self._span_at_start: SpanContextGetter = span_context_getter or agent_span_ref
        self._span_at_end: SpanContextGetter = span_context_getter or _span_at_end
        self.max_runs_in_flight = max_runs_in_flight
        self.stats = RecorderStats()
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}
        self._root_of: dict[UUID, UUID] = {}
        self._seq = 0
        self._warned_full = False

    # Only chain events matter (see the module docstring).
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
            else:
                self._start_child(run_id, parent_run_id, metadata or {}, kwargs.get("name"))
        except Exception:
            self._fail("on_chain_start")

    def on_chain_end(
        self, outputs: dict[str, Any] | Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            if parent_run_id is None:
                self._end_root(run_id, outputs, None)
            else:
                self._end_child(run_id, outputs)
        except Exception:
            self._fail("on_chain_end")

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            if parent_run_id is None:
                self._end_root(run_id, None, error)
            else:
                with self._lock:
                    root = self._root_of.pop(run_id, None)
                    run = self._runs.get(root) if root is not None else None
                    if run is not None:
                        run.children.discard(run_id)
                        run.nodes.pop(run_id, None)
        except Exception:
            self._fail("on_chain_error")

    # -- internals ---------------------------------------------------------------------------------

    def _fail(self, where: str) -> None:
        self.stats.errors += 1
        logger.exception("ariadne recorder: %s failed; the agent run is not affected", where)

    def _start_root(
        self, inputs: Any, run_id: UUID, tags: list[str] | None, metadata: dict[str, Any], name: str | None
    ) -> None:
        if metadata.get(ARIADNE_REPLAY):
            self.stats.ignored += 1
            return
        agent_name = metadata.get(GEN_AI_AGENT_NAME) or name
        if self.sample is not None:
            try:
                keep = self.sample(str(run_id), agent_name, tuple(tags or ()), metadata)
            except Exception:
                self._fail("sample")
                keep = False
            if not keep:
                with self._lock:
                    self.stats.unsampled += 1
                return
        with self._lock:
            if len(self._runs) >= self.max_runs_in_flight:
                self.stats.dropped += 1
                full = not self._warned_full
                self._warned_full = True
            else:
                full = None
        if full is not None:
            if full:
                logger.warning(
                    "ariadne recorder: %d runs in flight, dropping new runs (counted in stats.dropped)",
                    self.max_runs_in_flight,
                )
            return
        thread = metadata.get("thread_id")
        run = _Run(
            trace_id=str(run_id),
            thread_id=None if thread is None else str(thread),
            query=first_human_text(inputs),
            agent_name=agent_name,
            tags=tuple(tags or ()),
            metadata=_jsonable(metadata),
            span=self._span(self._span_at_start, run_id),
            started_at=datetime.now(UTC),
        )
        with self._lock:
            self._runs[run_id] = run
            self._root_of[run_id] = run_id

    def _span(self, getter: SpanContextGetter, run_id: UUID) -> SpanRef | None:
        try:
            return getter(run_id)
        except Exception:
            self._fail("span_context_getter")
            return None

    def _start_child(self, run_id: UUID, parent_run_id: UUID, metadata: dict[str, Any], name: str | None) -> None:
        with self._lock:
            root = self._root_of.get(parent_run_id)
            if root is None:
                return
            run = self._runs[root]
            self._root_of[run_id] = root
            run.children.add(run_id)
            node = metadata.get("langgraph_node")
            if node is None or name != node:
                return
            task_path = metadata.get("langgraph_checkpoint_ns", "")
            # A node's own runnable (e.g. a RunnableLambda named like the node) repeats the namespace.
            parent = run.nodes.get(parent_run_id)
            if parent is not None and parent[0] == task_path:
                return
            run.nodes[run_id] = (task_path, metadata.get("langgraph_step"))

    def _end_child(self, run_id: UUID, outputs: Any) -> None:
        with self._lock:
            root = self._root_of.pop(run_id, None)
            if root is None:
                return
            run = self._runs.get(root)
            if run is None:
                return
            run.children.discard(run_id)
            node_run = run.nodes.pop(run_id, None)
            if node_run is None:
                return
            self._seq += 1
            seq = self._seq
            if self._deferred:  # the messages are read later, off the agent's thread
                run.pending.append((seq, node_run, outputs))
                return
        self._collect(run, seq, node_run, outputs)

    @property
    def _deferred(self) -> bool:
        return self.on_run_end is not None and self.store is None and self.on_trace is None

    def _collect(self, run: _Run, seq: int, node_run: tuple[str, int | None], outputs: Any) -> None:
        task_path, langgraph_step = node_run
        for message in messages_in(outputs):
            if isinstance(message, AIMessage):
                with self._lock:
                    run.drafts.append(_Draft(seq, task_path, langgraph_step, message))
            elif isinstance(message, ToolMessage):
                with self._lock:
                    run.outputs[message.tool_call_id] = message

    def _end_root(self, run_id: UUID, outputs: Any, error: BaseException | None) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
            self._root_of.pop(run_id, None)
            if run is not None:
                for child in run.children:  # normally empty: children end before their root
                    self._root_of.pop(child, None)
        if run is None:
            return
        if not run.drafts and not run.pending and error is None:
            self.stats.ignored += 1
            return
        span = run.span or self._span(self._span_at_end, run_id)  # here: the current context is the agent's
        if self.on_run_end is not None:
            try:
                self.on_run_end(
                    FinishedRun(run.trace_id, error is not None, partial(self._build, run, outputs, error, span))
                )
            except Exception:
                self._fail("on_run_end")
        if self.store is not None or self.on_trace is not None:
            trace = self._build(run, outputs, error, span)
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
        self.stats.recorded += 1

    def _build(self, run: _Run, outputs: Any, error: BaseException | None, span: SpanRef | None) -> Trace:
        for seq, node_run, node_outputs in run.pending:  # the run has ended: nobody else touches it
            self._collect(run, seq, node_run, node_outputs)
        run.pending.clear()
        # Everything here comes from LangChain's own typed objects; model_construct skips a second
        # validation on the agent's thread.
        steps = tuple(self._step(i, d, run) for i, d in enumerate(sorted(run.drafts, key=lambda d: d.seq)))
        final: str | None = None
        if outputs is not None:
            final = last_ai_text(messages_in(outputs))
        if final is None and steps and steps[-1].is_final and error is None:
            final = steps[-1].thought
        interrupted = error is not None and type(error).__name__ == _GRAPH_INTERRUPT
        return Trace(
            trace_id=run.trace_id,
            thread_id=run.thread_id,
            query=run.query,
            steps=steps,
            final_answer=final,
            error=None if error is None or interrupted else f"{type(error).__name__}: {error}",
            interrupted=interrupted,
            span=span,
            agent_name=run.agent_name,
            tags=run.tags,
            metadata=run.metadata,
            started_at=run.started_at,
            ended_at=datetime.now(UTC),
        )

    @staticmethod
    def _step(index: int, draft: _Draft, run: _Run) -> Step:
        parent_ns, _, own = draft.task_path.rpartition("|")
        node, _, task_id = own.partition(":")
        checkpoint = CheckpointRef.model_construct(
            thread_id=run.thread_id,
            checkpoint_ns=parent_ns,
            task_id=task_id or None,
            task_path=draft.task_path,
            checkpoint_id=None,
        )
        return Step.model_construct(
            index=index,
            node=node,
            langgraph_step=draft.langgraph_step,
            thought=thought_of(draft.message),
            tool_calls=tuple(tool_call_record(tc, run.outputs) for tc in draft.message.tool_calls),
            message_id=draft.message.id,
            checkpoint=checkpoint,
        )
