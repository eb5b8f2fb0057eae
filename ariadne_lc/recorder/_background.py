"""The recorder's builder thread: traces are built and stored here, not on the agent's thread.

Modelled on OpenTelemetry's batch span processor: a bounded deque, a daemon thread woken by an
event, drop-and-count when full (with one warning), :meth:`flush` to wait until everything handed
over so far is done, errors logged and counted where the work happens. The thread starts with the
first run and exits when its handler is garbage-collected or :meth:`shutdown` is called.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable

from ariadne_lc.recorder._run import FinishedRun

__all__ = ["DEFAULT_MAX_QUEUED_TRACES", "Builder"]

logger = logging.getLogger("ariadne_lc.recorder")

DEFAULT_MAX_QUEUED_TRACES = 10_000
"""Finished runs waiting to be built; beyond it new ones are dropped and counted."""


class Builder:
    """Builds each handed-over run on one daemon thread and passes the trace to ``deliver``.

    Args:
        deliver: Called on the builder thread with each finished run; it builds and stores.
        on_drop: Called (on the agent's thread) when a run is refused because the queue is full.
        max_queued: Hard cap on runs waiting.
    """

    def __init__(self, deliver: Callable[[FinishedRun], None], on_drop: Callable[[], None], max_queued: int) -> None:
        self._deliver = deliver
        self._on_drop = on_drop
        self._max = max_queued
        self._queue: deque[FinishedRun] = deque()
        self._wake = threading.Event()
        self._cond = threading.Condition()
        self._handed = 0
        self._done = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, run: FinishedRun) -> None:
        """Hand over a run (agent's thread: an append and an event set, never a wait)."""
        if self._closed or len(self._queue) >= self._max:
            self._on_drop()
            return
        with self._cond:
            self._handed += 1
        self._queue.append(run)
        if self._thread is None:
            self._start()
        self._wake.set()

    def _start(self) -> None:
        with self._cond:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=_loop, args=(weakref.ref(self),), name="ariadne-recorder-builder", daemon=True
            )
            self._thread.start()

    def _drain(self) -> None:
        while self._queue:
            run = self._queue.popleft()
            try:
                self._deliver(run)
            except Exception:  # deliver guards itself; this is the last line of defence
                logger.exception("ariadne recorder: building trace %s failed", run.trace_id)
            with self._cond:
                self._done += 1
                self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every run handed over so far is built and stored; ``False`` on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._handed
            while self._done < target:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._wake.set()
                self._cond.wait(remaining)
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Refuse new runs, finish the queued ones, stop the thread."""
        self._closed = True
        done = self.flush(timeout)
        self._wake.set()
        return done


def _loop(ref: weakref.ReferenceType[Builder]) -> None:
    while True:
        builder = ref()
        if builder is None:
            return
        wake = builder._wake
        if builder._closed and not builder._queue:
            return
        builder._drain()
        del builder  # let the handler be collected while this thread sleeps
        wake.wait(1.0)
        wake.clear()
