"""The agent's action under an intervened thought: the step's own model re-run with the thought as the start of its
reply, its tool calls read and never run (the ``thought->action`` link, docs/method.md#links).

Three sources of that re-run, one per kind of graph:

- ``middleware``: a ``create_agent`` graph with :class:`~ariadne_lc.AriadneMiddleware`. The checkpoint before the
  step's model node is copied into an isolated thread of a separate saver (as every replay does) and the graph is
  resumed there with the thought in the run config (:data:`~ariadne_lc.semconv.ARIADNE_PREFILL`). The middleware,
  which wraps the model call, appends the thought as a trailing assistant message, in the format of the step's own
  message (the edited reasoning inside ``<think>`` tags or in ``reasoning_content``, :func:`~ariadne_lc._thoughts.
  prefill_of`): a provider that continues one (prefill; the local server does) writes the rest of the reply,
  others answer it as a continuation turn. The copy
  has a breakpoint before every tool node, so the run stops right after the model wrote its calls. The model sees
  exactly the prompt it saw live (system prompt, tools, other middleware), which no call from outside can rebuild.
- a :class:`~ariadne_lc.replay.ToolCallDeriver`: the agent's chat model given to the auditor (a
  :class:`~ariadne_lc.replay.ContinuationDeriver` with the thought as prefill), or graph code written as a
  function. Nothing of the graph runs.

Bad replies are outcomes: a reply without tool calls is the action "no call"; a call to an unknown tool or with
arguments that fail the tool's schema is kept as made (and named in ``invalid``), never run. No tool runs on this
link at all: ``tools_executed`` counts the tool starts the re-run saw, and stays 0.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc._thoughts import prefill_of
from ariadne_lc._twin import Call, Flow
from ariadne_lc.errors import NotReplayableError, ReplayError
from ariadne_lc.replay import _ops
from ariadne_lc.replay._derive import AgentModel, StepContext, ToolCallDeriver, derive
from ariadne_lc.replay._drive import check_step
from ariadne_lc.replay._fork import Level, StateEdit, copy_levels
from ariadne_lc.replay._inputs import CheckTarget, Unchecked, changed_target, check_input, next_step, target_of
from ariadne_lc.replay._run import Counter, Replaying, deepest
from ariadne_lc.replay._saver import replay_saver
from ariadne_lc.semconv import ARIADNE_MODEL_INPUTS, ARIADNE_PREFILL, ARIADNE_REPLAY
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["ActionSource", "DerivedAction", "action_flow", "invalid_calls", "state_flow"]

ActionSource = ToolCallDeriver | Literal["middleware"]
"""Who re-runs the step's model: the graph's own middleware, or a deriver."""


@dataclass(frozen=True, slots=True)
class DerivedAction:
    """What the step's model did with the intervened thought."""

    calls: tuple[ToolCall, ...]
    """The calls it made (empty: no call), never executed."""
    deriver: str
    """``middleware``, ``node`` (the node re-run as it is, on an edited state) or the deriver's name."""
    model_calls: int
    """Model calls the re-run made (1 for the middleware, what the deriver's model reported otherwise)."""
    tools_executed: int
    """Tool starts the re-run saw: 0, always (a test pins it)."""
    invalid: tuple[str, ...] = ()
    """Calls the graph could not run: an unknown tool, arguments that fail its schema."""
    fork_checkpoint_id: str | None = None
    """The production checkpoint the middleware re-run forked from (``None`` for a deriver)."""
    replay_thread_id: str | None = None
    input_checked: bool = False
    """The re-run's model input was checked against the recorded one (:mod:`ariadne_lc.replay._inputs`)."""
    unchecked: str | None = None
    """Why the re-run's input could not be checked although its source checks inputs; ``None`` otherwise."""
    text: str = ""
    """The re-run's reply text (what the model wrote after the thought; empty from a deriver): with no call, the
    step's answer."""


