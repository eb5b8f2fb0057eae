"""Agents that run beneath a recorded agent: one recorder on the top agent records every agent under it.

A sub-agent is an agent run started while a tool call of a recorded run is in flight (LangChain's sub-agent pattern: a
``@tool`` function that invokes another ``create_agent``; a deep agent's ``task`` tool), at any depth. Each is recorded
as its own trace, linked both ways to the call that started it (``Trace.parent``, ``ToolCall.agents``), whoever
records the top agent:

- the callback handler (``record(graph, store)``) sees the tool call start (``on_tool_start``; LangChain passes the
  call's id) and makes it the :data:`CALLER` of what runs inside it: LangChain copies the context into the tool's
  function after that callback, so the variable reaches the sub-agent;
- :class:`~ariadne_lc.AriadneMiddleware` sets :data:`CALLER` around the tool call it wraps, and puts its handler where
  LangChain's callback configuration adds it to every run configured inside the call (:data:`RECORDER`, a configure
  hook), so the sub-agent's runs reach the handler although the sub-agent carries no middleware.

Under a caller, the handler starts a run of its own for each run started right inside the tool's run (the
sub-agent's graph, invoked by the tool's function): it becomes a trace only if nodes of a graph ran in it (the run of
a plain chain inside a tool records nothing and is forgotten, with its link).

A sub-agent that records itself (its own ``AriadneMiddleware``) is recorded once: its own recorder links it to the
caller, and the handler's run of it is dropped when the sub-agent's recording node starts (:func:`records_itself`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final

from langchain_core.tracers.context import register_configure_hook

__all__ = [
    "AGENT_NAME_KEY",
    "CALLER",
    "DEFAULT_GRAPH_NAME",
    "RECORDER",
    "Caller",
    "records_itself",
    "root_metadata",
    "self_recording",
]

DEFAULT_GRAPH_NAME: Final = "LangGraph"
"""A graph's root run name when it was given no ``name`` (LangGraph's default)."""
AGENT_NAME_KEY: Final = "lc_agent_name"
"""Where ``create_agent`` puts its ``name`` in the run metadata."""
_NODE_ONLY_KEYS: Final = frozenset({"checkpoint_ns", "checkpoint_id"})
"""Metadata LangGraph adds to a node's config but not to the root run's (besides ``langgraph_*``)."""


@dataclass(slots=True)
class Caller:
    """A tool call in flight, for the agent runs it starts (a ``@tool`` that invokes a sub-agent, a deep agent's
    ``task``)."""

    trace_id: str
    """The trace of the run that made the call."""
    call_id: str | None
    agent_name: str | None
    agents: list[str] = field(default_factory=list)
    """The trace ids of the agent runs the call started, in order."""
    recorder: Any = None
    """The handler recording the calling run: it records the sub-agents (``None``: their own recorders do)."""
    tool_run: int | None = None
    """The tool's own run (``UUID.int``) as LangChain's callbacks know it: the parent of a sub-agent's root run."""
    tool_span: Any = None
    """The recorder's ``execute_tool`` span of the call (:mod:`._spans`): the parent of a sub-agent's span."""

    def forget(self, trace_id: str) -> None:
        """Take back the link to ``trace_id``: that run is not kept (it recorded itself, ran no agent, or paused)."""
        if trace_id in self.agents:
            self.agents.remove(trace_id)


CALLER: ContextVar[Caller | None] = ContextVar("ariadne_caller", default=None)
"""The tool call whose function is running here: an agent run that starts under it is its child. A context
variable follows the call into LangChain's and LangGraph's worker threads (they copy the context)."""

RECORDER: ContextVar[Any] = ContextVar("ariadne_subagent_recorder", default=None)
"""The handler of an ``AriadneMiddleware`` while one of its tool calls runs: LangChain adds it (inheritable) to the
callbacks of every run configured inside the call, so that a sub-agent without a recorder of its own is recorded."""

register_configure_hook(RECORDER, inheritable=True)

_SELF_RECORDING: set[str] = set()
"""Node names of the middleware that records an agent itself (``AriadneMiddleware.before_agent``)."""


def self_recording(node: str) -> None:
    """Declare ``node`` the node of a middleware that records its agent itself (``AriadneMiddleware`` does, for its
    ``before_agent``)."""
    _SELF_RECORDING.add(node)


def records_itself(node: str | None) -> bool:
    """Whether a run with node ``node`` records itself (its own ``AriadneMiddleware``)."""
    return node in _SELF_RECORDING


def root_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """An agent run's own metadata, read inside one of its nodes or its root: without what LangGraph adds per node."""
    return {k: v for k, v in metadata.items() if not k.startswith("langgraph_") and k not in _NODE_ONLY_KEYS}
