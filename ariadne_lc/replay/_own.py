"""An agent that runs inside another agent's node function or tool, replayed on its own graph.

``langgraph-supervisor`` wraps each worker in a function that invokes the worker's compiled graph; a deep agent's
``task`` tool invokes a sub-agent's. Either way the inner agent's graph is checkpointed in the parent's checkpointer,
under the namespace of the node (or tool call) that ran it, but a replay cannot go through the parent: LangGraph
cannot pause a graph that a function calls before its tools, and a replay never runs a tool node. The inner agent's
own turn, though, is a run of its own graph, and its checkpoints hold its whole state. So a trace whose steps all ran
inside one such call (the inner agent's turn as ``AriadneMiddleware`` records it) is replayed on that graph alone:

- its graph is found where the parent keeps it: a subgraph LangGraph lists for the node (``get_subgraphs``), or a
  compiled graph held by one of the node's tools (the ``task`` tool's sub-agents), by the trace's agent name;
- the production history is read through :class:`NamespacedSaver`, a read-only view of the parent's checkpointer in
  which the inner graph's namespace is the top level; the trace's task paths are read relative to it;
- an ordinary :class:`~ariadne_lc.replay.Replayer` on that graph does the rest (the fork, the isolated thread, tool
  calls answered from the record, the replay invariant). The answer it reaches is the inner agent's, as the trace's
  is; the parent never runs, nor does any tool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ariadne_lc.errors import SubgraphNotReplayableError
from ariadne_lc.replay._fork import path_of, relative
from ariadne_lc.trace import Step, Trace


class Replayer(Protocol):
    """What finding an inner agent's own graph needs of the :class:`~ariadne_lc.replay.Replayer` (no import circle)."""

    graph: Any

    def graph_at(self, ns: str) -> Any: ...

    def tool_node_of(self, ns: str) -> str | None: ...

    def tools_of(self, ns: str) -> dict[str, Any]: ...

    def on(self, graph: Any) -> Any: ...

__all__ = ["NamespacedSaver", "own_graph_of"]


def _within(config: Any, prefix: str) -> Any:
    if config is None:
        return None
    configurable = dict(config.get("configurable") or {})
    ns = configurable.get("checkpoint_ns", "")
    configurable["checkpoint_ns"] = f"{prefix}|{ns}" if ns else prefix
    return {**config, "configurable": configurable}


def _outside(config: Any, prefix: str) -> Any:
    if config is None:
        return None
    configurable = dict(config.get("configurable") or {})
    configurable["checkpoint_ns"] = relative(str(configurable.get("checkpoint_ns", "")), prefix.count("|") + 1)
    return {**config, "configurable": configurable}


class NamespacedSaver(BaseCheckpointSaver[Any]):
    """A read-only view of ``saver`` in which namespace ``prefix`` is the top level (module docstring)."""

    def __init__(self, saver: BaseCheckpointSaver[Any], prefix: str) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver
        self.prefix = prefix

    def _tuple(self, found: CheckpointTuple | None) -> CheckpointTuple | None:
        if found is None:
            return None
        return found._replace(
            config=_outside(found.config, self.prefix), parent_config=_outside(found.parent_config, self.prefix)
        )

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        return self._tuple(self.saver.get_tuple(_within(config, self.prefix)))

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        return self._tuple(await self.saver.aget_tuple(_within(config, self.prefix)))

    def list(
        self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None, limit: int | None = None
    ) -> Iterator[CheckpointTuple]:
        found = self.saver.list(
            _within(config, self.prefix), filter=filter, before=_within(before, self.prefix), limit=limit
        )
        for item in found:
            yield self._tuple(item)  # type: ignore[misc]

    async def alist(
        self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None, limit: int | None = None
    ) -> AsyncIterator[CheckpointTuple]:
        found = self.saver.alist(
            _within(config, self.prefix), filter=filter, before=_within(before, self.prefix), limit=limit
        )
        async for item in found:
            yield self._tuple(item)  # type: ignore[misc]

    def get_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Mapping[str, Any]:
        return self.saver.get_delta_channel_history(config=_within(config, self.prefix), channels=channels)

    async def aget_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Mapping[str, Any]:
        return await self.saver.aget_delta_channel_history(config=_within(config, self.prefix), channels=channels)


