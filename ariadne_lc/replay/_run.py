"""One replay's isolated thread, run from its fork to its end: tool calls answered, interrupts resumed, the run's
result read back (:class:`Run`), and what a replay needs of its replayer (:class:`Replaying`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from ariadne_lc._messages import answer_text, structured_answer, thought_of, tool_call_record, tool_outputs
from ariadne_lc._twin import Flow
from ariadne_lc.errors import NotReplayableError, ReplayDidNotFinishError, ReplayError
from ariadne_lc.recorder._inputs import model_input
from ariadne_lc.records import ReplayMode
from ariadne_lc.replay import _ops
from ariadne_lc.replay._derive import ToolCallDeriver
from ariadne_lc.replay._fork import Level
from ariadne_lc.replay._inputs import CheckTarget, Unchecked, check_input, same_messages
from ariadne_lc.replay._interrupts import Answers, pending_interrupts
from ariadne_lc.replay._own import HANDOFF_PREFIXES
from ariadne_lc.replay._tools import Served, serve
from ariadne_lc.replay._types import ReplayResult, ToolPolicy
from ariadne_lc.semconv import ARIADNE_MODEL_INPUTS, ARIADNE_REPLAY
from ariadne_lc.trace import ModelInput, Step, Trace

__all__ = ["Counter", "Replaying", "Run", "deepest"]


class Replaying(Protocol):
    """What a replay needs from its :class:`~ariadne_lc.replay.Replayer` (declared here: no import circle)."""

    graph: Any
    tool_policy: ToolPolicy
    safe_tools: frozenset[str]
    max_turns: int
    tool_calls: ReplayMode
    tool_call_deriver: ToolCallDeriver | None

    def tool_node_of(self, ns: str) -> str | None: ...

    def tools_of(self, ns: str) -> dict[str, Any]: ...

    def channels_of(self, ns: str) -> Mapping[str, Any]: ...

    def locate(self, step: Step) -> Flow[tuple[list[Level], AIMessage]]: ...

    def isolated_graph(
        self,
        saver: Any,
        *,
        intercept: bool,
        guard: list[str] | None = None,
        served: Served | None = None,
        early: bool = False,
    ) -> Any: ...


@dataclass(slots=True, eq=False)  # hashable: LangGraph puts handlers in sets
class Counter(BaseCallbackHandler):
    """Counts a replay's model and tool calls, and keeps what its first model call was given (the replay
    invariant): from the chat model's start callback here, from the model request when ``AriadneMiddleware``
    wraps the call (it appends to :attr:`inputs`, found in the run config)."""

    model_calls: int = 0
    tool_calls: int = 0
    run_inline: bool = field(default=True)
    inputs: list[ModelInput] = field(default_factory=list)
    """What the middleware saw of the first model call (the callback's own: :meth:`seen`)."""
    outside: bool = False
    """Keep a call made outside the graph too (a deriver's re-run of the step's model)."""
    _callback: tuple[list[BaseMessage], Any] | None = None
    """The first model call's messages and tools as its start callback saw them, digested only when read."""

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.model_calls += 1
        in_graph = self.outside or "langgraph_node" in (kwargs.get("metadata") or {})  # not a deriver's own call
        if in_graph and messages and self._callback is None:
            self._callback = (list(messages[0]), (kwargs.get("invocation_params") or {}).get("tools"))

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self.model_calls += 1

    def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        self.tool_calls += 1

    @property
    def called(self) -> bool:
        """Whether the replay made a model call that was seen."""
        return bool(self.inputs) or self._callback is not None

    def seen(self, target: CheckTarget | Unchecked) -> list[ModelInput]:
        """The first call's inputs to check against ``target``: the callback's is digested (a whole conversation,
        message by message) only when no input of the source the record was made by was kept otherwise."""
        if self._callback is None or isinstance(target, Unchecked):
            return list(self.inputs)
        if any(i.source == target.recorded.source for i in self.inputs):
            return list(self.inputs)
        return [*self.inputs, model_input(*self._callback, "callback")]


_NODES_PER_TURN = 8
"""LangGraph supersteps one model turn may take: the model and tool nodes, and the nodes of the agent's middleware
hooks (a deep agent's stack has several), with room to spare."""


def _turns(replayer: Replaying, trace: Trace, step: Step) -> int:
    """Model turns a replay from ``step`` may take: ``max_turns``, or twice what the recorded run took from there
    plus five when that is more, so that a long run's replay is never cut short of the run it replays."""
    return max(replayer.max_turns, 2 * (len(trace.steps) - step.index) + 5)


def deepest(snapshot: Any) -> Any:
    """The snapshot of the innermost graph with work pending (the top level when no subgraph has any)."""
    while True:
        inner = next((t.state for t in snapshot.tasks if getattr(t.state, "next", None)), None)
        if inner is None:
            return snapshot
        snapshot = inner


def _hands_off(values: Mapping[str, Any]) -> bool:
    """Whether the last message of ``values`` hands off to another agent (only hand-off calls: a swarm's, a
    supervisor's ``transfer_to_<agent>``)."""
    messages = values.get("messages") or [None]
    last = messages[-1]
    calls = last.tool_calls if isinstance(last, AIMessage) else []
    return bool(calls) and all(str(c.get("name", "")).startswith(HANDOFF_PREFIXES) for c in calls)


@dataclass(slots=True)
class Run:
    """One replay's isolated thread, its config and counter, and the turns it may take."""

    replayer: Replaying
    trace: Trace
    step: Step
    """The step the replay forks at."""
    early: bool
    counter: Counter = field(default_factory=Counter)
    thread: str = field(default_factory=lambda: f"ariadne-replay-{uuid.uuid4()}")

    @property
    def turns(self) -> int:
        return _turns(self.replayer, self.trace, self.step)

    @property
    def config(self) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": self.thread, ARIADNE_MODEL_INPUTS: self.counter.inputs},
            "callbacks": [self.counter],
            "metadata": {ARIADNE_REPLAY: True},
            "tags": ["ariadne-replay"],
            "recursion_limit": self.turns * _NODES_PER_TURN + 10,
        }

    def at(self, level: Level) -> dict[str, Any]:
        """The config of ``level``'s copied checkpoint in the isolated thread."""
        fork_id = level.before.config["configurable"]["checkpoint_id"]
        return {"configurable": {"thread_id": self.thread, "checkpoint_ns": level.ns, "checkpoint_id": fork_id}}

    def on(
        self,
        iso: Any,
        levels: list[Level],
        served: Served,
        target: CheckTarget | Unchecked,
        *,
        intercept: bool,
        forked: Sequence[BaseMessage] | None,
        deriver: str | None,
        guard: Sequence[str] = (),
    ) -> Flow[ReplayResult]:
        """Run the isolated thread to its end (tool calls served, interrupts answered) and check its first model
        call against ``target``; ``forked``: the production state's messages at the fork, which a replay that made
        no model call must hold (``None``: the fork changed them); ``guard``: nodes the replay must not reach."""
        replayer, config, counter = self.replayer, self.config, self.counter
        answers = Answers(self.trace.interrupts)
        at = self.at(levels[-1])
        for _ in range(self.turns * 3 + 3):
            snapshot = yield _ops.state(iso, config)
            if not snapshot.next:
                unchecked = check_input(target, counter.seen(target))
                if unchecked is not None and not counter.called and forked is not None:
                    copied = yield _ops.state(iso, at)  # the answer came from graph code: check the fork's state
                    copied_input = model_input(copied.values.get("messages", ()), None, "state")
                    if same_messages(copied_input, model_input(forked, None, "state")):
                        unchecked = None
                return self._finished(levels, snapshot, served, answers, deriver, unchecked)
            asked = pending_interrupts(snapshot)
            if asked:
                resume = {i.id: answers.take(node, i.value).resume for node, i in asked}
                yield _ops.invoke(iso, Command(resume=resume), config)
                continue
            level = deepest(snapshot)
            reached = sorted({*snapshot.next, *level.next} & set(guard))
            if reached:
                raise NotReplayableError(
                    f"the replay reached node {reached[0]!r} again, which runs an agent from its function: LangGraph "
                    "cannot pause it before its tools, so the replay stops there instead of running them"
                )
            ns = level.config["configurable"].get("checkpoint_ns", "")
            tool_node = replayer.tool_node_of(ns)
            if intercept and tool_node is not None and tool_node in level.next and _hands_off(level.values):
                # the run ends where it hands off to another agent, as the recorded run did (its answer is the
                # hand-off turn's text): a replay never serves a hand-off, which would lose its move to the agent
                return self._finished(
                    levels, level, served, answers, deriver, check_input(target, counter.seen(target))
                )
            if intercept and tool_node is not None and tool_node in level.next:
                tool_messages = yield from serve(
                    level.values, served, replayer.tools_of(ns), replayer.safe_tools, self.early
                )
                yield _ops.update_state(iso, level.config, {"messages": tool_messages}, tool_node)
            # what runs next after served outputs is known without reading the state: the graph goes on from them
            try:
                yield _ops.invoke(iso, None, config)
            except ReplayError as exc:
                if isinstance(exc.__cause__, GraphRecursionError):  # one run of the graph took every turn allowed
                    break
                raise
        raise ReplayDidNotFinishError(
            f"the replay did not finish within {self.turns} turns (the recorded run took "
            f"{len(self.trace.steps) - self.step.index} from step {self.step.index}; Replayer(max_turns=...) raises "
            "the floor)"
        )

    def _finished(
        self,
        levels: list[Level],
        final: Any,
        served: Served,
        answers: Answers,
        deriver: str | None,
        unchecked: Unchecked | None,
    ) -> ReplayResult:
        """The replay's result, read from its ``final`` state, with how its input was checked."""
        fork_id = self.at(levels[-1])["configurable"]["checkpoint_id"]
        result = _result(
            self.replayer, levels, final, self.config, self.counter, served, answers, self.step, self.early, fork_id,
            deriver,
        )  # fmt: skip
        why = None if unchecked is None else unchecked.why
        return replace(result, input_checked=why is None, unchecked=why)


