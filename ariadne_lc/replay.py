"""Fork the user's own graph at a recorded step, substitute the thought, and run on to a new answer.

How (all verified on langgraph 1.2, see DESIGN.md):

1. Find the checkpoint *before* the step: the snapshot in the production thread's history whose
   pending tasks include the task id the recorder saw. The history is only read.
2. Copy that snapshot's values into a fresh thread of a separate in-memory saver
   (``graph.copy(update={"checkpointer": InMemorySaver()})``), appending the step's own AI message
   with the thought replaced (same id, tool calls kept), as if the step's node had written it. The
   production thread's head and history stay exactly as they were.
3. Resume. Under the ``recorded`` tool policy the tool node never runs: each time the graph is about
   to enter it, we answer the calls ourselves (a call identical to a recorded one gets the recorded
   output, a tool declared safe runs live, anything else gets an explicit "unavailable during audit"
   message and the result is flagged) and write the tool messages as the tool node; otherwise the
   graph runs with ``interrupt_before=[tool node]`` so that it pauses when the model asks again.
   Side-effecting tools are therefore never re-executed.

Three variants serve the controls and multi-step interventions:

- **Several steps at once** (:meth:`Replayer.replay_steps`, formulation 10.1): the fork is the
  checkpoint before the *latest* chosen step; every chosen step's AI message in that state is
  rewritten in place (same id, tool calls and tool outputs kept) and the latest one is written as
  usual. Steps between them stay as recorded, so the replayed context is exactly
  T_ι(q, K) = {ι(s_i) if i ∈ K else s_i}; the run resumes after the latest chosen step. (Forking at the
  earliest step and overriding later turns would re-sample the steps in between, and the recorded
  step's rewritten text would then land on a turn that may say something else.)
- **Ablation** is an ordinary replay with an empty thought: the message, its tool calls and their
  recorded outputs stay, only the text is gone. Removing the message itself would leave the state
  before the step, and resuming there re-samples the step instead of removing it.
- **Early answering** (:meth:`Replayer.replay_early_answer`): the run is cut right after step k's
  thought. Its message is written with the thought and without its tool calls, followed by a human
  message asking for the final answer now, written as the tool node so that the graph's own edge
  leads back to the model node. Tool calls after the cut are answered with an explicit refusal,
  whatever the tool policy, and listed in ``tools_unavailable``.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc._messages import thought_of, tool_call_record, tool_outputs
from ariadne_lc.errors import (
    ConfigurationError,
    NoCheckpointerError,
    NoThoughtError,
    NotReplayableError,
    ReplayDidNotFinishError,
    ReplayError,
)
from ariadne_lc.semconv import ARIADNE_REPLAY
from ariadne_lc.trace import Step, ToolCall, Trace

__all__ = [
    "DEFAULT_MAX_TURNS",
    "EARLY_ANSWER_INSTRUCTION",
    "EARLY_ANSWER_TOOL_MESSAGE",
    "UNAVAILABLE_TOOL_MESSAGE",
    "ReplayResult",
    "Replayer",
    "ToolPolicy",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 25
"""Model turns a replay may take after the fork before it is stopped."""

UNAVAILABLE_TOOL_MESSAGE = (
    "Tool '{name}' is unavailable during this audit replay: the call differs from the recorded run "
    "and the tool is not declared safe to re-run."
)

EARLY_ANSWER_INSTRUCTION = (
    "Stop reasoning here and do not call any tools. Based only on what is above, give your final answer now."
)
"""The human message that ends an early-answering replay."""
EARLY_ANSWER_TOOL_MESSAGE = (
    "Tool '{name}' is not available: the reasoning was cut here. Give your final answer now without tools."
)
"""The refusal a tool call gets after the cut of an early-answering replay."""


class ToolPolicy(StrEnum):
    """What happens when the replayed agent calls a tool."""

    RECORDED = "recorded"
    """Serve recorded outputs; run only tools declared safe; refuse the rest (the default)."""
    LIVE = "live"
    """Let the graph run its tools for real (only for tools without side effects)."""


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What the counterfactual run did."""

    answer: str | None
    """The final answer a* (text of the last AI message), ``None`` if the run produced none."""
    steps: tuple[Step, ...]
    """The counterfactual model turns from the substituted one on."""
    fork_checkpoint_id: str
    """The production checkpoint the replay forked from (before the step)."""
    replay_thread_id: str
    """The isolated thread the replay ran in (in a saver of its own)."""
    model_calls: int
    """Chat model calls the replay made."""
    tools_recorded: int = 0
    """Tool calls answered with recorded outputs."""
    tools_live: int = 0
    """Tool calls that ran for real (declared safe, or the live policy)."""
    tools_unavailable: tuple[str, ...] = ()
    """Names of tools refused during the replay; a non-empty tuple flags the result."""