def _compiled(value: Any) -> bool:
    """A compiled LangGraph graph (``Pregel``; told by its methods: importing ``langgraph.pregel`` loads the SDK)."""
    return all(hasattr(value, name) for name in ("get_state_history", "get_subgraphs", "nodes", "copy"))


def _graphs_in(value: Any, depth: int = 0) -> Iterator[Any]:
    """Compiled graphs a tool's function holds (in its closure, in dicts and lists there), a few levels deep."""
    if depth > 4:
        return
    inner = getattr(value, "bound", None)  # a graph configured with .with_config(...)
    if _compiled(value):
        yield value
    elif _compiled(inner):
        yield inner
    elif isinstance(value, dict):
        for item in value.values():
            yield from _graphs_in(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _graphs_in(item, depth + 1)
    else:  # a tool (its function), or a function: what its closure holds
        for function in (getattr(value, "func", None), getattr(value, "coroutine", None), value):
            for cell in getattr(function, "__closure__", None) or ():
                try:
                    contents = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                yield from _graphs_in(contents, depth + 1)


def _called_graph(replayer: Replayer, ns: str, node: str, agent: str | None) -> Any:
    """The graph ``node`` runs from inside its function or one of its tools (``None``: it is the node itself, or
    runs no graph)."""
    parent = replayer.graph_at(ns)
    sub = dict(parent.get_subgraphs()).get(node)
    if sub is not None:
        return None if getattr(parent.nodes.get(node), "bound", None) is sub else sub
    if node != replayer.tool_node_of(ns):
        return None
    named = [g for tool in replayer.tools_of(ns).values() for g in _graphs_in(tool) if g.name == agent]
    if not named:
        raise SubgraphNotReplayableError(
            f"the agent {agent!r} ran inside a tool of node {node!r} ({ns or 'top level'}), and none of that node's "
            "tools holds a compiled graph of that name: replays never run a tool, so the agent's own graph is "
            "needed. Give the inner agent a name (create_agent(..., name=...)) that its tool's graph carries"
        )
    return named[0]


def _relative_step(step: Step, cut: int) -> Step:
    ref = step.checkpoint
    ns = relative(ref.checkpoint_ns, cut)
    path = relative(ref.task_path or "", cut) or None
    return step.model_copy(update={"checkpoint": ref.model_copy(update={"checkpoint_ns": ns, "task_path": path})})


def own_graph_of(replayer: Replayer, trace: Trace) -> tuple[Any, Trace] | None:
    """A replayer of ``trace``'s agent on its own graph, and the trace as that graph sees it (namespaces relative to
    it), when every step ran inside one call of a graph from a node's function or tool; ``None`` otherwise."""
    steps = [s for s in trace.steps if s.checkpoint.task_path]
    if not steps:
        return None
    cut, graph = 0, None
    for depth, (ns, node, _) in enumerate(path_of(steps[0])[:-1]):
        called = _called_graph(replayer, ns, node, trace.agent_name)
        if called is not None:
            cut, graph = depth + 1, called
    if graph is None:
        return None
    prefix = "|".join((steps[0].checkpoint.task_path or "").split("|")[:cut])
    if any(not (s.checkpoint.task_path or "").startswith(prefix + "|") for s in steps):
        return None  # the parent's own steps are in the trace too: its answer is the parent's, not the inner one's
    view = graph.copy(update={"checkpointer": NamespacedSaver(replayer.graph.checkpointer, prefix)})
    own = replayer.on(view)
    return own, trace.model_copy(update={"steps": tuple(_relative_step(s, cut) for s in trace.steps)})
