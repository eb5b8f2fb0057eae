"""A root run's state while it is in flight, what the recorder hands on when it ends, and what it counts.

The handler only appends to a :class:`_Run` (under its lock); everything that allocates per message
(reading node outputs, joining tool outputs to calls, building steps) happens in
:func:`~ariadne_lc.recorder._build.build_trace`, which runs after the run ended, on the background builder's
thread by default. The interrupts a run stops at and the answers of its resume are recorded here, as they come.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.errors import GraphInterrupt

from ariadne_lc.recorder._nested import Caller
from ariadne_lc.trace import SpanRef, Trace

__all__ = [
    "FinishedRun",
    "RecorderStats",
    "jsonable_value",
    "new_interrupts",
    "record_answers",
]


class FinishedRun:
    """A root run that has ended (or paused at an interrupt), its :class:`Trace` not built yet.

    :meth:`build` makes the trace; it may be called later and on another thread (the recorder no
    longer touches what it reads), once.
    """

    __slots__ = ("_build", "failed", "model_calls", "resumes", "sampled_by_head", "thread_id", "ticket", "trace_id")

    def __init__(
        self,
        trace_id: str,
        failed: bool,
        build: Callable[..., Trace],
        *,
        thread_id: str | None = None,
        resumes: bool = False,
        sampled_by_head: bool = False,
        model_calls: int = 0,
    ) -> None:
        self.trace_id = trace_id
        self.model_calls = model_calls
        """The model calls the run made, as far as the recorder saw them (one per model node run; 0: none seen), so
        that admission can reserve what auditing it will cost before its trace is built."""
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
    agent_span: Any = None
    """The recorder's own ``invoke_agent`` span (:mod:`._spans`) while the run runs; ``None`` without a tracer."""
    pending: list[tuple[int, str, int | None, Any]] = field(default_factory=list)
    """Node outputs as they came: (sequence, task path, LangGraph step, outputs), read only when built."""
    nodes: dict[Any, tuple[str, int | None]] = field(default_factory=dict)
    """Run id of each node run in flight -> its task path and LangGraph step."""
    agents_of: dict[str, list[str]] = field(default_factory=dict)
    """Tool call id -> the trace ids of the agent runs the call started (sub-agents)."""
    model_inputs: dict[str, tuple[Any, Any, str]] = field(default_factory=dict)
    """Task path of a node -> what its (last) model call was given: (messages, tools, who saw it), digested only
    when the trace is built (:class:`~ariadne_lc.trace.ModelInput`)."""
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
    caller: Caller | None = None
    """The tool call of another recorded run that started this one (a sub-agent, :mod:`._nested`)."""
    records_itself: bool = False
    """A sub-agent with a recorder of its own (its ``AriadneMiddleware``): that recorder's trace is the one kept."""

    def snapshot(self) -> _Run:
        """A copy the builder may read while this run goes on after a resume."""
        return replace(
            self,
            pending=list(self.pending),
            model_inputs=dict(self.model_inputs),
            agents_of={k: list(v) for k, v in self.agents_of.items()},
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