def _result(
    replayer: Replaying,
    levels: list[Level],
    final: Any,
    config: dict[str, Any],
    counter: Counter,
    served: Served,
    answers: Answers,
    step: Step,
    early: bool,
    fork_id: str,
    deriver: str | None,
) -> ReplayResult:
    known = {m.id for m in levels[0].before.values["messages"]}
    if len(levels) > 1:
        known -= {step.message_id}
    messages: list[BaseMessage] = [m for m in final.values.get("messages", ()) if m.id not in known]
    outputs = tool_outputs(messages)
    steps: list[Step] = []
    for message in messages:
        if isinstance(message, AIMessage):
            steps.append(
                Step(
                    index=step.index + len(steps),
                    node=step.node if not steps else "replay",
                    thought=thought_of(message),
                    tool_calls=tuple(tool_call_record(tc, outputs) for tc in message.tool_calls),
                    message_id=message.id,
                )
            )
    # read as the recorder reads the live run's answer: the structured response first, else the last AI text
    answer = answer_text(final.values, messages)
    if steps and steps[-1].tool_calls and structured_answer(final.values) is not None:
        steps[-1] = steps[-1].model_copy(update={"structured_output": True})
    if early and len(steps) < 2:
        answer = None  # the model was never asked after the cut: the step's own thought is no answer
    live = served.live + (counter.tool_calls if replayer.tool_policy is ToolPolicy.LIVE and not early else 0)
    return ReplayResult(
        answer=answer,
        steps=tuple(steps),
        fork_checkpoint_id=fork_id,
        replay_thread_id=config["configurable"]["thread_id"],
        model_calls=counter.model_calls,
        tools_recorded=served.recorded,
        tools_live=live,
        tools_unavailable=served.unavailable_in(messages),
        interrupts_answered=tuple(answers.used),
        fork_checkpoint_ns=levels[-1].ns,
        replay_mode="rederive" if deriver is not None else "recorded",
        tool_call_deriver=deriver,
    )
