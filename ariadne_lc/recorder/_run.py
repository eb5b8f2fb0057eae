"""A root run's state while it is in flight, and the pure function that turns it into a :class:`Trace`.

The handler only appends to a :class:`_Run` (under its lock); everything that allocates per message
(reading node outputs, joining tool outputs to calls, building steps) happens in :func:`build_trace`,
which runs after the run ended, on the background builder's thread by default.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphInterrupt

from ariadne_lc._messages import (
    answer_text,
    first_human_text,
    messages_in,
    structured_answer,
    thought_of,
    tool_call_record,
)
from ariadne_lc.trace import CheckpointRef, GraphFingerprint, InterruptRecord, SpanRef, Step, Trace

__all__ = [
    "Fingerprinter",
    "FinishedRun",
    "RecorderStats",
    "build_trace",
    "jsonable_value",
    "new_interrupts",
    "record_answers",
]


class FinishedRun:
    """A root run that has ended (or paused at an interrupt), its :class:`Trace` not built yet.

    :meth:`build` makes the trace; it may be called later and on another thread (the recorder no
    longer touches what it reads), once.
    """

    __slots__ = ("_build", "failed", "resumes", "sampled_by_head", "thread_id", "ticket", "trace_id")

    def __init__(
        self,
        trace_id: str,
        failed: bool,
        build: Callable[..., Trace],
        *,
        thread_id: str | None = None,
        resumes: bool = False,
        sampled_by_head: bool = False,
    ) -> None:
        self.trace_id = trace_id
        """The trace id the built trace will have (a turn resumed in the same handler keeps its first
        run's id; one joined through the store takes the paused trace's id when it is delivered)."""
        self.failed = failed
        """The run raised, is paused at an interrupt, or resumed a turn whose start it does not hold:
        its trace alone has no auditable answer (yet)."""
        self.thread_id = thread_id
        """The LangGraph thread of the run."""
        self.resumes = resumes
        """The run resumed a turn paused elsewhere (another handler, another process): the recorder
        joins it to the paused trace in its store when it delivers it."""
        self.sampled_by_head = sampled_by_head
        """Recorded because it resumes a turn (its paused half decided the sampling): dropped unless joined."""
        self.ticket: int | None = None
        """The run's entry among the store's pending builds (see :mod:`ariadne_lc.store._pending`)."""
        self._build = build

    def build(self, head: Trace | None = None) -> Trace:
        """The run's trace; with ``head`` (the paused trace of the turn it resumed), the whole turn's."""
        return self._build(head=head)


@dataclass(slots=True)
class RecorderStats:
    """Counters of what the recorder did; read them to alert on a misbehaving set-up."""

    recorded: int = 0
    """Runs handed on (to the builder, the store or ``on_run_end``); a paused run counts once per pause."""
    dropped: int = 0
    """Root runs not tracked because ``max_runs_in_flight`` was reached, or traces the full build queue refused."""
    errors: int = 0
    """Exceptions caught inside the handler, the builder or the store (each was logged)."""
    ignored: int = 0
    """Root runs that were not LangGraph runs, or were ariadne replays."""
    unsampled: int = 0
    """Root runs the ``sample`` hook chose not to record."""
    paused: int = 0
    """Runs that stopped at a human-in-the-loop interrupt."""
    resumed: int = 0
    """Resumptions joined to the paused turn they continue (one trace per user turn): found in the store,
    or, for a handler without a store, in its memory."""
    paused_dropped: int = 0
    """Paused runs a handler without a store forgot before their resume (``max_paused_runs`` reached):
    their resume is stored alone (``unjoined``)."""
    unjoined: int = 0
    """Resumes whose paused trace was not found (not in the store, or forgotten): stored alone, not auditable.
    With a ``sample`` hook and a store, a resume whose paused half was not found was not sampled: it is dropped
    and counted in ``unsampled`` instead."""


@dataclass(slots=True)
class _Asked:
    id: str | None
    task_path: str | None
    value: Any
    answered: bool = False
    resume: Any = None


@dataclass(slots=True)
class _Run:
    trace_id: str
    thread_id: str | None
    inputs: Any
    """The root run's input, read (for the query) only when the trace is built."""
    agent_name: str | None
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    """The root run's metadata as LangChain passed it; filtered to JSON values when the trace is built."""
    span: SpanRef | None
    started: float
    ended: float = 0.0
    pending: list[tuple[int, str, int | None, Any]] = field(default_factory=list)
    """Node outputs as they came: (sequence, task path, LangGraph step, outputs), read only when built."""
    nodes: dict[Any, tuple[str, int | None]] = field(default_factory=dict)
    """Run id of each node run in flight -> its task path and LangGraph step."""
    children: list[int] = field(default_factory=list)
    """Every descendant run started (``UUID.int``), so that none outlives the root in the handler's map."""
    asked: list[_Asked] = field(default_factory=list)
    """Interrupts of this turn, in order."""
    asked_by: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """Interrupt id -> (task path of the innermost node that raised it, its value)."""
    resumes: bool = False
    """This run resumed a turn whose paused part the handler does not hold (it is in the store, or lost)."""
    resume: Any = None
    """The ``Command(resume=...)`` value of such a run."""
    sampled_by_head: bool = False
    """Recorded without asking ``sample``: a resume follows its paused half's sampling decision, so it is kept
    only if that half is found in the store (it was sampled), and dropped otherwise."""

    def snapshot(self) -> _Run:
        """A copy the builder may read while this run goes on after a resume."""
        return replace(
            self,
            pending=list(self.pending),
            nodes={},
            children=[],
            asked=[replace(a) for a in self.asked],
            asked_by=dict(self.asked_by),
        )


