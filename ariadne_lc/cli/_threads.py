"""Before an audit of recorded traces spends anything: does the graph's checkpointer hold their threads?

A replay forks the recorded thread at a checkpoint, so it needs the checkpointer the run was recorded with. Traces
kept in a persistent store (SQLite) but recorded beside an ``InMemorySaver`` cannot be audited from another process:
every audit would fail the same way. One line says so first, with the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne_lc.errors import NotReplayableError
from ariadne_lc.trace import Trace

__all__ = ["check_threads"]

_FIX = (
    "record with a persistent checkpointer (e.g. SqliteSaver beside a SQLiteTraceStore, or PostgresSaver) and audit "
    "with a graph on that same checkpointer; an InMemorySaver keeps nothing once its process ends"
)


def check_threads(graph: Any, traces: Sequence[Trace]) -> str | None:
    """``None`` when the graph's checkpointer holds every trace's thread; a warning when it misses some.

    Raises:
        NotReplayableError: It holds none of them (or the graph has no checkpointer): no audit could replay.
    """
    saver = getattr(graph, "checkpointer", None)
    threaded = [t for t in traces if t.thread_id]
    if not threaded:
        return None
    if saver is None or isinstance(saver, bool):
        raise NotReplayableError(
            f"the graph has no checkpointer, so none of the {len(threaded)} runs can be replayed: " + _FIX
        )
    missing = [t for t in threaded if saver.get_tuple({"configurable": {"thread_id": t.thread_id}}) is None]
    if len(missing) == len(threaded):
        raise NotReplayableError(
            f"the graph's checkpointer holds none of the {len(threaded)} recorded threads (e.g. "
            f"{missing[0].thread_id!r}), so no audit could replay: {_FIX}"
        )
    if missing:
        return (
            f"the graph's checkpointer does not hold {len(missing)} of the {len(threaded)} recorded threads (e.g. "
            f"{missing[0].thread_id!r}): their audits will fail (NotReplayableError). To audit them, {_FIX}"
        )
    return None
