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

import functools
import inspect
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ariadne_lc.errors import SubgraphNotReplayableError
from ariadne_lc.replay._fork import levels_of, path_of, relative
from ariadne_lc.trace import AgentLink, HandedBack, Step, ToolCall, Trace, split_run_id

__all__ = ["HANDOFF_PREFIXES", "NamespacedSaver", "agents_of", "own_graph_of", "reaches_graph"]


class Replayer(Protocol):
    """What finding an inner agent's own graph needs of the :class:`~ariadne_lc.replay.Replayer` (no import circle)."""

    graph: Any

    def graph_at(self, ns: str) -> Any: ...

    def tool_node_of(self, ns: str) -> str | None: ...

    def tools_of(self, ns: str) -> dict[str, Any]: ...

    def on(self, graph: Any) -> Any: ...

    @property
    def agents(self) -> Mapping[str, Any]: ...


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
    configurable["checkpoint_ns"] = relative(str(configurable.get("checkpoint_ns", "")), len(levels_of(prefix)))
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


_LOOKED: str = (
    "its closure, the module globals its function reads (and the functions it calls read), a bound method's object, "
    "a functools.partial's arguments, a deep agent's sub-agent specs"
)
"""Where :func:`_graphs_in` looks for the graph a tool invokes, for the refusal's message."""


def _graphs_in(value: Any, depth: int = 0, seen: set[int] | None = None) -> Iterator[Any]:
    """Compiled graphs a tool's function reaches, a few levels deep: in its closure, in the module globals its code
    names (LangChain's sub-agent pattern: a module-level ``create_agent`` invoked inside a ``@tool``), through the
    functions it calls, a bound method's object, a ``functools.partial``'s function and arguments, and the dicts,
    lists and tuples they hold."""
    seen = set() if seen is None else seen
    if depth > 4 or id(value) in seen:
        return
    seen.add(id(value))
    inner = getattr(value, "bound", None)  # a graph configured with .with_config(...)
    if _compiled(value):
        yield value
    elif _compiled(inner):
        yield inner
    elif isinstance(value, dict):
        for item in value.values():
            yield from _graphs_in(item, depth + 1, seen)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _graphs_in(item, depth + 1, seen)
    elif isinstance(value, functools.partial):
        for item in (value.func, *value.args, *value.keywords.values()):
            yield from _graphs_in(item, depth + 1, seen)
    elif inspect.ismethod(value):
        held = dict(vars(value.__self__)) if hasattr(value.__self__, "__dict__") else {}
        yield from _graphs_in([value.__func__, held], depth + 1, seen)
    else:  # a tool (its function or coroutine), or a function: its closure and the globals its code names
        for function in (getattr(value, "func", None), getattr(value, "coroutine", None)):
            if callable(function) and function is not value:  # a tool's own function: the same level as the tool
                yield from _graphs_in(function, depth, seen)
        for cell in getattr(value, "__closure__", None) or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            yield from _graphs_in(contents, depth + 1, seen)
        yield from _globals_named(value, depth, seen)


def reaches_graph(tool: Any) -> bool:
    """Whether ``tool`` reaches a compiled graph where a replay would look for a sub-agent's (:func:`_graphs_in`)."""
    return next(_graphs_in(tool), None) is not None


def _globals_named(function: Any, depth: int, seen: set[int]) -> Iterator[Any]:
    """What a plain function's code names among its module's globals: graphs, and functions that reach one."""
    code, names = getattr(function, "__code__", None), getattr(function, "__globals__", None)
    if code is None or not isinstance(names, dict):
        return
    for name in code.co_names:
        found = names.get(name)
        if found is not None and (_compiled(found) or inspect.isfunction(found) or isinstance(found, dict | list)):
            yield from _graphs_in(found, depth + 1, seen)


