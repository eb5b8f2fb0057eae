"""The replay's copy of the user's graph: the same nodes and edges, with no tool node that can run a tool.

Each tool node (subgraphs' too) either answers from the recording (:func:`~ariadne_lc.replay._tools.serving_node`
stands for its runnable) or is a breakpoint (the replay's loop answers it, or ends there where its agent can hand
off); a node that runs an agent from its own function, whose tools nothing can pause before, is a breakpoint too
(``guard``) or refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ariadne_lc.errors import SubgraphNotReplayableError
from ariadne_lc.replay._own import HANDOFF_PREFIXES
from ariadne_lc.replay._tools import find_tools

__all__ = ["Serving", "isolated"]

Serving = Callable[[str, dict[str, Any]], Any]
"""Makes the runnable that stands for a tool node in a replay: (node name, the node's tools by name) -> runnable."""


def isolated(
    graph: Any, intercept: bool, tool_node: str | None, guard: list[str] | None = None, serving: Serving | None = None
) -> Any:
    """``graph`` with its tool nodes served (``serving``) or stopped before, under ``intercept`` (see the module
    docstring); ``tool_node``: the top level's, when it is not a ``ToolNode``."""
    update: dict[str, Any] = {}
    tool, tools = find_tools(graph, tool_node)
    stops = [*graph.interrupt_before_nodes]
    nodes = dict(graph.nodes)
    if intercept and tool is not None:
        if serving is not None and tool in nodes and not any(n.startswith(HANDOFF_PREFIXES) for n in tools):
            nodes[tool] = nodes[tool].copy({"bound": serving(tool, tools)})
            update["nodes"] = nodes
        else:
            stops.append(tool)
    for name, sub in graph.get_subgraphs():
        node = nodes.get(name)
        if node is not None and node.bound is sub:
            copy = isolated(sub, intercept, None, guard, serving)
            nodes[name] = node.copy({"bound": copy, "subgraphs": [copy]})
            update["nodes"] = nodes
        elif not intercept or not any(
            find_tools(g, None)[0] for g in [sub, *(s for _, s in sub.get_subgraphs(recurse=True))]
        ):
            continue
        elif guard is not None:
            stops.append(name)
            guard.append(name)
        else:
            raise SubgraphNotReplayableError(
                f"node {name!r} calls a subgraph with a tool node from inside its own function: LangGraph gives no "
                "way to pause that subgraph before its tools, so a replay would run them for real. A supervisor's "
                "workers (langgraph-supervisor) are such nodes: record each worker with AriadneMiddleware "
                "(create_agent(..., middleware=[AriadneMiddleware(store)])), whose turns are traces of their own, "
                "replayed on the worker's own graph (docs/harnesses.md). Else add the subgraph as the node itself "
                "(builder.add_node(name, subgraph)), or replay with tool_policy='live' if its tools have no side "
                "effects"
            )
    if stops != list(graph.interrupt_before_nodes):
        update["interrupt_before_nodes"] = stops
    return graph.copy(update=update) if update else graph
