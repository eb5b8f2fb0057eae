"""The :class:`Replayer`: configuration, the user's graph at each subgraph level, and the public calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage

from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.errors import AsyncSaverError, ConfigurationError, NoCheckpointerError, SubgraphNotReplayableError
from ariadne_lc.records import ReplayMode
from ariadne_lc.replay._action import DerivedAction, action_flow, state_flow
from ariadne_lc.replay._derive import DeriveFunction, ToolCallDeriver, as_deriver
from ariadne_lc.replay._drive import replay_flow
from ariadne_lc.replay._fork import Forks, Level, StateEdit, path_of
from ariadne_lc.replay._handback import handed_back, handed_back_flow
from ariadne_lc.replay._isolated import Serving, isolated
from ariadne_lc.replay._own import agents_of, own_graph_of
from ariadne_lc.replay._sources import AnyActionSource, action_source_of, source_at
from ariadne_lc.replay._tools import Served, find_tools, serving_node
from ariadne_lc.replay._types import DEFAULT_MAX_TURNS, EARLY_ANSWER_INSTRUCTION, ReplayResult, ToolPolicy
from ariadne_lc.trace import Step, ToolCall, Trace

__all__ = ["Replayer", "action_source_of"]  # action_source_of: re-exported (its home: ._sources)

_OWN_CACHE = 256
"""Traces whose replayer (this one, or one on an inner agent's own graph) is kept, for a batch's audits of a trace."""


def _stable(ns: str) -> tuple[str, ...]:
    """Node names along a checkpoint namespace (``a:<task>|b:<task>`` -> ``("a", "b")``)."""
    return tuple(segment.partition(":")[0] for segment in ns.split("|") if not segment.isdigit()) if ns else ()


class Replayer:
    """Runs counterfactual replays of recorded steps on the user's compiled graph.

    Args:
        graph: The compiled graph the trace was recorded from, with its production checkpointer.
        tool_policy: ``"recorded"`` (default) or ``"live"``.
        safe_tools: Names of tools without side effects that may run live under ``recorded``.
        tool_node: The name of the top-level graph's tool-executing node; found automatically when it
            is a ``ToolNode`` (subgraphs' tool nodes are always found automatically).
        max_turns: Turn limit after the fork.
        tool_calls: What happens to the substituted step's own tool calls: ``"recorded"`` (default) keeps them
            and their recorded outputs; ``"rederive"`` replaces them with the calls ``tool_call_deriver`` derives
            from the substituted thought (new ids), answered by the tool policy like any other call
            (docs/method.md#the-steps-own-tool-calls).
        tool_call_deriver: For ``"rederive"`` (required there, refused otherwise): a
            :class:`~ariadne_lc.replay.ToolCallDeriver`, a function ``(thought, context) -> tool calls``, or a
            chat model (asked by a :class:`~ariadne_lc.replay.ContinuationDeriver`).
        action_model: The agent's own chat model, re-run with a thought as the start of its reply for the
            ``thought->action`` link (:func:`action_source_of` says who re-runs it when this is ``None``).
    """

    def __init__(
        self,
        graph: Any,
        *,
        tool_policy: ToolPolicy | str = ToolPolicy.RECORDED,
        safe_tools: Iterable[str] = (),
        tool_node: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        tool_calls: ReplayMode = "recorded",
        tool_call_deriver: ToolCallDeriver | DeriveFunction | BaseChatModel | None = None,
        action_model: BaseChatModel | None = None,
        agents: Mapping[str, Any] | None = None,
    ) -> None:
        if not hasattr(graph, "get_state_history") or not hasattr(graph, "copy"):
            raise ConfigurationError(
                "expected a compiled LangGraph graph (StateGraph.compile() or create_agent), "
                f"got {type(graph).__name__}"
            )
        if getattr(graph, "checkpointer", None) in (None, False):
            raise NoCheckpointerError(
                "the graph was compiled without a checkpointer, so there is no history to fork from; "
                "compile it with one, e.g. graph = builder.compile(checkpointer=SqliteSaver(conn))"
            )
        try:
            self.tool_policy = ToolPolicy(tool_policy)
        except ValueError:
            raise ConfigurationError(f"unknown tool_policy {tool_policy!r}; use 'recorded' or 'live'") from None
        if max_turns < 1:
            raise ConfigurationError(f"max_turns must be at least 1, got {max_turns}")
        nodes = getattr(graph, "nodes", {})
        if tool_node is not None and tool_node not in nodes:
            raise ConfigurationError(f"tool_node {tool_node!r} is not a node of the graph; nodes: {sorted(nodes)}")
        self.tool_calls, self.tool_call_deriver = _tool_call_mode(tool_calls, tool_call_deriver)
        self.graph = graph
        self.safe_tools = frozenset(safe_tools)
        self.max_turns = max_turns
        self.tool_node, self._tools = find_tools(graph, tool_node)
        self.action_model = action_model
        self.agents: Mapping[str, Any] = dict(agents or {})
        """Agent name -> its compiled graph, where a sub-agent's graph cannot be found by itself (:mod:`._own`)."""
        self.action_source: AnyActionSource | None = action_source_of(
            graph, action_model, self.tool_call_deriver, agents=bool(self.agents)
        )
        """Who re-runs a step's model for the ``thought->action`` link (``None``: that link cannot be audited)."""
        self._levels: dict[tuple[str, ...], tuple[str | None, dict[str, Any]]] = {(): (self.tool_node, self._tools)}
        self._own: dict[str, tuple[Replayer, Trace]] = {}
        self._own_lock = threading.Lock()
        self._forks = Forks()

    # -- public ------------------------------------------------------------------------------------

    def replay(self, trace: Trace, step_index: int, thought: str) -> ReplayResult:
        """Substitute ``thought`` for step ``step_index`` of ``trace`` and run the graph to the end."""
        return self.replay_steps(trace, {step_index: thought})

    async def areplay(self, trace: Trace, step_index: int, thought: str) -> ReplayResult:
        """Async twin of :meth:`replay` (needed for async-only savers such as ``AsyncSqliteSaver``)."""
        return await self.areplay_steps(trace, {step_index: thought})

    def replay_steps(
        self,
        trace: Trace,
        thoughts: Mapping[int, str],
        *,
        outputs: Mapping[str, str] | None = None,
        calls: Sequence[ToolCall] | None = None,
        reply: str = "",
    ) -> ReplayResult:
        """Substitute several steps' thoughts at once (step index -> thought) and run on from the latest.

        ``outputs`` (tool call id -> output) serves those tool outputs instead of the recorded ones (an
        ``observation_swap``); the tool node is then never run, whatever the tool policy. ``calls`` replaces the
        latest step's tool calls (the calls its model made with the new thought, from :meth:`derive_action`),
        answered under the tool policy; with no calls, ``reply`` (the re-run's text) follows the thought as the
        step's answer.
        """
        self.check_sync("replay_steps", "areplay_steps")
        return run_sync(self._steps_flow(trace, thoughts, outputs, calls, reply))

    async def areplay_steps(
        self,
        trace: Trace,
        thoughts: Mapping[int, str],
        *,
        outputs: Mapping[str, str] | None = None,
        calls: Sequence[ToolCall] | None = None,
        reply: str = "",
    ) -> ReplayResult:
        """Async twin of :meth:`replay_steps`."""
        return await run_async(self._steps_flow(trace, thoughts, outputs, calls, reply))

    def _steps_flow(
        self,
        trace: Trace,
        thoughts: Mapping[int, str],
        outputs: Mapping[str, str] | None,
        calls: Sequence[ToolCall] | None,
        reply: str,
    ) -> Flow[ReplayResult]:
        """A replay from the steps' thoughts, or of what an agent handed back when ``outputs`` swaps that
        (:mod:`._handback`)."""
        replayer, seen = self._for(trace)
        handed = handed_back(seen, outputs or {})
        if handed is not None:
            return handed_back_flow(replayer, seen, *handed)
        return replay_flow(
            replayer, seen, thoughts, early=False, instruction="", outputs=outputs, calls=calls, reply=reply
        )

    def derive_action(self, trace: Trace, step_index: int, thought: str) -> DerivedAction:
        """The calls step ``step_index``'s model makes when ``thought`` starts its reply (never run; the
        ``thought->action`` link, :mod:`ariadne_lc.replay._action`).

        Raises:
            ConfigurationError: No way to re-run the step's model (see :attr:`action_source`).
        """
        self.check_sync("derive_action", "aderive_action")
        replayer, seen = self._for(trace)
        return run_sync(action_flow(replayer, seen, step_index, thought, source_at(replayer, seen, step_index)))

    async def aderive_action(self, trace: Trace, step_index: int, thought: str) -> DerivedAction:
        """Async twin of :meth:`derive_action`."""
        replayer, seen = self._for(trace)
        return await run_async(action_flow(replayer, seen, step_index, thought, source_at(replayer, seen, step_index)))

    def derive_next_action(
        self, trace: Trace, step_index: int, edit: Callable[[Mapping[str, Any]], StateEdit], *, changes: int
    ) -> DerivedAction:
        """The calls the model turn after step ``step_index`` makes when the state before it is changed by ``edit``
        (given that state, it says what to change: what the step's tool wrote, where the agent reads it); never run.
        The turn's input must be the recorded one with ``changes`` messages changed (:mod:`~ariadne_lc.replay._action`).
        """
        self.check_sync("derive_next_action", "aderive_next_action")
        replayer, seen = self._for(trace)
        return run_sync(state_flow(replayer, seen, step_index, edit, changes))

    async def aderive_next_action(
        self, trace: Trace, step_index: int, edit: Callable[[Mapping[str, Any]], StateEdit], *, changes: int
    ) -> DerivedAction:
        """Async twin of :meth:`derive_next_action`."""
        replayer, seen = self._for(trace)
        return await run_async(state_flow(replayer, seen, step_index, edit, changes))

    def replay_early_answer(
        self, trace: Trace, step_index: int, *, instruction: str = EARLY_ANSWER_INSTRUCTION
    ) -> ReplayResult:
        """Cut the run right after step ``step_index``'s thought and ask the model for its answer."""
        self.check_sync("replay_early_answer", "areplay_early_answer")
        thoughts = {step_index: trace.step(step_index).thought}
        return run_sync(replay_flow(*self._for(trace), thoughts, early=True, instruction=instruction))

    async def areplay_early_answer(
        self, trace: Trace, step_index: int, *, instruction: str = EARLY_ANSWER_INSTRUCTION
    ) -> ReplayResult:
        """Async twin of :meth:`replay_early_answer`."""
        thoughts = {step_index: trace.step(step_index).thought}
        return await run_async(replay_flow(*self._for(trace), thoughts, early=True, instruction=instruction))

    def check_sync(self, method: str, async_method: str) -> None:
        """Refuse a synchronous call that the graph's async saver cannot serve from this thread.

        LangGraph's async savers (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) remember the event loop
        they were made on (``saver.loop``) and refuse synchronous calls from that loop's thread with
        ``asyncio.InvalidStateError``, which says nothing about the audit. Refused here first, with the
        method to await instead.
        """
        loop = getattr(self.graph.checkpointer, "loop", None)
        if not isinstance(loop, asyncio.AbstractEventLoop):
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return
        if running is loop:
            saver = type(self.graph.checkpointer).__name__
            raise AsyncSaverError(
                f"{method}() was called inside the event loop that the graph's {saver} is bound to, which "
                f"answers synchronous calls only from other threads: use 'await {async_method}(...)' instead "
                f"(or call {method}() from another thread)"
            )

    # -- the graph at each level -------------------------------------------------------------------

    def graph_at(self, ns: str) -> Any:
        """The graph that runs at checkpoint namespace ``ns`` (the top graph for ``""``)."""
        graph = self.graph
        for name in _stable(ns):
            graph = dict(graph.get_subgraphs()).get(name)
            if graph is None:
                raise SubgraphNotReplayableError(
                    f"no subgraph of node {name!r} along {ns!r}: the graph given to the Replayer is not the one "
                    "the trace was recorded from, or the subgraph is created anew inside its node at each call "
                    "(LangGraph can only find subgraphs that exist when the parent is compiled)"
                )
        return graph

    def _level(self, ns: str) -> tuple[str | None, dict[str, Any]]:
        key = _stable(ns)
        if key not in self._levels:
            self._levels[key] = find_tools(self.graph_at(ns), None)
        return self._levels[key]

    def channels_of(self, ns: str) -> Mapping[str, Any]:
        """The channels of the graph at checkpoint namespace ``ns`` (how its checkpoints store each value)."""
        return dict(self.graph_at(ns).channels)

    def tool_node_of(self, ns: str) -> str | None:
        """The tool node of the graph at checkpoint namespace ``ns``."""
        return self._level(ns)[0]

    def tools_of(self, ns: str) -> dict[str, Any]:
        """The tools (by name) of the graph at checkpoint namespace ``ns``."""
        return self._level(ns)[1]

    def isolated_graph(
        self,
        saver: Any,
        *,
        intercept: bool,
        guard: list[str] | None = None,
        served: Served | None = None,
        early: bool = False,
    ) -> Any:
        """The user's graph on ``saver``; with ``intercept``, no tool node (subgraphs' too) runs: each is a
        breakpoint, or with ``served`` a :func:`~ariadne_lc.replay._tools.serving_node` answering from it (``early``:
        refusing every call), except where its agent can hand off (a breakpoint: the replay ends there). ``guard``: a
        node that runs an agent from its function (whose tools cannot be paused before) is a breakpoint too, its name
        added to ``guard``, instead of a refusal (a replay that must never reach such a node)."""
        serving: Serving | None = None
        if served is not None:
            safe = self.safe_tools

            def serving(name: str, tools: dict[str, Any]) -> Any:
                return serving_node(name, served, tools, safe, early)

        return isolated(self.graph, intercept, self.tool_node, guard, serving).copy(update={"checkpointer": saver})

    def locate(self, step: Step) -> Flow[tuple[list[Level], AIMessage]]:
        """The levels down to ``step`` and its original message (:func:`~ariadne_lc.replay._fork.locate`; once per
        step: :class:`~ariadne_lc.replay._fork.Forks`)."""
        return self._forks.locate(self.graph, step, self.tool_node_of, self.channels_of)

    def on(self, graph: Any) -> Replayer:
        """A replayer of ``graph`` with this one's options (an inner agent's own graph: :mod:`._own`); it re-runs a
        step's model as this one would (the system's middleware or models stand for an agent without its own)."""
        inner = Replayer(
            graph,
            tool_policy=self.tool_policy,
            safe_tools=self.safe_tools,
            max_turns=self.max_turns,
            tool_calls=self.tool_calls,
            tool_call_deriver=self.tool_call_deriver,
            action_model=self.action_model,
            agents=self.agents,
        )
        if inner.action_source is None:
            inner.action_source = self.action_source
        return inner

    def agents_of(self, trace: Trace) -> list[Trace]:
        """``trace`` as one trace per agent's run it holds (:func:`~ariadne_lc.replay._own.agents_of`)."""
        return agents_of(self, trace)

    def tools_for(self, trace: Trace, index: int) -> dict[str, Any]:
        """The tools (by name) of the agent that made step ``index`` of ``trace``, wherever it runs."""
        replayer, seen = self._for(trace)
        return replayer.tools_of(path_of(seen.step(index))[-1][0])

    def _for(self, trace: Trace) -> tuple[Replayer, Trace]:
        """Who replays ``trace``, and the trace as it sees it: this replayer, or one on the trace's agent's own graph
        when the agent ran inside another's node function or tool (:mod:`._own`). Kept per trace (bounded)."""
        key = trace.trace_id
        with self._own_lock:
            cached = self._own.get(key)
        if cached is not None and cached[1].steps and len(cached[1].steps) == len(trace.steps):
            return cached
        found = own_graph_of(self, trace) or (self, trace)
        with self._own_lock:
            if len(self._own) >= _OWN_CACHE:
                self._own.pop(next(iter(self._own)))
            self._own[key] = found
        return found


def _tool_call_mode(
    mode: str, deriver: ToolCallDeriver | DeriveFunction | BaseChatModel | None
) -> tuple[ReplayMode, ToolCallDeriver | None]:
    if mode == "recorded":
        if deriver is not None:
            raise ConfigurationError(
                "tool_call_deriver is only used with tool_calls='rederive'; with 'recorded' the step's own tool "
                "calls and their recorded outputs are kept"
            )
        return "recorded", None
    if mode == "rederive":
        if deriver is None:
            raise ConfigurationError(
                "tool_calls='rederive' needs a tool_call_deriver: the agent's own chat model (asked in a "
                "continuation call), a ToolCallDeriver, or a function (thought, context) -> tool calls"
            )
        return "rederive", as_deriver(deriver)
    raise ConfigurationError(f"unknown tool_calls {mode!r}; use one of {list(get_args(ReplayMode))}")