def _called_graph(replayer: Replayer, ns: str, node: str, agent: str | None) -> Any:
    """The graph ``node`` runs from inside its function or one of its tools (``None``: it is the node itself, or
    runs no graph)."""
    parent = replayer.graph_at(ns)
    sub = dict(parent.get_subgraphs()).get(node)
    if sub is not None:
        return None if getattr(parent.nodes.get(node), "bound", None) is sub else sub
    if node != replayer.tool_node_of(ns):
        return None
    given = replayer.agents.get(agent or "")
    if given is not None:
        return given
    held = {id(g): g for tool in replayer.tools_of(ns).values() for g in _graphs_in(tool)}
    named = [g for g in held.values() if g.name == agent] or ([*held.values()] if len(held) == 1 else [])
    if not named:
        seen = ", ".join(sorted({repr(g.name) for g in held.values()})) or "none"
        raise SubgraphNotReplayableError(
            f"the agent {agent!r} ran inside a tool of node {node!r} ({ns or 'top level'}), and no compiled graph of "
            f"that name was found where the tools reach it ({_LOOKED}; graphs found: {seen}). Replays never run a "
            f"tool, so the agent's own graph is needed: hand it over, Auditor(graph, agents={{{agent!r}: <its "
            "compiled graph>}}), or name the graph the tool invokes so (create_agent(..., name=...))"
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
    segments = levels_of(steps[0].checkpoint.task_path or "")
    cut, graph, base = 0, None, replayer
    for depth, (ns, node, _) in enumerate(path_of(steps[0])[:-1]):
        called = _called_graph(base, relative(ns, cut), node, trace.agent_name)
        if called is not None:  # the levels below are looked up in the graph this one called (nested sub-agents)
            cut, graph = depth + 1, called
            saver = NamespacedSaver(replayer.graph.checkpointer, "|".join(segments[:cut]))
            base = replayer.on(called.copy(update={"checkpointer": saver}))
    if graph is None:
        return None
    prefix = "|".join(segments[:cut])
    if any(not (s.checkpoint.task_path or "").startswith(prefix + "|") for s in steps):
        return None  # the parent's own steps are in the trace too: its answer is the parent's, not the inner one's
    view = graph.copy(update={"checkpointer": NamespacedSaver(replayer.graph.checkpointer, prefix)})
    own = replayer.on(view)
    return own, trace.model_copy(update={"steps": tuple(_relative_step(s, cut) for s in trace.steps)})


HANDOFF_PREFIXES = ("transfer_to_", "transfer_back_to_")
"""Names of ``langgraph-supervisor``'s and ``langgraph-swarm``'s hand-off tools ("Successfully transferred to ..."):
a trace holding one holds several agents, and their outputs are bookkeeping, never observations."""


def _hands_off(step: Step) -> bool:
    return any(c.name.startswith(HANDOFF_PREFIXES) for c in step.tool_calls)


def _harness_message(step: Step) -> bool:
    """A message the harness wrote, not a model turn: ``langgraph-supervisor``'s "Transferring back to supervisor"
    with its ``transfer_back_to_*`` call, written by the worker's wrapper node."""
    return bool(step.tool_calls) and all(c.name.startswith("transfer_back_to_") for c in step.tool_calls)


def _crosses(replayer: Replayer, step: Step) -> bool:
    """Whether ``step`` ran inside a graph called from a node's function or tool (its agent's own graph)."""
    try:
        return any(_called_graph(replayer, ns, node, None) is not None for ns, node, _ in path_of(step)[:-1])
    except SubgraphNotReplayableError:
        return True


def agents_of(replayer: Replayer, trace: Trace) -> list[Trace]:
    """``trace`` as the runs of the agents it holds, one trace each (``[trace]`` when it holds one agent's run).

    A trace recorded by a handler on a whole multi-agent graph (``record(supervisor, store)``, a swarm, a deep agent
    whose sub-agents have no recorder of their own) holds the turns of several agents: each run of one agent (the
    steps of one graph namespace: a sub-agent's steps inside a ``task`` call leave its parent's run whole) is audited
    as a trace of its own, so that its replays reach its own answer and its units are counted as its. The run of the
    trace's first step keeps the trace's id; the others get ``<id>~<n>`` and a :attr:`~ariadne_lc.trace.Trace.parent`
    naming the trace and the call (a hand-off, a ``task``) that started them, which names them back
    (:attr:`~ariadne_lc.trace.ToolCall.agents`). Split only where the trace shows several agents: a hand-off between
    agents, or steps that ran inside an agent's own graph (called from a node's function or tool) beside steps that
    did not.

    An agent that handed off and got control back (a supervisor after its worker answered) goes on with the same run:
    the two invocations of its graph are one conversation, and what the worker returned, read by the supervisor's next
    turn, is the hand-off's observation (:attr:`~ariadne_lc.trace.ToolCall.handed_back`).
    """
    steps = [s for s in trace.steps if not _harness_message(s)]
    if not (any(_hands_off(s) for s in steps) or len({_crosses(replayer, s) for s in steps}) > 1):
        return [trace]
    runs: dict[str, list[Step]] = {}
    for step in steps:
        runs.setdefault(step.checkpoint.checkpoint_ns, []).append(step)
    if len(runs) < 2:
        return [trace]
    out: list[Trace] = []
    for n, run in enumerate(_rejoined(list(runs.values()))):
        last = run[-1]
        answered = last.is_final or _hands_off(last)  # an answer, or a hand-off (the run's end, as recorded live)
        answer = trace.final_answer if last is trace.steps[-1] else (last.thought if answered else None)
        before = [s for s in trace.steps[: run[0].index] if s.tool_calls]
        started = before[-1].tool_calls[-1] if before else None
        parent = AgentLink(trace_id=trace.trace_id, call_id=None if started is None else started.id)
        out.append(
            trace.model_copy(
                update={
                    "trace_id": split_run_id(trace.trace_id, n),
                    "steps": tuple(s.model_copy(update={"index": i}) for i, s in enumerate(run)),
                    "final_answer": answer,
                    "agent_name": _agent_name(replayer, last) or trace.agent_name,
                    "parent": trace.parent if n == 0 else parent,
                    "interrupts": trace.interrupts if n == 0 else (),
                }
            )
        )
    return _linked_back(out, trace.trace_id)


def _stable(ns: str) -> tuple[str, ...]:
    return tuple(segment.partition(":")[0] for segment in ns.split("|") if not segment.isdigit()) if ns else ()


def _rejoined(runs: list[list[Step]]) -> list[list[Step]]:
    """``runs`` with each run that took control back after a hand-off joined to the run that handed off: the same
    agent (graph path), whose previous run ended with a hand-off."""
    out: list[list[Step]] = []
    for run in runs:
        agent = _stable(run[0].checkpoint.checkpoint_ns)
        waiting = next((r for r in reversed(out) if _stable(r[0].checkpoint.checkpoint_ns) == agent), None)
        if waiting is not None and _hands_off(waiting[-1]) and waiting[-1].index < run[0].index:
            waiting.extend(run)
        else:
            out.append(run)
    return out


def _linked_back(runs: list[Trace], trace_id: str) -> list[Trace]:
    """``runs`` with each call that started another run naming it (:attr:`~ariadne_lc.trace.ToolCall.agents`) and, for
    a hand-off whose caller's next turn read the started run's answer back, that answer as the call's observation."""
    started: dict[str, list[Trace]] = {}
    for run in runs:
        if run.parent is not None and run.parent.trace_id == trace_id and run.parent.call_id is not None:
            started.setdefault(run.parent.call_id, []).append(run)
    if not started:
        return runs
    out = []
    for run in runs:
        steps = list(run.steps)
        for k, step in enumerate(steps):
            if not any(c.id in started for c in step.tool_calls):
                continue
            after = steps[k + 1] if k + 1 < len(steps) else None
            calls = tuple(_with_runs(c, started.get(c.id or "", []), after) for c in step.tool_calls)
            steps[k] = step.model_copy(update={"tool_calls": calls})
        out.append(run.model_copy(update={"steps": tuple(steps)}) if steps != list(run.steps) else run)
    return out


def _with_runs(call: ToolCall, runs: list[Trace], after: Step | None) -> ToolCall:
    if not runs:
        return call
    back = None
    answer = runs[-1].steps[-1] if runs[-1].steps else None
    answered = answer is not None and (answer.is_final or _hands_off(answer))  # an answer, or a hand-off back with text
    if call.name.startswith(HANDOFF_PREFIXES) and after is not None and answer is not None and answered:
        read = after.model_input is None or any(f":{answer.message_id}:" in m for m in after.model_input.messages)
        if answer.message_id and read and answer.thought.strip():
            back = HandedBack(text=answer.thought, message_id=answer.message_id, trace_id=runs[-1].trace_id)
    agents = tuple(dict.fromkeys((*call.agents, *(r.trace_id for r in runs))))
    return call.model_copy(update={"agents": agents, "handed_back": back})


def _agent_name(replayer: Replayer, step: Step) -> str | None:
    """The agent a step's graph is: the subgraph node's name (a swarm's or a supervisor's agents are nodes named after
    them), or the name of the graph a tool runs."""
    path = path_of(step)
    if len(path) < 2:
        return None
    ns, node, _ = path[-2]
    if node == replayer.tool_node_of(ns):
        held = {id(g): g for tool in replayer.tools_of(ns).values() for g in _graphs_in(tool)}
        return next(iter(held.values())).name if len(held) == 1 else None
    return node
