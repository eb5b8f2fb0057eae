"""The recorder's builder thread: traces are built and stored here, not on the agent's thread.

Modelled on OpenTelemetry's batch span processor: a bounded deque, a daemon thread, drop-and-count
when full (with one warning), :meth:`Builder.flush` to wait until everything handed over so far is
done, errors logged and counted where the work happens. Handing a run over is one ``deque.append``
(atomic, no lock); the thread is woken when a batch has gathered, on a flush, or by its own timer,
so the agent's thread neither takes a lock nor hands the interpreter to the builder after each run.
A reader of the store wakes it too (:mod:`ariadne_lc.store._pending`), so a read right after a run
waits for one build, not for the timer.

The thread starts with the first run and exits when its handler is garbage-collected or shut down,
but never with runs still queued: a builder with queued runs is held in :data:`_LIVE` until they
are delivered, so a handler made for one request and dropped when it returns (the per-call pattern)
still has its trace stored.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable

from ariadne_lc.recorder._run import FinishedRun
from ariadne_lc.store._pending import builder_thread

__all__ = ["BUILD_INTERVAL", "DEFAULT_MAX_QUEUED_TRACES", "Builder"]

logger = logging.getLogger("ariadne_lc.recorder")

DEFAULT_MAX_QUEUED_TRACES = 10_000
"""Finished runs waiting to be built; beyond it new ones are dropped and counted."""
BUILD_INTERVAL = 0.2
"""Seconds the builder sleeps when fewer than a batch of runs are waiting (the delay before a trace is stored)."""
_BATCH = 64
_LIVE: set[Builder] = set()
"""Builders with runs queued: kept alive until those are delivered, whatever happens to their handler."""


class Builder:
    """Builds each handed-over run on one daemon thread and passes it to ``deliver``.

    Args:
        deliver: Called on the builder thread with each finished run; it builds and stores.
        on_drop: Called (on the agent's thread) when a run is refused because the queue is full.
        max_queued: Hard cap on runs waiting.
    """

    def __init__(
        self,
        deliver: Callable[[FinishedRun], None],
        on_drop: Callable[[FinishedRun], None],
        max_queued: int,
    ) -> None:
        self._deliver = deliver
        self._on_drop = on_drop
        self._max = max_queued
        self._queue: deque[FinishedRun | threading.Event] = deque()
        self._wake = threading.Event()
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, run: FinishedRun) -> None:
        """Hand over a run (agent's thread: an append, never a lock or a wait)."""
        queued = len(self._queue)
        if self._closed or queued >= self._max:
            self._on_drop(run)
            return
        self._queue.append(run)
        _LIVE.add(self)  # after the append: see _loop
        if self._thread is None:
            self._start()
        if queued + 1 >= _BATCH:
            self._wake.set()

    @property
    def wake(self) -> threading.Event:
        """Set it to have the thread build what is queued now instead of at its next timer."""
        return self._wake

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=_loop, args=(weakref.ref(self), self._wake), name="ariadne-recorder-builder", daemon=True
                )
                self._thread.start()

    def _drain(self) -> None:
        while self._queue:
            item = self._queue.popleft()
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self._deliver(item)
            except Exception:  # deliver guards itself; this is the last line of defence
                logger.exception("ariadne recorder: building trace %s failed", item.trace_id)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run handed over so far is built and stored; ``False`` on timeout."""
        if self._thread is None or (self._closed and not self._queue):
            return not self._queue  # nothing was handed over, or shut down and drained
        done = threading.Event()
        self._queue.append(done)  # FIFO: set once everything before it is delivered
        self._wake.set()
        return done.wait(timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Refuse new runs, finish the queued ones, stop the thread."""
        self._closed = True
        return self.flush(timeout)


def _loop(ref: weakref.ReferenceType[Builder], wake: threading.Event) -> None:
    builder_thread()
    while True:
        wake.wait(BUILD_INTERVAL)
        wake.clear()
        builder = ref()
        if builder is None:
            return
        builder._drain()
        _LIVE.discard(builder)
        if builder._queue:  # appended after the drain: submit adds to _LIVE after appending, so keep it
            _LIVE.add(builder)
        elif builder._closed:
            return
        del builder  # let the handler be collected while this thread sleeps
