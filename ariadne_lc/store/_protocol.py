"""The two store protocols: where recorded traces and audit results are kept.

As in LangGraph's checkpoint libraries, the protocol is tiny, the in-memory store is the reference
implementation and every backend passes the same conformance tests (``tests/store/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["TURNS_LOOKED_AT", "ResultStore", "TraceStore", "check_limit", "paused_or_none"]


@runtime_checkable
class TraceStore(Protocol):
    """Keeps recorded traces.

    ``put`` is called on the recorder's builder thread (on the agent's thread with
    ``synchronous=True``). Read your own writes: the built-in stores' read methods first call
    ``ariadne_lc.store.await_recorders(self)``, which waits (bounded) for the traces of runs that
    returned in this process before the read; a store of your own gets the same by doing so.
    """

    def put(self, trace: Trace) -> None:
        """Store a trace (replacing one with the same id, which keeps its place in the order)."""

    def get(self, trace_id: str) -> Trace:
        """The trace with this id; raises :class:`~ariadne_lc.errors.TraceNotFoundError`."""

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        """Traces in the order they were first stored, optionally of one thread, the newest ``limit``."""

    def get_paused(self, thread_id: str) -> Trace | None:
        """The newest turn of ``thread_id`` (its newest trace that is no sub-agent's run) if it is paused at an
        interrupt (``interrupted``, no ``error``), else ``None``: the turn a ``Command(resume=...)`` on that thread
        continues."""


@runtime_checkable
class ResultStore(Protocol):
    """Keeps audit results."""

    def put_result(self, result: AuditResult) -> None:
        """Store one result (replacing one with the same id)."""

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        """Results in the order they were first stored, optionally of one trace."""


TURNS_LOOKED_AT = 256
"""How many of a thread's newest traces :func:`paused_or_none` looks through for its newest turn: the sub-agent runs of
a resumed turn are stored before the turn's own trace (they end first), on the same thread."""


def paused_or_none(newest: Sequence[Trace]) -> Trace | None:
    """The newest turn among a thread's ``newest`` traces (newest first; a sub-agent's run, ``parent`` set, is no turn
    of the thread) if it waits at an interrupt, the same way in every backend."""
    turn = next((t for t in newest if t.parent is None), None)
    return turn if turn is not None and turn.interrupted and turn.error is None else None


def check_limit(limit: int | None) -> None:
    """Refuse a negative ``limit`` the same way in every backend."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")
