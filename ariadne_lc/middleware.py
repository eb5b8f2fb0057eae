"""``AriadneMiddleware``: record ``langchain.agents.create_agent`` runs the way create_agent users add behaviour.

``create_agent(model, tools, middleware=[AriadneMiddleware(store)])`` records every run into ``store``,
without a callback in every ``invoke`` config. The traces are the handler's own: the middleware owns an
:class:`~ariadne_lc.recorder.AriadneCallbackHandler` and feeds it, through the handler's public callback
methods, the events LangGraph would have sent it for the same run:

* ``before_agent`` starts the run (the root), with the run's tags and metadata as the graph received them;
* ``wrap_model_call`` is the ``model`` node run: started with the node's own LangGraph metadata (step,
  checkpoint namespace and task, which is where an audit forks), ended with the messages it wrote;
* ``wrap_tool_call`` is the ``tools`` task of that call, ended with its tool message;
* ``after_agent`` ends the run with the final state.

So everything the handler guarantees holds here too (it never raises into the agent, state bounded,
replays ignored, ``sample``/``on_run_end`` hooks), and tests compare the two recorders field by field on
the same runs.

A callback sees the graph's whole run; a middleware sees only its hooks. What follows from that:

* List ``AriadneMiddleware`` first in ``middleware=[...]``: it then wraps the model call that the other
  middleware (retries, fallbacks) finally made, once.
* A run that raises inside a model or tool call is recorded with its error. A run that reaches LangGraph's
  recursion limit right after a model or tool call is recorded as failed with a ``GraphRecursionError`` as soon as
  that call ends (the middleware knows the limit and the step: the next node would exceed it). A run that stops
  elsewhere
  (an interrupt waiting for a human, an error in another middleware's hook) stays open; if it resumes
  (``Command(resume=...)``), its steps after the resume join the same trace, one trace per user turn. A
  new turn on the same thread closes an open one as not finished (its trace carries ``error``).
* The resume itself is invisible to middleware, so the answers a human gave are not recorded
  (``Trace.interrupts`` stays empty): a replay that reaches such a pause ends with
  ``UnansweredInterruptError`` instead of going through it. For human-in-the-loop agents use
  :func:`~ariadne_lc.recording.record` or the handler, which record the answers.
* An agent used as a node of a parent graph (a supervisor's worker, a swarm's agent) is recorded as its own turn:
  its query, its steps (with their subgraph namespaces) and its own answer. A turn that ends by handing off to
  another agent (a tool returning a ``Command`` to the parent graph) is recorded then, its answer the hand-off.
  An agent run started inside a tool call (a ``@tool`` that invokes a sub-agent, a deep agent's ``task``) is recorded
  as its own trace, linked to the call both ways (``Trace.parent``, ``ToolCall.agents``; docs/harnesses.md), whether
  or not it carries a middleware of its own: the wrapped call hands this middleware's handler to every run
  configured inside it (:mod:`ariadne_lc.recorder._nested`).
* Audits (:mod:`ariadne_lc.recorder._audit_calls`): in a replay the middleware records nothing and reports what the
  model was given (the replay invariant); in a ``thought->action`` re-run it appends the (contradicted) thought as a
  trailing assistant message, in the step's own format, for the model to continue. This is what makes a
  ``create_agent`` agent auditable on that link with no other option.
* Trace ids are fresh UUIDs (the graph's root run id is not visible to middleware); everything else equals the trace
  a handler records of the same run (each step's model input comes from the model request here, from the chat
  model's callback there: the same messages).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp, GraphRecursionError
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from ariadne_lc._messages import messages_in, response_messages, turn_input
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.recorder._audit_calls import replayed, replaying, request_input
from ariadne_lc.recorder._nested import (
    AGENT_NAME_KEY,
    CALLER,
    DEFAULT_GRAPH_NAME,
    RECORDER,
    Caller,
    root_metadata,
    self_recording,
)
from ariadne_lc.semconv import ARIADNE_PARENT_AGENT, ARIADNE_PARENT_CALL_ID, ARIADNE_PARENT_TRACE_ID
from ariadne_lc.store import TraceStore

__all__ = ["AriadneMiddleware", "RunNotFinishedError"]

logger = logging.getLogger(__name__)


_RunKey = tuple[str | None, str]
"""(thread id, namespace of the graph the agent runs in): one open run per agent per thread."""
_Node = tuple[UUID, UUID, Mapping[str, Any]]
"""A node run in flight: its run id, its root run's id, its LangGraph metadata."""


