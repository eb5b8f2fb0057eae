"""The callback handler: its options, its hooks, and its stats (see the package docstring for the rules it follows).

The hooks run on the agent's thread and only do bookkeeping for node runs; a root run's start and end are handled
in :mod:`ariadne_lc.recorder._roots`, and the trace is built and stored by :mod:`ariadne_lc.recorder._deliver`.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextvars import Token
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.errors import GraphInterrupt
from opentelemetry.trace import TracerProvider

from ariadne_lc.export.capture import agent_span_ref
from ariadne_lc.recorder._background import DEFAULT_MAX_QUEUED_TRACES, Builder
from ariadne_lc.recorder._nested import CALLER, Caller, records_itself
from ariadne_lc.recorder._roots import RootRuns, RunSampler, SpanContextGetter, span_at_end
from ariadne_lc.recorder._run import FinishedRun, RecorderStats, _Run
from ariadne_lc.recorder._spans import AgentSpans
from ariadne_lc.store import TraceStore
from ariadne_lc.store._pending import Pending, pending_for
from ariadne_lc.trace import Trace

__all__ = [
    "DEFAULT_MAX_PAUSED_RUNS",
    "DEFAULT_MAX_RUNS_IN_FLIGHT",
    "DEFAULT_RESUME_WAIT",
    "AriadneCallbackHandler",
    "RunSampler",
    "SpanContextGetter",
]

DEFAULT_MAX_RUNS_IN_FLIGHT = 10_000
"""Root runs tracked at once; beyond it new runs are dropped and counted, so memory stays bounded."""
DEFAULT_MAX_PAUSED_RUNS = 10_000
"""Runs paused at an interrupt kept in memory for their resume (handlers without a store); beyond it
the oldest is forgotten and counted."""
DEFAULT_RESUME_WAIT = 2.0
"""Seconds the builder looks for the paused trace of a resumed turn before storing the resumed half alone."""


class AriadneCallbackHandler(RootRuns, BaseCallbackHandler):
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
        tracer_provider: Emit each recorded agent run as an OpenTelemetry GenAI ``invoke_agent`` span and
            its tool calls as ``execute_tool`` spans on this provider, a sub-agent's span under the tool call
            that started it (:mod:`ariadne_lc.recorder._spans`); the trace then names that span, so each
            agent's audits are scored on its own run. ``None``: no span of ours (the agent span is found
            with ``span_context_getter``).

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
        tracer_provider: TracerProvider | None = None,
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
        self._agent_spans = None if tracer_provider is None else AgentSpans(tracer_provider)
        self._span_at_start: SpanContextGetter = span_context_getter or agent_span_ref
        self._span_at_end: SpanContextGetter = span_context_getter or span_at_end
        self.max_runs_in_flight = max_runs_in_flight
        self.max_paused_runs = max_paused_runs
        self.stats = RecorderStats()
        self._lock = threading.Lock()
        self._runs: dict[int, _Run] = {}
        self._root_of: dict[int, _Run] = {}
        """Every run in flight (root and descendants, by ``UUID.int``: hashed in C) -> its root's state."""
        self._paused: OrderedDict[str, _Run] = OrderedDict()
        self._tool_calls: dict[int, tuple[Token[Caller | None], Caller, _Run]] = {}
        """Tool calls in flight of the runs recorded here (by run id) -> the :data:`CALLER` they set, the caller, and
        the run that made the call: the parent of the sub-agents the call starts (:mod:`._nested`)."""
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
    def ignore_chat_model(self) -> bool:  # a model call's input is kept for the replay invariant
        return False

    @property
    def ignore_agent(self) -> bool:  # it also switches tool callbacks: a tool call is where a sub-agent starts
        return False

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
                caller = CALLER.get()
                if caller is not None and caller.recorder is self and caller.tool_run == parent_run_id.int:
                    self._start_nested(caller, inputs, run_id, tags, metadata or {}, kwargs.get("name"))
                return
            key = run_id.int
            self._root_of[key] = run
            run.children.append(key)
            if metadata is None:
                return
            node = metadata.get("langgraph_node")
            if node is None or kwargs.get("name") != node:
                return
            if run.caller is not None and records_itself(node):  # a sub-agent with its own recorder
                self._leave_to_own_recorder(run)
                return
            task_path = metadata.get("langgraph_checkpoint_ns", "")
            # A node's own runnable (e.g. a RunnableLambda named like the node) repeats the namespace.
            parent = run.nodes.get(parent_run_id.int)
            if parent is None or parent[0] != task_path:
                run.nodes[key] = (task_path, metadata.get("langgraph_step"))
        except Exception:
            self._fail("on_chain_start")

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            params = kwargs.get("invocation_params") or {}
            if messages:
                self.saw_model_input(parent_run_id, metadata, messages[0], params.get("tools"), "callback")
        except Exception:
            self._fail("on_chat_model_start")

    def saw_model_input(
        self, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, messages: Any, tools: Any, source: str
    ) -> None:
        """Keep what a node's model call was given (digested when the trace is built: the replay invariant).

        Called by the chat model's start callback, and by ``AriadneMiddleware`` with the model request it wraps.
        """
        run = None if parent_run_id is None else self._root_of.get(parent_run_id.int)
        path = (metadata or {}).get("langgraph_checkpoint_ns")
        if run is not None and isinstance(path, str):
            run.model_inputs[path] = (messages, tools, source)

    def saw_agents(self, root_run_id: UUID, call_id: str, trace_ids: list[str]) -> None:
        """Keep the agent runs (their trace ids) a tool call of root run ``root_run_id`` started (sub-agents)."""
        run = self._root_of.get(root_run_id.int)
        if run is not None:
            run.agents_of.setdefault(call_id, []).extend(trace_ids)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool call of a recorded run: the caller of any agent that runs inside it. LangChain copies the context
        into the tool's function after this callback, so :data:`CALLER` set here reaches a sub-agent it invokes."""
        try:
            run = None if parent_run_id is None else self._root_of.get(parent_run_id.int)
            call_id = kwargs.get("tool_call_id")
            if run is not None:
                caller = Caller(run.trace_id, call_id, run.agent_name, recorder=self, tool_run=run_id.int)
                if run.agent_span is not None and self._agent_spans is not None:
                    name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
                    caller.tool_span = self._agent_spans.tool(run.agent_span, str(name), call_id)
                self._tool_calls[run_id.int] = (CALLER.set(caller), caller, run)
                run.children.append(run_id.int)  # forgotten with its run if it never ends
                return
            wrapped = CALLER.get()  # a call AriadneMiddleware wraps (its handler reaches this one through RECORDER)
            if (
                wrapped is not None
                and wrapped.recorder is self
                and wrapped.tool_run is None
                and wrapped.call_id == call_id
            ):
                wrapped.tool_run = run_id.int
        except Exception:
            self._fail("on_tool_start")

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end_tool(run_id, "on_tool_end")

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end_tool(run_id, "on_tool_error", error)

    def _end_tool(self, run_id: UUID, where: str, error: BaseException | None = None) -> None:
        try:
            found = self._tool_calls.pop(run_id.int, None)
            if found is None:
                return
            token, caller, run = found
            AgentSpans.end(caller.tool_span, error)
            try:
                CALLER.reset(token)
            except ValueError:  # ended in another context than it started in: that context's copy goes with it
                CALLER.set(None)
            if caller.agents and caller.call_id:
                run.agents_of.setdefault(caller.call_id, []).extend(caller.agents)
        except Exception:
            self._fail(where)

    def _leave_to_own_recorder(self, run: _Run) -> None:
        """``run`` is a sub-agent that records itself: its recorder links it to the caller; this one forgets it."""
        run.records_itself = True
        if run.caller is not None:
            run.caller.forget(run.trace_id)

    def on_chain_end(
        self, outputs: dict[str, Any] | Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        try:
            if parent_run_id is None or run_id.int in self._runs:  # a root, or a sub-agent's (its own run)
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
            if parent_run_id is None or run_id.int in self._runs:
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