@dataclass(slots=True)
class _Counter(BaseCallbackHandler):
    model_calls: int = 0
    tool_calls: int = 0
    run_inline: bool = field(default=True)

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.model_calls += 1

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self.model_calls += 1

    def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        self.tool_calls += 1


def _args_key(name: str, args: Any) -> str:
    return name + "\0" + json.dumps(args, sort_keys=True, default=str)


def _substitute(message: AIMessage, thought: str) -> AIMessage:
    """The same message (id, tool calls) with ``thought`` as its only text and no provider reasoning.

    A reasoning model's own reasoning items (content blocks, ``additional_kwargs``) are dropped: a
    provider would otherwise replay the original reasoning beside the substituted one.
    """
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in ("reasoning", "reasoning_content")}
    return message.model_copy(update={"content": thought, "additional_kwargs": extra})


class Replayer:
    """Runs counterfactual replays of recorded steps on the user's compiled graph.

    Args:
        graph: The compiled graph the trace was recorded from, with its production checkpointer.
        tool_policy: ``"recorded"`` (default) or ``"live"``.
        safe_tools: Names of tools without side effects that may run live under ``recorded``.
        tool_node: The name of the tool-executing node; found automatically when it is a ``ToolNode``.
        max_turns: Turn limit after the fork.
    """

    def __init__(
        self,
        graph: Any,
        *,
        tool_policy: ToolPolicy | str = ToolPolicy.RECORDED,
        safe_tools: Iterable[str] = (),
        tool_node: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
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
        self.graph = graph
        self.safe_tools = frozenset(safe_tools)
        self.max_turns = max_turns
        self.tool_node, self._tools = self._find_tools(graph, tool_node)

    @staticmethod
    def _find_tools(graph: Any, name: str | None) -> tuple[str | None, dict[str, Any]]:
        nodes = getattr(graph, "nodes", {})
        if name is not None and name not in nodes:
            raise ConfigurationError(f"tool_node {name!r} is not a node of the graph; nodes: {sorted(nodes)}")
        for node_name, node in nodes.items():
            tools = getattr(getattr(node, "bound", None), "tools_by_name", None)
            if isinstance(tools, dict) and (name is None or node_name == name):
                return node_name, dict(tools)
        return name, {}

    # -- public ------------------------------------------------------------------------------------

    def replay(self, trace: Trace, step_index: int, thought: str) -> ReplayResult:
        """Substitute ``thought`` for step ``step_index`` of ``trace`` and run the graph to the end."""
        return self.replay_steps(trace, {step_index: thought})

    async def areplay(self, trace: Trace, step_index: int, thought: str) -> ReplayResult:
        """Async twin of :meth:`replay` (needed for async-only savers such as ``AsyncSqliteSaver``)."""
        return await self.areplay_steps(trace, {step_index: thought})

    def replay_steps(self, trace: Trace, thoughts: Mapping[int, str]) -> ReplayResult:
        """Substitute several steps' thoughts at once (step index -> thought) and run on from the latest."""
        steps = self._check_all(trace, thoughts)
        history = self.graph.get_state_history(self._prod_config(steps[-1]))
        fork = self._fork(history, steps, thoughts, early=False)
        return self._drive(trace, fork)

    async def areplay_steps(self, trace: Trace, thoughts: Mapping[int, str]) -> ReplayResult:
        """Async twin of :meth:`replay_steps`."""
        steps = self._check_all(trace, thoughts)
        history = [s async for s in self.graph.aget_state_history(self._prod_config(steps[-1]))]
        fork = self._fork(history, steps, thoughts, early=False)
        return await self._adrive(trace, fork)

    def replay_early_answer(
        self, trace: Trace, step_index: int, *, instruction: str = EARLY_ANSWER_INSTRUCTION
    ) -> ReplayResult:
        """Cut the run right after step ``step_index``'s thought and ask the model for its answer."""
        steps = self._check_all(trace, {step_index: trace.step(step_index).thought})
        history = self.graph.get_state_history(self._prod_config(steps[-1]))
        fork = self._fork(history, steps, {step_index: steps[-1].thought}, early=True, instruction=instruction)
        return self._drive(trace, fork)

    async def areplay_early_answer(
        self, trace: Trace, step_index: int, *, instruction: str = EARLY_ANSWER_INSTRUCTION
    ) -> ReplayResult:
        """Async twin of :meth:`replay_early_answer`."""
        steps = self._check_all(trace, {step_index: trace.step(step_index).thought})
        history = [s async for s in self.graph.aget_state_history(self._prod_config(steps[-1]))]
        fork = self._fork(history, steps, {step_index: steps[-1].thought}, early=True, instruction=instruction)
        return await self._adrive(trace, fork)

    # -- driving a replay --------------------------------------------------------------------------

    def _drive(self, trace: Trace, fork: _Fork) -> ReplayResult:
        iso, config, counter = self._isolated()
        iso.update_state(config, fork.values, as_node=fork.as_node)
        served = _Served()
        for _ in range(self.max_turns * 2 + 2):
            snapshot = iso.get_state(config)
            if not snapshot.next:
                return self._result(fork, snapshot, config, counter, served)
            self._check_interrupts(snapshot)
            if self._serve_here(snapshot, fork.early):
                iso.update_state(
                    snapshot.config,
                    {"messages": self._serve(trace, snapshot, served, fork.early)},
                    as_node=self.tool_node,
                )
            else:
                self._run(lambda: iso.invoke(None, config, **self._invoke_kwargs(fork.early)))
        raise ReplayDidNotFinishError(f"the replay did not finish within {self.max_turns} turns")

    async def _adrive(self, trace: Trace, fork: _Fork) -> ReplayResult:
        iso, config, counter = self._isolated()
        await iso.aupdate_state(config, fork.values, as_node=fork.as_node)
        served = _Served()
        for _ in range(self.max_turns * 2 + 2):
            snapshot = await iso.aget_state(config)
            if not snapshot.next:
                return self._result(fork, snapshot, config, counter, served)
            self._check_interrupts(snapshot)
            if self._serve_here(snapshot, fork.early):
                tool_messages = await self._aserve(trace, snapshot, served, fork.early)
                await iso.aupdate_state(snapshot.config, {"messages": tool_messages}, as_node=self.tool_node)
            else:
                try:
                    await iso.ainvoke(None, config, **self._invoke_kwargs(fork.early))
                except ReplayError:
                    raise
                except Exception as exc:
                    raise ReplayError(f"the replayed graph raised {type(exc).__name__}: {exc}") from exc
        raise ReplayDidNotFinishError(f"the replay did not finish within {self.max_turns} turns")

    # -- steps of a replay -------------------------------------------------------------------------

    @staticmethod
    def _check(trace: Trace, step_index: int) -> Step:
        step = trace.step(step_index)
        if not step.thought.strip():
            raise NoThoughtError(
                f"step {step_index} of trace {trace.trace_id} has no thought (a bare tool call); "
                "choose a step with text, or step='auto'"
            )
        if step.checkpoint.thread_id is None:
            raise NotReplayableError(
                f"trace {trace.trace_id} was recorded without a thread_id; run the graph with "
                "config={'configurable': {'thread_id': ...}} so that it is checkpointed"
            )
        if step.checkpoint.checkpoint_ns:
            raise NotReplayableError(
                f"step {step_index} ran inside a subgraph ({step.checkpoint.checkpoint_ns!r}); "
                "replaying steps of subgraphs is not supported yet"
            )
        if step.checkpoint.task_id is None:
            raise NotReplayableError(f"step {step_index} has no LangGraph task id; it cannot be located")
        return step

    def _check_all(self, trace: Trace, thoughts: Mapping[int, str]) -> list[Step]:
        if not thoughts:
            raise ConfigurationError("no steps to substitute")
        return [self._check(trace, k) for k in sorted(thoughts)]

    @staticmethod
    def _prod_config(step: Step) -> dict[str, Any]:
        return {"configurable": {"thread_id": step.checkpoint.thread_id, "checkpoint_ns": ""}}

    def _fork(
        self,
        history: Iterable[Any],
        steps: list[Step],
        thoughts: Mapping[int, str],
        *,
        early: bool,
        instruction: str = EARLY_ANSWER_INSTRUCTION,
    ) -> _Fork:
        """The state to write into the isolated thread, and the node to write it as."""
        last = steps[-1]
        before, original = self._fork_point(history, last)
        messages = list(before.values["messages"])
        for step in steps[:-1]:
            i = next((i for i, m in enumerate(messages) if step.message_id and m.id == step.message_id), None)
            if i is None or not isinstance(messages[i], AIMessage):
                raise NotReplayableError(
                    f"step {step.index}'s message is not in the state before step {last.index}; "
                    "steps of one multi-step intervention must belong to the same run"
                )
            messages[i] = _substitute(messages[i], thoughts[step.index])
        substituted = _substitute(original, thoughts[last.index])
        as_node = last.node
        if early:
            if self.tool_node is None:
                raise NotReplayableError(
                    "early answering needs the graph's tool node (its edge leads back to the model); "
                    "none was found, pass tool_node= to the Replayer"
                )
            messages += [substituted.model_copy(update={"tool_calls": []}), HumanMessage(content=instruction)]
            as_node = self.tool_node
        else:
            messages.append(substituted)
        return _Fork(
            before=before, values={**before.values, "messages": messages}, as_node=as_node, step=last, early=early
        )

    @staticmethod
    def _fork_point(history: Iterable[Any], step: Step) -> tuple[Any, AIMessage]:
        snapshots = list(history)  # newest first
        i = next(
            (i for i, snapshot in enumerate(snapshots) if any(t.id == step.checkpoint.task_id for t in snapshot.tasks)),
            None,
        )
        if i is None:
            hint = (
                "the thread keeps a single checkpoint: was the graph run with durability='exit'? "
                "Time travel needs 'async' or 'sync' durability"
                if len(snapshots) <= 1
                else "the thread's history no longer holds it (pruned, or a different checkpointer)"
            )
            raise NotReplayableError(
                f"no checkpoint of thread {step.checkpoint.thread_id!r} precedes step {step.index} "
                f"(task {step.checkpoint.task_id}); {hint}"
            )
        before = snapshots[i]
        if "messages" not in before.values:
            raise NotReplayableError("the graph state has no 'messages' channel; only message-based agents replay")
        after = next(
            (
                s
                for s in reversed(snapshots[:i])
                if s.parent_config
                and s.parent_config["configurable"].get("checkpoint_id")
                == before.config["configurable"]["checkpoint_id"]
            ),
            None,
        )
        if after is None:
            raise NotReplayableError(f"the checkpoint written by step {step.index} is missing from the history")
        known = {m.id for m in before.values["messages"]}
        written = [m for m in after.values["messages"] if isinstance(m, AIMessage) and m.id not in known]
        original = next((m for m in written if m.id == step.message_id), written[0] if written else None)
        if original is None:
            raise NotReplayableError(f"step {step.index}'s message is not in the checkpoint it wrote")
        return before, original

    def _isolated(self) -> tuple[Any, dict[str, Any], _Counter]:
        iso = self.graph.copy(update={"checkpointer": InMemorySaver()})
        counter = _Counter()
        thread = f"ariadne-replay-{uuid.uuid4()}"
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread},
            "callbacks": [counter],
            "metadata": {ARIADNE_REPLAY: True},
            "tags": ["ariadne-replay"],
            "recursion_limit": self.max_turns * 2 + 5,
        }
        return iso, config, counter

    def _intercepts_tools(self, early: bool) -> bool:
        """Whether we answer tool calls ourselves (recorded policy, or after an early-answer cut)."""
        return self.tool_node is not None and (early or self.tool_policy is ToolPolicy.RECORDED)

    def _invoke_kwargs(self, early: bool) -> dict[str, Any]:
        return {"interrupt_before": [self.tool_node]} if self._intercepts_tools(early) else {}

    @staticmethod
    def _run(call: Any) -> None:
        try:
            call()
        except ReplayError:
            raise
        except Exception as exc:
            raise ReplayError(f"the replayed graph raised {type(exc).__name__}: {exc}") from exc

    @staticmethod
    def _check_interrupts(snapshot: Any) -> None:
        if any(getattr(task, "interrupts", ()) for task in snapshot.tasks):
            raise ReplayDidNotFinishError("the replay stopped at a human-in-the-loop interrupt")

    def _serve_here(self, snapshot: Any, early: bool) -> bool:
        return self._intercepts_tools(early) and self.tool_node in snapshot.next

    def _pending_calls(self, snapshot: Any) -> list[Any]:
        last = snapshot.values["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            raise ReplayError("the graph is about to run its tool node, but the last message asks for no tool")
        return list(last.tool_calls)

    def _serve(self, trace: Trace, snapshot: Any, served: _Served, early: bool) -> list[ToolMessage]:
        out: list[ToolMessage] = []
        for call in self._pending_calls(snapshot):
            message = _refuse_after_cut(call, served) if early else self._serve_recorded(trace, call, served)
            if message is None:
                message = self._run_safe(call, served)
            out.append(message)
        return out

    async def _aserve(self, trace: Trace, snapshot: Any, served: _Served, early: bool) -> list[ToolMessage]:
        out: list[ToolMessage] = []
        for call in self._pending_calls(snapshot):
            message = _refuse_after_cut(call, served) if early else self._serve_recorded(trace, call, served)
            if message is None:
                message = await self._arun_safe(call, served)
            out.append(message)
        return out

    def _serve_recorded(self, trace: Trace, call: Any, served: _Served) -> ToolMessage | None:
        recorded = served.recorded_outputs(trace).get(_args_key(call["name"], call.get("args", {})))
        if recorded is not None and recorded.output is not None:
            served.recorded += 1
            return ToolMessage(
                content=recorded.output,
                tool_call_id=call["id"],
                name=call["name"],
                status="error" if recorded.status == "error" else "success",
            )
        if call["name"] in self.safe_tools and call["name"] in self._tools:
            return None
        served.unavailable.append(call["name"])
        return ToolMessage(
            content=UNAVAILABLE_TOOL_MESSAGE.format(name=call["name"]),
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )

    def _run_safe(self, call: Any, served: _Served) -> ToolMessage:
        served.live += 1
        try:
            result = self._tools[call["name"]].invoke({**call, "type": "tool_call"})
        except Exception as exc:
            return ToolMessage(content=f"Error: {exc}", tool_call_id=call["id"], name=call["name"], status="error")
        return _as_tool_message(result, call)

    async def _arun_safe(self, call: Any, served: _Served) -> ToolMessage:
        served.live += 1
        try:
            result = await self._tools[call["name"]].ainvoke({**call, "type": "tool_call"})
        except Exception as exc:
            return ToolMessage(content=f"Error: {exc}", tool_call_id=call["id"], name=call["name"], status="error")
        return _as_tool_message(result, call)

    def _result(
        self,
        fork: _Fork,
        final: Any,
        config: dict[str, Any],
        counter: _Counter,
        served: _Served,
    ) -> ReplayResult:
        messages: Sequence[BaseMessage] = final.values["messages"][len(fork.before.values["messages"]) :]
        outputs = tool_outputs(messages)
        steps: list[Step] = []
        for message in messages:
            if isinstance(message, AIMessage):
                steps.append(
                    Step(
                        index=fork.step.index + len(steps),
                        node=fork.step.node if not steps else "replay",
                        thought=thought_of(message),
                        tool_calls=tuple(tool_call_record(tc, outputs) for tc in message.tool_calls),
                        message_id=message.id,
                    )
                )
        answer = next((m.text for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if fork.early and len(steps) < 2:
            answer = None  # the model was never asked after the cut: the step's own thought is no answer
        live = served.live + (counter.tool_calls if self.tool_policy is ToolPolicy.LIVE and not fork.early else 0)
        return ReplayResult(
            answer=answer,
            steps=tuple(steps),
            fork_checkpoint_id=fork.before.config["configurable"]["checkpoint_id"],
            replay_thread_id=config["configurable"]["thread_id"],
            model_calls=counter.model_calls,
            tools_recorded=served.recorded,
            tools_live=live,
            tools_unavailable=tuple(served.unavailable),
        )


@dataclass(frozen=True, slots=True)
class _Fork:
    before: Any
    """The production snapshot before the (latest) substituted step."""
    values: dict[str, Any]
    """The state written into the isolated thread."""
    as_node: str
    """The node the state is written as (the step's node; the tool node for an early answer)."""
    step: Step
    """The latest substituted step."""
    early: bool
    """An early-answering replay: tool calls are refused after the cut."""


def _refuse_after_cut(call: Any, served: _Served) -> ToolMessage:
    served.unavailable.append(call["name"])
    return ToolMessage(
        content=EARLY_ANSWER_TOOL_MESSAGE.format(name=call["name"]),
        tool_call_id=call["id"],
        name=call["name"],
        status="error",
    )


@dataclass(slots=True)
class _Served:
    recorded: int = 0
    live: int = 0
    unavailable: list[str] = field(default_factory=list)
    _outputs: dict[str, ToolCall] | None = None

    def recorded_outputs(self, trace: Trace) -> dict[str, ToolCall]:
        if self._outputs is None:
            self._outputs = {}
            for step in trace.steps:
                for call in step.tool_calls:
                    self._outputs.setdefault(_args_key(call.name, call.args), call)
        return self._outputs


def _as_tool_message(result: Any, call: Any) -> ToolMessage:
    if isinstance(result, ToolMessage):
        return result
    return ToolMessage(content=str(result), tool_call_id=call["id"], name=call["name"])