class RunNotFinishedError(Exception):
    """Why a trace recorded by the middleware has ``error`` set: the run never reached ``after_agent``.

    It stopped at an interrupt that was never resumed, or failed outside the model and tool calls, and
    a new turn started on the same thread.
    """


def _node_config() -> tuple[Mapping[str, Any], list[str]]:
    config = get_config()
    return config.get("metadata") or {}, list(config.get("tags") or [])


def _key(metadata: Mapping[str, Any]) -> _RunKey:
    thread = metadata.get("thread_id")
    namespace = str(metadata.get("langgraph_checkpoint_ns", ""))
    return (None if thread is None else str(thread), namespace.rpartition("|")[0])


def _recursion_error(limit: int) -> GraphRecursionError:
    return GraphRecursionError(
        f"Recursion limit of {limit} reached without hitting a stop condition (recorded by AriadneMiddleware: the "
        "run's last node ended at the last step LangGraph allows)"
    )


class AriadneMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Record every ``create_agent`` run into a trace store, as :class:`AriadneCallbackHandler` does.

    Args:
        store: Where finished traces go (ignored when ``handler`` is given).
        handler: The recorder to feed, for its hooks (``on_trace``, ``sample``, ``on_run_end``) or
            its ``stats``; default: ``AriadneCallbackHandler(store=store, **options)``.
        **options: Keyword arguments of the default handler (e.g. ``synchronous=True`` to store each
            trace on the agent's thread when its run ends).

    Traces are built and stored as the handler does it (by default on its background thread); a read of
    the store in this process waits for the runs that have returned, and ``flush_traces(store)`` waits
    explicitly (e.g. before another process reads it). The middleware does not know the compiled graph,
    so its traces carry no fingerprint (``Trace.graph``) unless you set ``middleware.handler.graph``.

    Raises:
        ConfigurationError: neither or both of ``store`` and ``handler``, or ``options`` with ``handler``.

    Examples:
        >>> from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
        >>> middleware = AriadneMiddleware(InMemoryTraceStore())
        >>> # graph = create_agent(model, tools, middleware=[middleware], checkpointer=InMemorySaver())
    """

    def __init__(
        self, store: TraceStore | None = None, *, handler: AriadneCallbackHandler | None = None, **options: Any
    ) -> None:
        from ariadne_lc.errors import ConfigurationError

        if (store is None) == (handler is None):
            raise ConfigurationError("AriadneMiddleware takes a trace store or a handler (exactly one)")
        if handler is not None and options:
            raise ConfigurationError(f"options {sorted(options)} are for the default handler; set them on yours")
        super().__init__()
        self.handler: AriadneCallbackHandler = handler or AriadneCallbackHandler(store=store, **options)
        """The recorder the middleware feeds (its ``stats`` count what was recorded, dropped, failed)."""
        self._lock = threading.Lock()
        self._open: dict[_RunKey, UUID] = {}
        self._limits: dict[UUID, tuple[int, int]] = {}
        """Open run -> (its recursion limit, the last step a node of it may run at)."""
        self_recording(f"{self.name}.before_agent")  # a recorder above this agent leaves its runs to this one

    # -- the run: before_agent / after_agent --------------------------------------------------------

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._guard("before_agent", self._start, state)
        return None

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._guard("before_agent", self._start, state)
        return None

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._guard("after_agent", self._finish, state)
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._guard("after_agent", self._finish, state)
        return None

    # -- the nodes: model calls and tool calls ------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        request = self._guard("wrap_model_call", replayed, request) or request
        if replaying():  # an audit's replay or thought->action re-run, never a live call (module docstring)
            return handler(request)
        node = self._guard("wrap_model_call", self._start_node)
        self._guard("wrap_model_call", self._saw_input, node, request)
        try:
            response = handler(request)
        except BaseException as error:
            self._guard("wrap_model_call", self._fail_node, node, error)
            raise
        self._guard("wrap_model_call", self._end_node, node, response_messages(response))
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        request = self._guard("awrap_model_call", replayed, request) or request
        if replaying():
            return await handler(request)
        node = self._guard("awrap_model_call", self._start_node)
        self._guard("awrap_model_call", self._saw_input, node, request)
        try:
            response = await handler(request)
        except BaseException as error:
            self._guard("awrap_model_call", self._fail_node, node, error)
            raise
        self._guard("awrap_model_call", self._end_node, node, response_messages(response))
        return response

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        node = self._guard("wrap_tool_call", self._start_node)
        caller = self._guard("wrap_tool_call", self._caller, node, request)
        token, recorder = CALLER.set(caller), RECORDER.set(None if caller is None else self.handler)
        try:
            result = handler(request)
        except BaseException as error:
            self._guard("wrap_tool_call", self._fail_node, node, error)
            raise
        finally:
            RECORDER.reset(recorder)
            CALLER.reset(token)
        self._guard("wrap_tool_call", self._end_tool, node, request, result, caller)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        node = self._guard("awrap_tool_call", self._start_node)
        caller = self._guard("awrap_tool_call", self._caller, node, request)
        token, recorder = CALLER.set(caller), RECORDER.set(None if caller is None else self.handler)
        try:
            result = await handler(request)
        except BaseException as error:
            self._guard("awrap_tool_call", self._fail_node, node, error)
            raise
        finally:
            RECORDER.reset(recorder)
            CALLER.reset(token)
        self._guard("awrap_tool_call", self._end_tool, node, request, result, caller)
        return result

    # -- internals: the logic once, for the sync and async hooks ------------------------------------

    def _guard(self, where: str, function: Callable[..., Any], *args: Any) -> Any:
        """Run ``function``; a failure is logged and counted, never raised into the agent."""
        try:
            return function(*args)
        except Exception:
            self.handler.stats.errors += 1
            logger.exception("ariadne middleware: %s failed; the agent run is not affected", where)
            return None

    def _start(self, state: AgentState[Any]) -> None:
        metadata, tags = _node_config()
        key = _key(metadata)
        run_id = uuid.uuid4()
        with self._lock:
            stale = self._open.pop(key, None)
            full = len(self._open) >= self.handler.max_runs_in_flight
            if not full:
                self._open[key] = run_id
        if stale is not None:
            self.handler.on_chain_error(
                RunNotFinishedError("the previous turn on this thread stopped before the agent finished"),
                run_id=stale,
            )
        if full:  # the handler, which has the same cap, counts the drop
            self.handler.stats.dropped += 1
            return
        step, limit = metadata.get("langgraph_step"), get_config().get("recursion_limit")
        if isinstance(step, int) and isinstance(limit, int):  # as LangGraph counts (tests/test_middleware_limits)
            with self._lock:  # a run whose node ends at step s fails when s + 1 passes before_agent's step + limit - 1
                self._limits[run_id] = (limit, step + limit - 1)
        own = root_metadata(metadata)
        caller = CALLER.get()
        if caller is not None:  # a sub-agent started by a tool call of another agent's (module docstring)
            caller.agents.append(str(run_id))
            own[ARIADNE_PARENT_TRACE_ID] = caller.trace_id
            own[ARIADNE_PARENT_CALL_ID] = caller.call_id
            own[ARIADNE_PARENT_AGENT] = caller.agent_name
        self.handler.on_chain_start(
            None,
            {"messages": turn_input(list(state.get("messages", [])))},
            run_id=run_id,
            tags=tags,
            metadata=own,
            name=own.get(AGENT_NAME_KEY) or DEFAULT_GRAPH_NAME,
        )

    def _finish(self, state: AgentState[Any]) -> None:
        metadata, _ = _node_config()
        with self._lock:
            run_id = self._open.pop(_key(metadata), None)
            limit, last = (0, None) if run_id is None else self._limits.pop(run_id, (0, None))
        if run_id is None:  # not recorded (a replay, or dropped)
            return
        step = metadata.get("langgraph_step")
        if isinstance(step, int) and last is not None and step + 1 > last:  # LangGraph's next tick is out of steps
            self.handler.on_chain_error(_recursion_error(limit), run_id=run_id)
            return
        self.handler.on_chain_end(dict(state), run_id=run_id)

    def _start_node(self) -> _Node | None:
        metadata, tags = _node_config()
        with self._lock:
            root = self._open.get(_key(metadata))
        if root is None:
            return None
        node_run = uuid.uuid4()
        self.handler.on_chain_start(
            None,
            {},
            run_id=node_run,
            parent_run_id=root,
            tags=tags,
            metadata=dict(metadata),
            name=metadata.get("langgraph_node"),
        )
        return node_run, root, metadata

    def _caller(self, node: _Node | None, request: ToolCallRequest) -> Caller | None:
        if node is None:
            return None
        _, root, metadata = node
        agent = metadata.get(AGENT_NAME_KEY) or DEFAULT_GRAPH_NAME  # the name its trace gets
        return Caller(str(root), request.tool_call.get("id"), agent, recorder=self.handler)

    def _end_tool(self, node: _Node | None, request: ToolCallRequest, result: Any, caller: Caller | None) -> None:
        """A tool call ended. One that hands control to another agent (a ``Command`` to the parent graph, as the
        hand-off tools of ``langgraph-swarm`` and ``langgraph-supervisor`` return) ends this agent's turn too: its
        ``after_agent`` never runs. The turn is recorded then, its answer the hand-off (the message that made it)."""
        if node is not None and caller is not None and caller.agents and caller.call_id:
            self.handler.saw_agents(node[1], caller.call_id, list(caller.agents))
        if not (isinstance(result, Command) and result.graph == Command.PARENT):
            self._end_node(node, list(messages_in(result)))
            return
        call_id = request.tool_call.get("id")
        own = [m for m in messages_in(result) if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        self._end_node(node, list(own))
        if node is None:
            return
        _, root, metadata = node
        with self._lock:
            key = _key(metadata)
            if self._open.get(key) != root:
                return
            del self._open[key]
            self._limits.pop(root, None)
        state = request.state if isinstance(request.state, Mapping) else {}
        made = [m for m in state.get("messages", ()) if isinstance(m, AIMessage)][-1:]
        self.handler.on_chain_end({"messages": [*made, *own]}, run_id=root)

    def _saw_input(self, node: _Node | None, request: ModelRequest[Any]) -> None:
        if node is not None:
            self.handler.saw_model_input(node[0], node[2], *request_input(request), "middleware")

    def _end_node(self, node: _Node | None, messages: list[BaseMessage]) -> None:
        if node is None:
            return
        node_run, root, metadata = node
        self.handler.on_chain_end({"messages": messages}, run_id=node_run, parent_run_id=root)
        step = metadata.get("langgraph_step")
        with self._lock:
            limit, last = self._limits.get(root, (0, None))
            # LangGraph raises once a tick's step passes the last one, even with nothing left to run; a model or tool
            # node is followed by another (tools, the model, after_agent) anyway
            over = isinstance(step, int) and last is not None and step + 1 > last
            if over and self._open.get(_key(metadata)) == root:
                del self._open[_key(metadata)]
                self._limits.pop(root, None)
            else:
                over = False
        if over:
            self.handler.on_chain_error(_recursion_error(limit), run_id=root)

    def _fail_node(self, node: _Node | None, error: BaseException) -> None:
        if node is None:
            return
        node_run, root, metadata = node
        self.handler.on_chain_error(error, run_id=node_run, parent_run_id=root)
        if isinstance(error, GraphBubbleUp):  # an interrupt or a handoff: the run goes on later
            return
        with self._lock:  # the call failed out of the node, so the run fails with it
            key = _key(metadata)
            if self._open.get(key) != root:
                return
            del self._open[key]
            self._limits.pop(root, None)
        self.handler.on_chain_error(error, run_id=root)
