"""The pure function that turns a finished root run into a :class:`Trace`: :func:`build_trace`.

Everything that allocates per message happens here (reading node outputs, joining tool outputs to calls,
building steps, the interrupt records), after the run ended, on the background builder's thread by default;
the handler only appended to the :class:`~ariadne_lc.recorder._run._Run` it reads. A resumed turn found in the
store (``head``) is joined here: one trace for the turn, under the paused trace's id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from ariadne_lc._fingerprint import prompt_lines
from ariadne_lc._messages import (
    answer_text,
    first_human_text,
    messages_in,
    structured_answer,
    thought_of,
    tool_call_record,
)
from ariadne_lc.recorder._inputs import model_input
from ariadne_lc.recorder._run import _Run, jsonable_value
from ariadne_lc.semconv import ARIADNE_PARENT_AGENT, ARIADNE_PARENT_CALL_ID, ARIADNE_PARENT_TRACE_ID
from ariadne_lc.trace import AgentLink, CheckpointRef, GraphFingerprint, InterruptRecord, SpanRef, Step, Trace

__all__ = ["Fingerprinter", "build_trace"]


def _interrupt_records(run: _Run) -> tuple[InterruptRecord, ...]:
    records = []
    for a in run.asked:
        raised = run.asked_by.get(a.id) if a.id else None
        path = a.task_path or (raised[0] if raised else None)
        node = None if path is None else path.rpartition("|")[2].partition(":")[0]
        records.append(
            InterruptRecord.model_construct(
                id=a.id,
                node=node,
                task_path=path,
                value=jsonable_value(a.value),
                answered=a.answered,
                resume=jsonable_value(a.resume) if a.answered else None,
            )
        )
    return tuple(records)


def _steps(run: _Run, prior: tuple[Step, ...] = ()) -> tuple[Step, ...]:
    """One step per AI message, in the order the nodes ended, after the ``prior`` steps of the turn.

    A message id seen again (a parent graph echoing its subgraph's messages, a middleware rewriting
    the tool calls of the model's message, a resumed node writing again the message it paused on)
    updates the step it first made: the step keeps the node and task that produced it, and takes the
    latest content. Tool outputs of this run complete the calls of ``prior`` steps they answer (a
    turn paused for approval of a tool call runs the tool after the resume).
    """
    drafts: dict[str, tuple[str, int | None, AIMessage | Step]] = {}
    order: list[str] = []
    for step in prior:
        key = step.message_id or f"\0prior{step.index}"
        drafts[key] = (step.checkpoint.task_path or "", step.langgraph_step, step)
        order.append(key)
    outputs: dict[str, ToolMessage] = {}
    for _, task_path, langgraph_step, node_outputs in sorted(run.pending, key=lambda p: p[0]):
        for message in messages_in(node_outputs):
            if isinstance(message, AIMessage):
                key = message.id or f"\0{len(order)}"
                if key in drafts:
                    path, at_step, first = drafts[key]
                    drafts[key] = (path, at_step, _updated(first, message) if isinstance(first, Step) else message)
                else:
                    drafts[key] = (task_path, langgraph_step, message)
                    order.append(key)
            elif isinstance(message, ToolMessage):
                outputs[message.tool_call_id] = message
    steps = []
    for index, key in enumerate(order):
        task_path, langgraph_step, made = drafts[key]
        if isinstance(made, Step):
            steps.append(_with_outputs(made, index, outputs))
            continue
        seen = run.model_inputs.get(task_path)
        parent_ns, _, own = task_path.rpartition("|")
        node, _, task_id = own.partition(":")
        steps.append(
            Step.model_construct(
                index=index,
                node=node,
                langgraph_step=langgraph_step,
                thought=thought_of(made),
                tool_calls=tuple(tool_call_record(tc, outputs) for tc in made.tool_calls),
                message_id=made.id,
                model_input=None if seen is None else model_input(*seen),
                checkpoint=CheckpointRef.model_construct(
                    thread_id=run.thread_id,
                    checkpoint_ns=parent_ns,
                    task_id=task_id or None,
                    task_path=task_path,
                    checkpoint_id=None,
                ),
            )
        )
    return tuple(steps)


def _updated(step: Step, message: AIMessage) -> Step:
    """A prior step rewritten by a later message with its id: new content, same node and checkpoint."""
    outputs = {c.id: c for c in step.tool_calls if c.id and c.output is not None}  # already joined
    calls = tuple(
        call.model_copy(update={"output": outputs[call.id].output, "status": outputs[call.id].status})
        if call.id in outputs
        else call
        for call in (tool_call_record(tc, {}) for tc in message.tool_calls)
    )
    return step.model_copy(update={"thought": thought_of(message), "tool_calls": calls})


def _with_outputs(step: Step, index: int, outputs: dict[str, ToolMessage]) -> Step:
    calls = tuple(
        c
        if c.output is not None or not c.id or c.id not in outputs
        else c.model_copy(update={"output": outputs[c.id].text, "status": outputs[c.id].status})
        for c in step.tool_calls
    )
    return step.model_copy(update={"index": index, "tool_calls": calls})


def _joined_interrupts(
    head: tuple[InterruptRecord, ...], resume: Any, new: tuple[InterruptRecord, ...]
) -> tuple[InterruptRecord, ...]:
    """The paused turn's interrupts answered by ``resume`` (as :func:`record_answers` does), then those
    this run raised that the turn had not seen."""
    waiting = [r for r in head if not r.answered]
    by_id = resume if isinstance(resume, dict) and any(r.id in resume for r in waiting) else None
    first = waiting[0] if waiting else None
    joined = []
    for record in head:
        if record.answered:
            joined.append(record)
        elif by_id is not None and record.id in by_id:
            joined.append(record.model_copy(update={"answered": True, "resume": jsonable_value(by_id[record.id])}))
        elif by_id is None and record is first:
            joined.append(record.model_copy(update={"answered": True, "resume": jsonable_value(resume)}))
        else:
            joined.append(record)
    known = {r.id for r in head if r.id}
    return (*joined, *(r for r in new if r.id is None or r.id not in known))


def _parent(metadata: dict[str, Any]) -> AgentLink | None:
    """The link to the agent run that started this one, taken out of the run's metadata where the middleware put it."""
    trace_id = metadata.pop(ARIADNE_PARENT_TRACE_ID, None)
    call_id = metadata.pop(ARIADNE_PARENT_CALL_ID, None)
    agent = metadata.pop(ARIADNE_PARENT_AGENT, None)
    if not isinstance(trace_id, str):
        return None
    return AgentLink(trace_id=trace_id, call_id=call_id, agent_name=agent)


def _with_agents(step: Step, agents_of: dict[str, list[str]]) -> Step:
    if not any(c.id in agents_of for c in step.tool_calls):
        return step
    calls = tuple(
        c.model_copy(update={"agents": tuple(agents_of[c.id])}) if c.id in agents_of else c for c in step.tool_calls
    )
    return step.model_copy(update={"tool_calls": calls})


Fingerprinter = Callable[[], GraphFingerprint | None]


def _from_request(run: _Run) -> GraphFingerprint | None:
    """What ``AriadneMiddleware`` saw of the graph, which it never sees whole: the system prompt of the run's first
    model request (``None`` without a middleware-seen request)."""
    for messages, _, source in run.model_inputs.values():
        if source == "middleware":
            first = messages[0] if messages else None
            text = first.content if isinstance(first, SystemMessage) and isinstance(first.content, str) else ""
            return GraphFingerprint.model_construct(partial=True, system_lines=prompt_lines(text))
    return None


def build_trace(
    run: _Run,
    outputs: Any,
    error: BaseException | None,
    span: SpanRef | None,
    paused: bool,
    *,
    head: Trace | None = None,
    fingerprint: Fingerprinter | None = None,
) -> Trace:
    """The trace of a run that ended (``paused``: stopped at an interrupt, so no answer yet).

    ``head`` is the paused trace of the turn this run resumed (found in the store): the result is the
    whole turn, under the paused trace's id. A run that resumed a turn (``run.resumes``) without a
    ``head`` is only the second half of it: it gets an ``error`` that says so, and is not audited.
    """
    # Everything comes from LangChain's own typed objects; model_construct skips a second validation.
    steps = _steps(run, head.steps if head is not None else ())
    final: str | None = None
    if not paused:
        if outputs is not None:
            final = answer_text(outputs, messages_in(outputs))
            if steps and steps[-1].tool_calls and error is None and structured_answer(outputs) is not None:
                # the tool strategy's answer: the last turn's only "tool" call is the structured response
                steps = (*steps[:-1], steps[-1].model_copy(update={"structured_output": True}))
        if final is None and steps and steps[-1].is_final and error is None:
            final = steps[-1].thought
    failure = None if error is None or paused else f"{type(error).__name__}: {error}"
    interrupts = _interrupt_records(run)
    if head is not None:
        interrupts = _joined_interrupts(head.interrupts, run.resume, interrupts)
    elif run.resumes:
        answered = InterruptRecord.model_construct(
            id=None, node=None, task_path=None, value=None, answered=True, resume=jsonable_value(run.resume)
        )
        interrupts = (answered, *interrupts)
        failure = failure or (
            f"only the resumed half of a turn of thread {run.thread_id!r}: the trace of the turn paused at "
            "the interrupt was not found in the trace store (recorded into another store, not recorded, or "
            "lost), so the question and the thoughts before the interrupt are missing"
        )
    graph = (fingerprint() if fingerprint is not None else None) or _from_request(run)
    metadata = {k: v for k, v in run.metadata.items() if isinstance(v, str | int | float | bool) or v is None}
    parent = _parent(metadata)
    if run.agents_of:
        steps = tuple(_with_agents(s, run.agents_of) for s in steps)
    if head is None:
        return Trace.model_construct(
            trace_id=run.trace_id,
            thread_id=run.thread_id,
            query=first_human_text(run.inputs),
            steps=steps,
            final_answer=final,
            error=failure,
            interrupted=paused,
            interrupts=interrupts,
            span=span,
            agent_name=run.agent_name,
            tags=run.tags,
            metadata=metadata,
            started_at=datetime.fromtimestamp(run.started, UTC),
            ended_at=datetime.fromtimestamp(run.ended or time.time(), UTC),
            graph=graph,
            parent=parent,
        )
    return Trace.model_construct(
        trace_id=head.trace_id,
        thread_id=head.thread_id,
        query=head.query,
        steps=steps,
        final_answer=final,
        error=failure,
        interrupted=paused,
        interrupts=interrupts,
        span=head.span or span,
        agent_name=head.agent_name or run.agent_name,
        tags=(*head.tags, *(t for t in run.tags if t not in head.tags)),
        metadata={**metadata, **head.metadata},
        started_at=head.started_at,
        ended_at=datetime.fromtimestamp(run.ended or time.time(), UTC),
        # A turn that ran across a deploy: its audited steps come from the paused half, so keep that graph.
        graph=head.graph if head.graph is not None else graph,
        parent=head.parent or parent,
    )
