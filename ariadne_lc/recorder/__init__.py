"""The callback handler that turns live LangGraph runs into :class:`~ariadne_lc.trace.Trace` records.

It runs inside the user's agent, on the agent's threads, so it follows the rules of OpenTelemetry's
span processors: it never raises (every hook is guarded; failures are logged and counted), never
blocks (no I/O on the agent's thread), keeps state only for runs in flight (popped on end or error)
under hard caps with drop counters, and ignores the replays that the auditor itself runs.

What happens on the agent's thread is kept to bookkeeping: chain events are what is needed (a node's
output holds the AI message it wrote and the tool messages answering earlier calls, which is exactly
what the graph state records), with a chat model's start (its input, for the replay invariant) and a tool
call's start and end (where a sub-agent starts, :mod:`ariadne_lc.recorder._nested`); LLM and retriever
callbacks are switched off, and a node's output is kept as it came (one tuple appended under a lock).
Reading the messages, building steps and the :class:`Trace`, and the store's ``put`` happen after the run, on a
builder thread (``synchronous=True`` moves them back onto the agent's thread at the run's end).

Human in the loop: a root run that ends with ``__interrupt__`` in its output is paused, not
finished. Its trace is stored unfinished (``interrupted``, no answer). The ``Command(resume=...)``
run on that thread, seen by this handler or any other writing to the same store (a new handler per
request, another replica, another process), is joined to it on the builder thread: the store's
``get_paused(thread_id)`` gives the paused trace, and the whole turn is stored under its id, the
answer recorded beside the question in ``Trace.interrupts`` so that replays can give it again. A
handler without a store keeps paused runs in memory (bounded) and joins only the resumes it sees.

Reading your own writes: the handler registers each run it hands to its builder with the store's
pending builds (:mod:`ariadne_lc.store._pending`), and the stores' reads wait for those that ended
before the read, so a read right after ``graph.invoke`` sees the run while the agent's thread still
builds nothing. With ``graph=`` each trace carries the graph's fingerprint (:mod:`ariadne_lc._fingerprint`).

Two optional hooks keep the agent's thread lighter still for online auditing: ``sample`` decides at a
root run's start whether to record it at all, and ``on_run_end`` receives a :class:`FinishedRun`
whose trace is built later, on the consumer's thread.
"""

from ariadne_lc.recorder._background import DEFAULT_MAX_QUEUED_TRACES
from ariadne_lc.recorder._handler import (
    DEFAULT_MAX_PAUSED_RUNS,
    DEFAULT_MAX_RUNS_IN_FLIGHT,
    DEFAULT_RESUME_WAIT,
    AriadneCallbackHandler,
    RunSampler,
    SpanContextGetter,
)
from ariadne_lc.recorder._run import FinishedRun, RecorderStats

__all__ = [
    "DEFAULT_MAX_PAUSED_RUNS",
    "DEFAULT_MAX_QUEUED_TRACES",
    "DEFAULT_MAX_RUNS_IN_FLIGHT",
    "DEFAULT_RESUME_WAIT",
    "AriadneCallbackHandler",
    "FinishedRun",
    "RecorderStats",
    "RunSampler",
    "SpanContextGetter",
]
