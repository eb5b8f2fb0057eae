"""Read your own writes: the runs whose traces are still being built, per trace store, in this process.

The recorder builds traces on a background thread (so that the agent's thread never does), which
opens a window in which a run has returned but its trace is not in the store yet. This registry
closes it: a handler with a store registers every run it hands to its builder (a counter and a dict
entry on the agent's thread: no lock, no wait) and marks it done once stored (or dropped), and the
stores' read methods wait, bounded by :data:`DEFAULT_READ_WAIT`, for the runs registered *before*
the read began. Reads made on a builder thread never wait (the builder orders its own reads, see
:meth:`Pending.wait_before`), so a hook that reads the store cannot deadlock.

It holds within one process and one store object (or one SQLite file): another process sees a trace
once its own builder has stored it, which :func:`flush_traces` (and, at the latest, interpreter exit)
makes certain. The registry imports nothing above the records, so stores and the recorder can share it.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import threading
import time
import weakref
from collections.abc import Hashable
from typing import Any

__all__ = [
    "DEFAULT_EXIT_WAIT",
    "DEFAULT_READ_WAIT",
    "Pending",
    "await_recorders",
    "builder_thread",
    "flush_traces",
    "pending_for",
]

logger = logging.getLogger("ariadne_lc.recorder")

DEFAULT_READ_WAIT = 10.0
"""Seconds a store read waits at most for traces of runs that returned before it (then reads anyway, warned)."""
DEFAULT_EXIT_WAIT = 10.0
"""Seconds the interpreter's exit waits at most for traces still being built."""

_local = threading.local()


class Pending:
    """The runs handed to builders for one store and not stored yet, by ticket (increasing)."""

    __slots__ = ("__weakref__", "_cond", "_counter", "_open", "_wakers")

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._open: dict[int, None] = {}
        self._cond = threading.Condition(threading.Lock())
        self._wakers: weakref.WeakSet[threading.Event] = weakref.WeakSet()

    def attach(self, wake: threading.Event) -> None:
        """A builder's wake-up event: a waiting reader sets it, so the builder does not sleep out its timer."""
        with self._cond:
            self._wakers.add(wake)

    def add(self) -> int:
        """Register a run (agent's thread: ``next`` on a counter and a dict insertion, both atomic)."""
        ticket = next(self._counter)
        self._open[ticket] = None
        return ticket

    def done(self, ticket: int) -> None:
        """The run's trace is stored (or will never be): wake the readers waiting for it."""
        self._open.pop(ticket, None)
        with self._cond:
            self._cond.notify_all()

    def wait_before(self, ticket: int | None, timeout: float | None) -> bool:
        """Wait until every run registered before ``ticket`` (``None``: before now) is done."""
        horizon = [t for t in list(self._open) if ticket is None or t < ticket]
        if not horizon:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            for wake in list(self._wakers):
                wake.set()
            while any(t in self._open for t in horizon):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def __len__(self) -> int:
        return len(self._open)


_registry: dict[Hashable, Pending] = {}
_registry_lock = threading.Lock()


def _key(store: Any) -> Hashable:
    """Stores of one place share a key (``pending_key``, e.g. a SQLite file's path); others their identity."""
    key = getattr(store, "pending_key", None)
    return ("id", id(store)) if key is None else key


def pending_for(store: Any) -> Pending:
    """The registry entry of ``store`` (created on first use, dropped with an identity-keyed store)."""
    key = _key(store)
    entry = _registry.get(key)
    if entry is not None:
        return entry
    with _registry_lock:
        entry = _registry.get(key)
        if entry is None:
            entry = _registry[key] = Pending()
            if isinstance(key, tuple) and key[0] == "id":
                with contextlib.suppress(TypeError):  # a store that cannot be weakly referenced keeps its entry
                    # not at exit: the exit flush below still needs the entry
                    weakref.finalize(store, _registry.pop, key, None).atexit = False
    return entry


def builder_thread() -> None:
    """Mark the calling thread as a builder: its store reads do not wait (see the module docstring)."""
    _local.builder = True


def await_recorders(store: Any, timeout: float = DEFAULT_READ_WAIT) -> None:
    """Called by a store's read methods: wait for the traces of runs that returned before this read."""
    if getattr(_local, "builder", False):
        return
    entry = _registry.get(_key(store))
    if entry is None or not len(entry):
        return
    if not entry.wait_before(None, timeout):
        logger.warning(
            "ariadne: traces of runs that already returned were still being built after %g s; "
            "this read of the trace store may miss them",
            timeout,
        )


def flush_traces(store: Any = None, timeout: float | None = None) -> bool:
    """Wait until the trace of every run that has returned in this process is stored.

    Reads of the built-in stores already wait for these runs (in this process); call this before
    another process reads the store (hand-over of a SQLite file, a resume on another replica right
    after a pause, a script about to exit), or before reading a store of your own.

    Args:
        store: The trace store whose runs to wait for; ``None``: every store.
        timeout: Seconds to wait at most; ``None``: as long as it takes.

    Returns:
        ``False`` if the timeout passed first.

    Examples:
        >>> from ariadne_lc import InMemoryTraceStore, flush_traces
        >>> flush_traces(InMemoryTraceStore(), timeout=5)
        True
    """
    if store is not None:
        entry = _registry.get(_key(store))
        return entry is None or entry.wait_before(None, timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    for entry in list(_registry.values()):
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not entry.wait_before(None, left):
            return False
    return True


@atexit.register
def _flush_at_exit() -> None:
    # Builder threads are daemons: without this, a script's last traces die with the interpreter.
    if any(len(e) for e in list(_registry.values())) and not flush_traces(timeout=DEFAULT_EXIT_WAIT):
        logger.warning("ariadne: the interpreter exits with traces still being built; they are lost")