def jsonable_value(value: Any) -> Any:
    """``value`` as JSON-compatible data (unknown objects become their ``str``), for traces and matching."""
    if hasattr(value, "model_dump"):
        try:
            value = value.model_dump(mode="json")
        except Exception:  # a pydantic model that cannot dump: keep its text
            return str(value)
    return json.loads(json.dumps(value, default=str))


def new_interrupts(run: _Run, outputs: Any, error: BaseException | None) -> list[_Asked]:
    """The interrupts a root run stopped at that the run had not recorded yet.

    LangGraph 1.x ends the root run normally; the asking node's run ends with ``GraphInterrupt``
    (seen in ``asked_by``). ``__interrupt__`` in the output and a ``GraphInterrupt`` reaching the
    root are read too, for other versions and streaming modes.
    """
    raised: tuple[Any, ...] = ()
    if isinstance(error, GraphInterrupt):
        raised = tuple(error.args[0]) if error.args else ()
    elif isinstance(outputs, dict):
        raised = tuple(outputs.get("__interrupt__") or ())
    known = {a.id for a in run.asked}
    asked = [_Asked(i.id, None, i.value) for i in raised if i.id not in known]
    known.update(a.id for a in asked)
    return asked + [_Asked(i, path, value) for i, (path, value) in run.asked_by.items() if i not in known]


def record_answers(run: _Run, resume: Any) -> None:
    """Mark the waiting interrupts answered by ``Command(resume=...)``: a dict keyed by interrupt ids
    answers each, any other value answers the first waiting one (as LangGraph does)."""
    waiting = [a for a in run.asked if not a.answered]
    by_id = resume if isinstance(resume, dict) and any(a.id in resume for a in waiting) else None
    for i, asked in enumerate(waiting):
        if by_id is not None and asked.id in by_id:
            asked.answered, asked.resume = True, by_id[asked.id]
        elif by_id is None and i == 0:
            asked.answered, asked.resume = True, resume


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


Fingerprinter = Callable[[], GraphFingerprint | None]


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
    graph = fingerprint() if fingerprint is not None else None
    metadata = {k: v for k, v in run.metadata.items() if isinstance(v, str | int | float | bool) or v is None}
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
    )