def invalid_calls(calls: tuple[ToolCall, ...], tools: dict[str, Any]) -> tuple[str, ...]:
    """Why each call the graph could not run would fail: an unknown tool, or arguments its schema refuses."""
    out: list[str] = []
    for call in calls:
        tool = tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(tools)) or "none"
            out.append(f"{call.name}: no such tool (tools: {known})")
            continue
        schema = getattr(tool, "tool_call_schema", None)
        validate = getattr(schema, "model_validate", None)
        if validate is None:
            continue
        try:
            validate(call.args)
        except Exception as exc:  # pydantic's ValidationError, or a schema's own
            out.append(f"{call.name}: arguments {call.args!r} fail its schema ({' '.join(str(exc).split())[:120]})")
    return tuple(out)


def _calls(message: Any) -> tuple[ToolCall, ...]:
    if not isinstance(message, AIMessage):
        return ()
    return tuple(ToolCall(id=c.get("id"), name=c["name"], args=dict(c.get("args") or {})) for c in message.tool_calls)


def action_flow(
    replayer: Replaying, trace: Trace, index: int, thought: str, source: ActionSource
) -> Flow[DerivedAction]:
    """Re-run step ``index``'s model with ``thought`` as the start of its reply; its calls, never run."""
    step = check_step(trace, index)
    levels, original = yield from replayer.locate(step)
    tools = replayer.tools_of(levels[-1].ns)
    counter = Counter(outside=source != "middleware")  # a deriver calls the model itself, not through the graph
    config: dict[str, Any] = {
        "callbacks": [counter],
        "metadata": {ARIADNE_REPLAY: True},
        "tags": ["ariadne-replay"],
    }
    if source != "middleware":
        history = tuple(levels[-1].before.values["messages"])
        if isinstance(source, AgentModel):  # the prompt the node builds (its middleware's system prompt included)
            prompt = yield from _prompt_of(replayer, levels)
            if prompt is not None:
                history, source = prompt, AgentModel(source.model, instruction=None, name=source.name)
        context = StepContext(
            query=trace.query, step=step, messages=history, tools=tools, config=config, message=original
        )
        derived = yield from derive(source, thought, context)
        calls = tuple(ToolCall(id=c["id"], name=c["name"], args=c["args"]) for c in derived)
        rerun = target_of(trace, [step], rerun=True)
        unchecked = check_input(rerun, counter.seen(rerun)) if _checks(source) else None
        made, ran = counter.model_calls, counter.tool_calls
        return DerivedAction(
            calls, source.name, made, ran, invalid_calls(calls, tools), input_checked=_checks(source) and not unchecked,
            unchecked=None if unchecked is None else unchecked.why,
        )  # fmt: skip
    # the start of the reply in the model's own format: <think> + the edited reasoning, or reasoning_content
    prefill = {ARIADNE_PREFILL: prefill_of(original, thought)}
    target = target_of(trace, [step], rerun=True)
    return (yield from _resumed(replayer, levels, index, counter, config, prefill, None, target, "middleware"))


def state_flow(
    replayer: Replaying, trace: Trace, index: int, edit: Callable[[Mapping[str, Any]], StateEdit], changes: int
) -> Flow[DerivedAction]:
    """Re-run the model turn after step ``index`` with the state ``edit`` makes of the state before it (what a tool of
    step ``index`` wrote, changed where the agent reads it: the ``todo->action`` link); its calls, never run. Its
    input must be the recorded one with ``changes`` messages changed, from step ``index``'s own message on."""
    step = check_step(trace, index, thought_needed=False)
    after = next_step(trace, step)
    if after is None:
        raise NotReplayableError(f"step {index} of trace {trace.trace_id} has no later model turn to re-run")
    check_step(trace, after.index, thought_needed=False)
    levels, _ = yield from replayer.locate(after)
    counter = Counter()
    config: dict[str, Any] = {"callbacks": [counter], "metadata": {ARIADNE_REPLAY: True}, "tags": ["ariadne-replay"]}
    what = f"what step {index}'s tool wrote"
    target = changed_target(after, step.message_id, changes=changes, edited=True, what=what)
    made = edit(levels[-1].before.values)
    return (yield from _resumed(replayer, levels, after.index, counter, config, {}, made, target, "node"))


