"""The builder-thread half of the callback handler: a finished run's trace built, joined, stored, handed on.

:class:`TraceDelivery` is a base of :class:`~ariadne_lc.recorder.AriadneCallbackHandler`. Its methods run on the
builder thread (or, with ``synchronous=True``, on the agent's thread at the run's end): a run that resumed a turn
paused elsewhere is joined to the paused trace the store holds (waiting up to ``resume_wait`` for it, one look only
on the agent's thread), the trace is built, put into the store and given to ``on_trace``; every step is guarded,
logged and counted, and the run's entry among the store's pending builds is closed whatever happened.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ariadne_lc._fingerprint import graph_fingerprint
from ariadne_lc.errors import TraceNotFoundError
from ariadne_lc.recorder._run import FinishedRun, RecorderStats
from ariadne_lc.store import TraceStore
from ariadne_lc.store._pending import DEFAULT_READ_WAIT, Pending
from ariadne_lc.trace import GraphFingerprint, Trace

__all__ = ["TraceDelivery"]

logger = logging.getLogger("ariadne_lc.recorder")

_RESUME_POLL = 0.1


class TraceDelivery:
    """Builds, joins and stores finished runs; the handler sets the attributes declared here."""

    store: TraceStore | None
    on_trace: Callable[[Trace], None] | None
    synchronous: bool
    graph: Any
    resume_wait: float
    stats: RecorderStats
    _lock: threading.Lock
    _pending: Pending | None
    _warned_full: bool
    _warned_no_lookup: bool

    def _fail(self, where: str) -> None:
        self.stats.errors += 1
        logger.exception("ariadne recorder: %s failed; the agent run is not affected", where)

    def _dropped_by_builder(self, run: FinishedRun) -> None:
        self._done(run)
        self.stats.dropped += 1
        if not self._warned_full:
            self._warned_full = True
            logger.warning("ariadne recorder: the build queue is full, dropping traces (counted in stats.dropped)")

    def _done(self, finished: FinishedRun) -> None:
        if finished.ticket is not None and self._pending is not None:
            self._pending.done(finished.ticket)

    def _fingerprint(self) -> GraphFingerprint | None:
        if self.graph is None:
            return None
        try:
            return graph_fingerprint(self.graph)
        except Exception:
            self._fail("fingerprinting the graph")
            return None

    def _paused_trace(self, finished: FinishedRun) -> Trace | None:
        """The stored trace of the turn ``finished`` resumed (builder thread: may wait and read)."""
        lookup = getattr(self.store, "get_paused", None)
        if lookup is None or finished.thread_id is None:
            if lookup is None and not self._warned_no_lookup:
                self._warned_no_lookup = True
                logger.warning(
                    "ariadne recorder: %s has no get_paused(thread_id); resumed turns cannot be joined",
                    type(self.store).__name__,
                )
            return None
        if self._pending is not None and finished.ticket is not None:
            self._pending.wait_before(finished.ticket, DEFAULT_READ_WAIT)  # this process's earlier runs first
        # On the agent's thread (synchronous) one look only: the run must never sleep for the recorder.
        deadline = time.monotonic() + (0.0 if self.synchronous else self.resume_wait)
        while True:
            try:
                head: Trace | None = lookup(finished.thread_id)
            except Exception:
                self._fail("store.get_paused")
                return None
            left = deadline - time.monotonic()
            if head is not None or left <= 0:
                return head
            time.sleep(min(_RESUME_POLL, left))

    def _relink(self, turn: Trace, resumed_id: str) -> None:
        """Point the sub-agent runs of a resumed turn, stored before it under the resumed run's id, at the turn it
        was joined into (builder thread)."""
        assert self.store is not None
        for child_id in dict.fromkeys(turn.agents_started):
            try:
                child = self.store.get(child_id)
            except TraceNotFoundError:  # not stored (dropped, or recorded elsewhere)
                continue
            if child.parent is not None and child.parent.trace_id == resumed_id:
                parent = child.parent.model_copy(update={"trace_id": turn.trace_id})
                self.store.put(child.model_copy(update={"parent": parent}))

    def _deliver(self, finished: FinishedRun) -> None:
        try:
            self._store_trace(finished)
        finally:
            self._done(finished)

    def _store_trace(self, finished: FinishedRun) -> None:
        head = None
        if finished.resumes and self.store is not None:
            head = self._paused_trace(finished)
            with self._lock:
                if head is None and finished.sampled_by_head:
                    self.stats.unsampled += 1  # its paused half was not sampled: neither is the rest of the turn
                    return
                if head is None:
                    self.stats.unjoined += 1
                else:
                    self.stats.resumed += 1
        elif finished.resumes:
            with self._lock:
                self.stats.unjoined += 1
        try:
            trace = finished.build(head)
        except Exception:
            self._fail("building a trace")
            return
        if self.store is not None:
            try:
                self.store.put(trace)
                if head is not None and trace.trace_id != finished.trace_id:
                    self._relink(trace, finished.trace_id)
            except Exception:
                self._fail("store.put")
        if self.on_trace is not None:
            try:
                self.on_trace(trace)
            except Exception:
                self._fail("on_trace")
