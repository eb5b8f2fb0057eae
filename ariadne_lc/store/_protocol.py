"""The two store protocols: where recorded traces and audit results are kept.

As in LangGraph's checkpoint libraries, the protocol is tiny, the in-memory store is the reference
implementation and every backend passes the same conformance tests (``tests/store/``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["ResultStore", "TraceStore", "check_limit"]


@runtime_checkable
class TraceStore(Protocol):
    """Keeps recorded traces. ``put`` is called on the agent's thread: it must be quick."""

    def put(self, trace: Trace) -> None:
        """Store a trace (replacing one with the same id)."""

    def get(self, trace_id: str) -> Trace:
        """The trace with this id; raises :class:`~ariadne_lc.errors.TraceNotFoundError`."""

    def list_traces(self, *, thread_id: str | None = None, limit: int | None = None) -> list[Trace]:
        """Traces in the order they were first stored, optionally of one thread, the newest ``limit``."""


@runtime_checkable
class ResultStore(Protocol):
    """Keeps audit results."""

    def put_result(self, result: AuditResult) -> None:
        """Store one result (replacing one with the same id)."""

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        """Results in the order they were first stored, optionally of one trace."""


def check_limit(limit: int | None) -> None:
    """Refuse a negative ``limit`` the same way in every backend."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")