def _resumed(
    replayer: Replaying,
    levels: list[Level],
    index: int,
    counter: Counter,
    config: dict[str, Any],
    configurable: Mapping[str, Any],
    edit: StateEdit | None,
    target: CheckTarget | Unchecked,
    deriver: str,
) -> Flow[DerivedAction]:
    """Step ``index``'s node run once more in an isolated copy of the state before it (``edit`` applied), stopped
    before its tools: the calls its model wrote, its input checked against ``target``; ``deriver``: how results name
    the re-run (``middleware``: the prefill through AriadneMiddleware; ``node``: the node as it is)."""
    thread = f"ariadne-action-{uuid.uuid4()}"
    iso_saver = replay_saver()
    copy_levels(levels, iso_saver, thread, edit=edit)
    iso = replayer.isolated_graph(iso_saver, intercept=True, guard=[])
    config["configurable"] = {"thread_id": thread, **configurable, ARIADNE_MODEL_INPUTS: counter.inputs}
    config["recursion_limit"] = 10
    values = yield _ops.invoke(iso, None, config)
    if len(levels) > 1 or not isinstance(values, Mapping):  # the step ran in a subgraph: its state, read
        snapshot = yield _ops.state(iso, {"configurable": {"thread_id": thread}})
        values = deepest(snapshot).values
    known = {m.id for m in levels[-1].before.values["messages"]}
    written = [m for m in values.get("messages", ()) if isinstance(m, AIMessage) and m.id not in known]
    if not written:
        node = levels[-1].node
        raise NotReplayableError(
            f"the re-run of step {index}'s model wrote no message: its node ({node!r}) did not run again from the "
            "checkpoint before it"
        )
    unchecked = check_input(target, counter.seen(target))
    calls = _calls(written[0])
    return DerivedAction(
        calls=calls,
        deriver=deriver,
        model_calls=counter.model_calls,
        tools_executed=counter.tool_calls,
        invalid=invalid_calls(calls, replayer.tools_of(levels[-1].ns)),
        fork_checkpoint_id=levels[-1].before.config["configurable"]["checkpoint_id"],
        replay_thread_id=thread,
        text=written[0].text,
        input_checked=unchecked is None,
        unchecked=None if unchecked is None else unchecked.why,
    )


class _Captured(BaseException):
    """Raised by :class:`_Capture` to stop a model call before the model runs: a ``BaseException``, so that neither
    LangChain's callback manager (which logs an ``Exception`` from a handler) nor a retrying middleware takes it for a
    failure of the model."""


class _Capture(BaseCallbackHandler):
    """Keeps what the first model call inside the graph is given, and stops that call before the model runs."""

    raise_error = True
    run_inline = True

    def __init__(self) -> None:
        self.messages: tuple[BaseMessage, ...] | None = None

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        if self.messages is None and messages and "langgraph_node" in (kwargs.get("metadata") or {}):
            self.messages = tuple(messages[0])
            raise _Captured


def _prompt_of(replayer: Replaying, levels: list[Level]) -> Flow[tuple[BaseMessage, ...] | None]:
    """The messages the step's node gives its model, as built live (a ``create_agent`` middleware stack writes the
    system prompt at call time, which no call from outside can rebuild): the graph resumed in an isolated thread from
    the checkpoint before the step, stopped at its first model call before the model runs; ``None`` when the node
    made no model call (graph code)."""
    thread = f"ariadne-prompt-{uuid.uuid4()}"
    iso_saver = replay_saver()
    copy_levels(levels, iso_saver, thread)
    iso = replayer.isolated_graph(iso_saver, intercept=True, guard=[])
    capture = _Capture()
    config = {
        "configurable": {"thread_id": thread},
        "callbacks": [capture],
        "metadata": {ARIADNE_REPLAY: True},
        "tags": ["ariadne-replay"],
        "recursion_limit": 10,
    }
    run = _ops.invoke(iso, None, config)

    def now() -> None:
        with contextlib.suppress(_Captured):
            run.sync()

    async def later() -> None:
        with contextlib.suppress(_Captured):
            await run.async_()

    try:
        yield Call(now, later)
    except ReplayError:  # the capture's stop, wrapped by a middleware that caught it, else a real error
        if capture.messages is None:
            raise
    return capture.messages


def _checks(source: ActionSource) -> bool:
    """Whether a deriver's re-run goes through a call the recorder saw (the agent's own model found in the graph);
    one given to the auditor builds its own input, which nothing compares with the recorded one."""
    return bool(getattr(source, "checks_input", False))
