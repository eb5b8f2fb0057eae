"""Who re-runs a step's model for the ``thought->action`` link, for a given graph: the agent's model given to the
auditor, the graph's :class:`~ariadne_lc.AriadneMiddleware`, a tool-call deriver, or in a multi-agent system each
agent's own model found in its node (resolved per step: :func:`source_at`)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from ariadne_lc._fingerprint import agent_parts_of
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.replay._action import ActionSource
from ariadne_lc.replay._derive import AgentModel, ContinuationDeriver, ToolCallDeriver
from ariadne_lc.replay._own import HANDOFF_PREFIXES, reaches_graph
from ariadne_lc.replay._tools import find_tools
from ariadne_lc.trace import Trace

__all__ = ["MIDDLEWARE_NODE_PREFIX", "AnyActionSource", "action_source_of", "recorded_by_middleware", "source_at"]

MIDDLEWARE_NODE_PREFIX = "AriadneMiddleware."
"""create_agent names a middleware's hook nodes ``<middleware name>.<hook>``: how a graph with ours is found."""


AnyActionSource = ActionSource | Literal["graph"]
"""Who re-runs a step's model, as the Replayer knows it: ``graph`` (a multi-agent system without the middleware) is each
agent's own model found in its node, resolved per step (:meth:`Replayer._source`)."""


def action_source_of(
    graph: Any, model: BaseChatModel | None, deriver: ToolCallDeriver | None, *, agents: bool = False
) -> AnyActionSource | None:
    """Who re-runs a step's model for the ``thought->action`` link: the agent's model when given (a continuation
    of the thought, as prefill), else the graph's :class:`~ariadne_lc.AriadneMiddleware` (which re-runs the model
    call exactly as it was made; in the graph or any of its subgraphs, such as a supervisor's workers), else the
    tool-call deriver (graph code), else nobody. ``agents``: sub-agents' graphs were given (``Auditor(agents=...)``),
    so the graph is a multi-agent system although no tool shows it."""
    if model is not None:
        return ContinuationDeriver(model, instruction=None)
    subgraphs = [g for _, g in graph.get_subgraphs(recurse=True)] if hasattr(graph, "get_subgraphs") else []
    if any(recorded_by_middleware(g) for g in [graph, *subgraphs]):
        return "middleware"
    if deriver is None and (agents or _hands_off(graph) or _calls_agents(graph)):
        return "graph"  # a multi-agent system: each agent's own model, found in its node (Replayer._source)
    return deriver


def _hands_off(graph: Any) -> bool:
    """Whether some agent of ``graph`` can hand off to another (``langgraph-supervisor``, ``langgraph-swarm``)."""
    for _, sub in [("", graph), *(graph.get_subgraphs(recurse=True) if hasattr(graph, "get_subgraphs") else [])]:
        _, tools = find_tools(sub, None)
        if any(name.startswith(HANDOFF_PREFIXES) for name in tools):
            return True
    return False


def _calls_agents(graph: Any) -> bool:
    """Whether a tool of ``graph`` invokes another agent's graph (LangChain's sub-agent pattern, a deep agent's
    ``task``): a multi-agent system, whose agents the ``thought->action`` link re-runs each with its own model
    however the system was recorded (by a handler on the top agent as by ``AriadneMiddleware``)."""
    _, tools = find_tools(graph, None)
    return any(reaches_graph(tool) for tool in tools.values())


def recorded_by_middleware(graph: Any) -> bool:
    return any(str(name).startswith(MIDDLEWARE_NODE_PREFIX) for name in getattr(graph, "nodes", {}))


def source_at(replayer: Any, trace: Trace, index: int) -> ActionSource:
    """Who re-runs step ``index``'s model: the replayer's :attr:`~ariadne_lc.replay.Replayer.action_source`, resolved
    for a multi-agent system to the step's own agent (its model found in its node)."""
    source: AnyActionSource | None = replayer.action_source
    step = trace.step(index)
    graph = replayer.graph_at(step.checkpoint.checkpoint_ns)
    if source in ("middleware", "graph") and not recorded_by_middleware(graph):
        # the middleware wraps other agents of the graph, not this step's: its own model, found in the graph
        models, prompts = agent_parts_of(graph, step.node)
        system = prompts[0] if len(prompts) == 1 else None
        found = AgentModel(models[0], instruction=None, system=system) if len(models) == 1 else None
        source = found or replayer.tool_call_deriver
        if source is None:
            many = f"{len(models)} chat models" if models else "no chat model"
            raise ConfigurationError(
                f"the thought->action link needs a way to re-run step {index}'s model: its agent (node "
                f"{step.node!r}) is not built with AriadneMiddleware, and {many} can be found in that node. Add "
                "AriadneMiddleware to that agent, or pass Auditor(graph, model=<that agent's chat model>)"
            )
    if source is None or source == "graph":
        raise ConfigurationError(
            "the thought->action link needs a way to re-run the step's model: record the agent with "
            "AriadneMiddleware (create_agent), or pass Auditor(graph, model=<the agent's chat model>) or a "
            "tool_call_deriver"
        )
    return source
