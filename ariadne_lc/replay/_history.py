"""An index of a thread's checkpoints, read once per thread and kept.

Finding the checkpoint before a step means reading the thread's history (LangGraph's callbacks carry the step's task
id, not its checkpoint id). Read whole for every audit, that costs every checkpoint's every message, each time: on a
run of n model calls, n audits read O(n²) messages each. The index keeps of each checkpoint only what finding a
step needs (its config, its parent, its pending task ids, and where each message first appears), so the history is
read once per thread; each audit then loads the checkpoint it needs by id. A kept index stays true of every
checkpoint it lists (LangGraph never changes a checkpoint once written): a thread that went on lacks only its newer
checkpoints, so a caller that finds no step, or no checkpoint, in a kept index asks for a fresh one
(:func:`~ariadne_lc.replay._fork.locate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ariadne_lc._cache import Lru
from ariadne_lc._twin import Flow
from ariadne_lc.replay import _ops

__all__ = ["Entry", "Histories", "HistoryIndex"]

KEPT: Final = 8
"""Threads whose index a replayer keeps (the traces of a batch audited at once, and a few more)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One checkpoint of the index: where to load it again, and what finding a step reads of it."""

    config: dict[str, Any]
    parent_id: str | None
    tasks: frozenset[str]

    @property
    def checkpoint_id(self) -> str:
        return str(self.config["configurable"]["checkpoint_id"])


@dataclass(frozen=True, slots=True)
class HistoryIndex:
    """A namespace's checkpoints, newest first, and the oldest one holding each message."""

    entries: tuple[Entry, ...]
    first_with: dict[str, int]
    """Message id -> index (in :attr:`entries`) of the oldest checkpoint whose ``messages`` hold it."""

    @classmethod
    def of(cls, snapshots: Sequence[Any]) -> HistoryIndex:
        entries = tuple(
            Entry(
                config=s.config,
                parent_id=(s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                tasks=frozenset(t.id for t in s.tasks),
            )
            for s in snapshots
        )
        first_with: dict[str, int] = {}
        for i in range(len(snapshots) - 1, -1, -1):  # oldest first: the first checkpoint to hold a message wins
            for m in snapshots[i].values.get("messages", ()) if isinstance(snapshots[i].values, dict) else ():
                mid = getattr(m, "id", None)
                if mid and mid not in first_with:
                    first_with[mid] = i
        return cls(entries, first_with)

    def index_of(self, checkpoint_id: str | None) -> int | None:
        return next((i for i, e in enumerate(self.entries) if e.checkpoint_id == checkpoint_id), None)


class Histories:
    """The index of each (graph, thread, namespace) read lately; thread-safe (a batch audits from several threads)."""

    def __init__(self, kept: int = KEPT) -> None:
        self._indices: Lru[tuple[int, str, str], HistoryIndex] = Lru(kept)

    def index(self, graph: Any, thread: str, ns: str, *, fresh: bool = False) -> Flow[HistoryIndex]:
        """The namespace's index, read once and kept; ``fresh``: read again (the caller found the kept one wanting)."""
        key = (id(graph), thread, ns)
        found = None if fresh else self._indices.get(key)
        if found is not None:
            return found
        snapshots = yield _ops.history(graph, {"configurable": {"thread_id": thread, "checkpoint_ns": ns}})
        return self._indices.put(key, HistoryIndex.of(snapshots))
