"""One replay, start to end, as one flow of LangGraph calls (driven by ``_twin.run_sync`` or ``run_async``): the fork
at the latest chosen step, what is substituted there (the thoughts, the step's own calls, an early answer's cut), and
the isolated thread run on from it (:mod:`ariadne_lc.replay._run`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from ariadne_lc._thoughts import with_thought
from ariadne_lc._twin import Flow
from ariadne_lc.errors import (
    ConfigurationError,
    NoThoughtError,
    NotReplayableError,
)  # fmt: skip
from ariadne_lc.replay import _ops
from ariadne_lc.replay._derive import StepContext, derive, with_tool_calls
from ariadne_lc.replay._fork import Level, copy_levels
from ariadne_lc.replay._inputs import target_of
from ariadne_lc.replay._run import Replaying, Run
from ariadne_lc.replay._saver import replay_saver
from ariadne_lc.replay._tools import Served
from ariadne_lc.replay._types import ReplayResult, ToolPolicy
from ariadne_lc.trace import Step, ToolCall, Trace

__all__ = ["check_step", "replay_flow"]


def _continued(message: AIMessage, reply: str) -> AIMessage:
    """The step's (substituted) message with the re-run's ``reply`` after its thought: with no call, what the model
    wrote after the thought is the step's answer. A reply that repeats the prefill (the local server's does) is it."""
    text = message.content if isinstance(message.content, str) else message.text
    if not reply.startswith(text.rstrip()):  # the local server strips the end of its reply
        space = "" if not text or text[-1:].isspace() or reply[:1].isspace() else " "
        reply = f"{text}{space}{reply}"
    return message.model_copy(update={"content": reply})


def check_step(trace: Trace, index: int, *, thought_needed: bool = True) -> Step:
    step = trace.step(index)
    if thought_needed and not step.thought.strip():
        raise NoThoughtError(
            f"step {index} of trace {trace.trace_id} has no thought (a bare tool call); choose a step with text, "
            "or step='auto'"
        )
    if step.checkpoint.thread_id is None:
        raise NotReplayableError(
            f"trace {trace.trace_id} was recorded without a thread_id; run the graph with "
            "config={'configurable': {'thread_id': ...}} so that it is checkpointed"
        )
    if step.checkpoint.task_id is None or not step.checkpoint.task_path:
        raise NotReplayableError(f"step {index} has no LangGraph task id; it cannot be located")
    return step


def _update(levels: list[Level], original: AIMessage, steps: list[Step], thoughts: Mapping[int, str]) -> list[Any]:
    """The messages written at the fork: earlier chosen steps rewritten in place, then the latest one."""
    messages = {m.id: m for m in levels[-1].before.values["messages"]}
    out: list[Any] = []
    for step in steps[:-1]:
        message = messages.get(step.message_id) if step.message_id else None
        if not isinstance(message, AIMessage) or step.checkpoint.checkpoint_ns != steps[-1].checkpoint.checkpoint_ns:
            raise NotReplayableError(
                f"step {step.index}'s message is not in the state before step {steps[-1].index}; "
                "steps of one multi-step intervention must belong to the same run and the same (sub)graph"
            )
        out.append(_rewritten(message, step, thoughts[step.index]))
    out.append(_rewritten(original, steps[-1], thoughts[steps[-1].index]))
    return out


def _rewritten(message: AIMessage, step: Step, thought: str) -> AIMessage:
    """The message as recorded when its thought is unchanged (an observation swap, a rerun: a bare tool call stays
    bare, a provider's reasoning stays), else with the new thought where the model put its own."""
    return message if thought == step.thought else with_thought(message, thought)


def _rederive(
    replayer: Replaying,
    trace: Trace,
    level: Level,
    written: list[Any],
    step: Step,
    thought: str,
    config: dict[str, Any],
    original: AIMessage,
) -> Flow[str | None]:
    """In ``rederive`` mode, replace the step's tool calls in ``written[-1]`` by the ones derived from
    ``thought``; returns the deriver's name (``None``: recorded mode, the calls stay)."""
    deriver = replayer.tool_call_deriver
    if replayer.tool_calls != "rederive" or deriver is None:
        return None
    rewritten = {m.id: m for m in written[:-1]}
    history = tuple(rewritten.get(m.id, m) for m in level.before.values["messages"])
    context = StepContext(
        query=trace.query,
        step=step,
        messages=history,
        tools=replayer.tools_of(level.ns),
        config={k: v for k, v in config.items() if k in ("callbacks", "metadata", "tags")},
        message=original,
    )
    calls = yield from derive(deriver, thought, context)
    written[-1] = with_tool_calls(written[-1], calls)
    return deriver.name


def _recorded_output(trace: Trace, call_id: str) -> str | None:
    return next((c.output for s in trace.steps for c in s.tool_calls if c.id == call_id), None)


def _fresh(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"name": c.name, "args": dict(c.args), "id": f"ariadne-rederived-{uuid.uuid4().hex[:12]}"} for c in calls]


def replay_flow(
    replayer: Replaying,
    trace: Trace,
    thoughts: Mapping[int, str],
    *,
    early: bool,
    instruction: str,
    outputs: Mapping[str, str] | None = None,
    calls: Sequence[ToolCall] | None = None,
    reply: str = "",
) -> Flow[ReplayResult]:
    """Fork at the latest chosen step, substitute, and run on to an answer (see the package docstring)."""
    if not thoughts:
        raise ConfigurationError("no steps to substitute")
    # an observation swap keeps the thought: a step with no text before its call is replayed as it was
    steps = [check_step(trace, k, thought_needed=not outputs) for k in sorted(thoughts)]
    last = steps[-1]
    levels, original = yield from replayer.locate(last)
    forked = list(levels[-1].before.values.get("messages", ()))  # digested only when no model call was made
    written = _update(levels, original, steps, thoughts)
    intercept = early or replayer.tool_policy is ToolPolicy.RECORDED or bool(outputs)
    as_node = last.node
    run = Run(replayer, trace, last, early=early)
    deriver: str | None = None
    if calls is not None:  # the calls the step's model made with the new thought (thought->action re-run)
        written[-1] = with_tool_calls(written[-1], _fresh(calls))
        if not calls and reply.strip():
            written[-1] = _continued(written[-1], reply)
        deriver = "action"
    elif not early:  # early answering drops the step's calls whatever the mode
        deriver = yield from _rederive(
            replayer, trace, levels[-1], written, last, thoughts[last.index], run.config, original
        )
    if early:
        tool_node = replayer.tool_node_of(levels[-1].ns)
        if tool_node is None:
            raise NotReplayableError(
                "early answering needs the graph's tool node (its edge leads back to the model); "
                "none was found, pass tool_node= to the Replayer"
            )
        written[-1] = written[-1].model_copy(update={"tool_calls": []})
        written.append(HumanMessage(content=instruction))
        as_node = tool_node
    served = Served(trace, dict(outputs or {}))
    iso_saver = replay_saver()
    copy_levels(levels, iso_saver, run.thread)
    iso = replayer.isolated_graph(iso_saver, intercept=intercept, served=served, early=early)
    at = run.at(levels[-1])
    yield _ops.update_state(iso, at, {"messages": written}, as_node)
    new_calls = early or calls is not None or deriver is not None
    edited = [s for s in steps if thoughts[s.index] != s.thought]
    swapped = sum(out != _recorded_output(trace, call_id) for call_id, out in (outputs or {}).items())
    target = target_of(trace, steps, new_calls=new_calls, edited=edited, swapped=swapped)
    return (yield from run.on(iso, levels, served, target, intercept=intercept, forked=forked, deriver=deriver))
