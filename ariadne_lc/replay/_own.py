"""An agent that runs inside another agent's node function, replayed on its own graph.

``langgraph-supervisor`` wraps each worker in a function (``call_agent``) that invokes the worker's compiled graph:
the worker is a subgraph LangGraph checkpoints (its history is in the parent's checkpointer, under the node's
namespace), but not the node itself, so a replay cannot pause it before its tools through the parent
(:class:`~ariadne_lc.errors.SubgraphNotReplayableError`). Its own turn, though, is a run of its own graph: its
checkpoints hold its whole state, so the worker's graph replays from them alone, as a top-level graph in the
isolated thread. That is what :class:`OwnGraph` does, for a trace whose steps all ran inside one such call (a worker's
turn as ``AriadneMiddleware`` records it): the answer the replay reaches is the worker's, as the trace's is. The
parent is never run, nor is any tool (the worker's tool nodes are breakpoints as usual).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage

from ariadne_lc._twin import Flow
from ariadne_lc.replay._fork import Level, locate, path_of
from ariadne_lc.trace import Step, Trace

if TYPE_CHECKING:
    from ariadne_lc.replay._replayer import Replayer

__all__ = ["OwnGraph", "own_graph_of"]


def _called_from_a_function(parent: Any, node: str) -> Any:
    """The subgraph ``node`` of ``parent`` runs from inside its function (``None`` if it runs none, or is the node)."""
    sub = dict(parent.get_subgraphs()).get(node)
    bound = getattr(parent.nodes.get(node), "bound", None)
    return None if sub is None or bound is sub else sub


def _cut(replayer: Replayer, step: Step) -> int:
    """How many levels of ``step``'s path lie above the deepest graph called from a node's function (0: none)."""
    cut = 0
    for depth, (ns, node, _) in enumerate(path_of(step)[:-1]):
        if _called_from_a_function(replayer.graph_at(ns), node) is not None:
            cut = depth + 1
    return cut


def own_graph_of(replayer: Replayer, trace: Trace) -> OwnGraph | None:
    """The replayer of ``trace`` on its agent's own graph, when every step ran inside one call of a graph from a
    node's function; ``None`` otherwise (the trace is replayed through the top graph)."""
    steps = [s for s in trace.steps if s.checkpoint.task_path]
    if not steps:
        return None
    cut = _cut(replayer, steps[0])
    if cut == 0:
        return None
    prefix = "|".join(steps[0].checkpoint.task_path.split("|")[:cut])  # type: ignore[union-attr]
    if any(not (s.checkpoint.task_path or "").startswith(prefix + "|") for s in steps):
        return None  # the parent's own steps are in the trace too: its answer is the parent's
    return OwnGraph(replayer, prefix, cut)


class OwnGraph:
    """A :class:`~ariadne_lc.replay.Replayer` seen from the graph at namespace ``prefix`` (module docstring):
    namespaces it is asked about are relative to that graph, and the isolated copy is that graph alone."""

    def __init__(self, replayer: Replayer, prefix: str, cut: int) -> None:
        self.top = replayer
        self.prefix = prefix
        self.cut = cut
        self.graph = replayer.graph
        self.tool_policy = replayer.tool_policy
        self.safe_tools = replayer.safe_tools
        self.max_turns = replayer.max_turns
        self.tool_calls = replayer.tool_calls
        self.tool_call_deriver = replayer.tool_call_deriver

    def _original(self, ns: str) -> str:
        return f"{self.prefix}|{ns}" if ns else self.prefix

    def tool_node_of(self, ns: str) -> str | None:
        return self.top.tool_node_of(self._original(ns))

    def tools_of(self, ns: str) -> dict[str, Any]:
        return self.top.tools_of(self._original(ns))

    def channels_of(self, ns: str) -> Mapping[str, Any]:
        return self.top.channels_of(self._original(ns))

    def locate(self, step: Step) -> Flow[tuple[list[Level], AIMessage]]:
        return locate(self.top.graph, step, self.top.tool_node_of, cut=self.cut)

    def isolated_graph(self, saver: Any, *, intercept: bool) -> Any:
        return self.top.isolated_graph(saver, intercept=intercept, graph=self.top.graph_at(self.prefix))
