"""The persister thread: commit accepted runs to the job store, announce them, keep things fresh.

It drains :class:`~ariadne_lc.online._admission.Admission`'s deque every ``persist_interval`` (or at
once when a full batch waits) into the job store, one transaction a batch. It is not woken per run
on purpose: a wake-up right after each run would take the interpreter lock from the agent at the
worst moment. Traces are built here, not on the agent's thread. Only a committed job is
*acknowledged*: workers claim jobs from the store, never from memory; a batch the store refuses
goes back to the front of the deque and waits (bounded by ``max_queue_size``; what does not fit is
dropped and counted on the agent's side).

After a commit it hands the new job ids to the :class:`Dispatcher`, if there is one (a broker for
workers elsewhere). A dispatcher that raises changes nothing in the store: the jobs stay pending,
the failure is logged and counted (``stats.dispatch_errors``), and the ids are offered again at the
next ticks (up to ``max_queue_size`` ids are kept for that; beyond, they are left to the
``claim``-polling workers and counted in ``stats.undispatched``). A dispatcher that blocks holds up
this thread only: the agent's thread never waits for it, accepted runs wait in the bounded deque.

Once a tick (``tick_interval``) it renews the leases of this process's running audits, recounts
the backlog, refreshes the budget and the rate limit from the store (fleet-wide counts), warns
about drops (at most once a minute) and exports the metrics.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ariadne_lc.online._admission import Admission, Queued
from ariadne_lc.online._jobs import JobStore
from ariadne_lc.online._metrics import MetricsExporter
from ariadne_lc.trace import Trace

__all__ = ["Dispatcher", "Persister"]

logger = logging.getLogger("ariadne_lc.online")

_WARN_INTERVAL = 60.0
_HOUR = 3600.0
_MINUTE = 60.0


@runtime_checkable
class Dispatcher(Protocol):
    """Announces newly committed jobs to workers elsewhere (e.g. as Celery tasks).

    :meth:`dispatch` is called on the online auditor's persister thread, never on the agent's, right
    after the jobs were committed; the workers then claim each one with
    :meth:`JobStore.claim_job <ariadne_lc.online.JobStore.claim_job>`. It should bound its own time
    (publish with a timeout): while it blocks, this process persists nothing new and renews no
    lease. When it raises, the jobs stay pending in the store and are offered again on later ticks,
    so a job may be dispatched more than once; ``claim_job`` makes the extra deliveries no-ops.
    """

    def dispatch(self, job_ids: Sequence[str]) -> None:
        """Announce these pending jobs (ids in commit order)."""


class Persister:
    """The daemon thread between admission and the job store (see the module docstring)."""

    def __init__(
        self,
        admission: Admission,
        jobs: JobStore,
        *,
        persist_interval: float,
        tick_interval: float,
        lease: float,
        dispatcher: Dispatcher | None,
        metrics: MetricsExporter,
        commit_lock: threading.Lock,
        active_claims: Callable[[], list[str]],
        on_committed: Callable[[], None],
        wake: threading.Event,
    ) -> None:
        self.admission = admission
        self.jobs = jobs
        self.persist_interval = persist_interval
        self.tick_interval = tick_interval
        self.lease = lease
        self.dispatcher = dispatcher
        self.metrics = metrics
        self.commit_lock = commit_lock
        self.active_claims = active_claims
        self.on_committed = on_committed
        self.wake = wake
        """Set to persist at once (a full batch is waiting, or a flush or shutdown wants it)."""
        self.abandon = threading.Event()
        """Set when a shutdown stops waiting for this thread: give up what is left."""
        self.closing = False
        self._undispatched: list[str] = []
        self._warned_at = -_WARN_INTERVAL
        self.thread = threading.Thread(target=self._main, name="ariadne-online-persist", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self, deadline: float) -> None:
        """Persist what is queued and stop, or give up at ``deadline`` (monotonic seconds)."""
        self.closing = True
        self.wake.set()
        self.thread.join(max(0.0, deadline - time.monotonic()))
        if self.thread.is_alive():
            self.abandon.set()
            self.wake.set()

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()

    def _main(self) -> None:
        next_tick = 0.0
        while True:
            self.wake.wait(min(self.persist_interval, self.tick_interval))
            self.wake.clear()
            try:
                self._drain()
            except Exception:  # never let the persister die: the accepted runs would wait forever
                self.admission.error("persisting")
                self.abandon.wait(self.tick_interval)
            with self.admission.lock:
                empty = not self.admission.buffer
            closing, now = self.closing, time.monotonic()
            if now >= next_tick or closing:
                self.tick()
                next_tick = now + self.tick_interval
            if closing and (empty or self.abandon.is_set()):
                return

    def _drain(self) -> None:
        while True:
            batch = self.admission.take_batch()
            if not batch:
                return
            traces = self._build(batch)
            try:
                with self.commit_lock:
                    added = self.jobs.add(traces, sample_rate=self.admission.sampler.rate)
                    self.admission.committed(len(added), len(traces))
            except Exception:
                logger.exception("ariadne online: persisting %d job(s) failed; they stay queued in memory", len(batch))
                self.admission.requeue(traces)
                self.abandon.wait(self.tick_interval)
                return
            self._dispatch(added)
            self.on_committed()

    def _build(self, batch: list[Queued]) -> list[Trace]:
        """The traces of a batch, built here rather than on the agent's thread. After each one the
        interpreter lock is offered back (``sleep(0)``), so an agent thread waiting for it runs first."""
        traces: list[Trace] = []
        for item in batch:
            if isinstance(item, Trace):
                traces.append(item)
                continue
            try:
                traces.append(item.build())
            except Exception:
                logger.exception(
                    "ariadne online: building the trace of run %s failed; it is not audited", item.trace_id
                )
                with self.admission.lock:
                    self.admission.stats.errors += 1
            time.sleep(0)
        return traces

    def _dispatch(self, job_ids: list[str]) -> None:
        if self.dispatcher is None or not job_ids:
            return
        try:
            self.dispatcher.dispatch(job_ids)
        except Exception:
            logger.exception("ariadne online: dispatching %d job(s) failed; they stay pending", len(job_ids))
            keep = max(0, self.admission.max_queue_size - len(self._undispatched))
            self._undispatched.extend(job_ids[:keep])
            with self.admission.lock:
                self.admission.stats.dispatch_errors += 1
                self.admission.stats.undispatched += len(job_ids) - min(keep, len(job_ids))
            return
        with self.admission.lock:
            self.admission.stats.dispatched += len(job_ids)

    def _redispatch(self) -> None:
        if self._undispatched:
            ids, self._undispatched = self._undispatched, []
            self._dispatch(ids)

    def tick(self) -> None:
        """Heartbeats, counts from the store, the drop warning and the metric export."""
        admission, budget, limiter = self.admission, self.admission.budget, self.admission.limiter
        try:
            claims = self.active_claims()
            if claims:
                self.jobs.heartbeat(claims, lease=self.lease)
            if budget is not None:
                budget.refresh(self.jobs.model_calls_since(time.time() - _HOUR))
            if limiter is not None:
                # The store's count leaves out this process's accepted jobs not committed yet: add them.
                # Under the commit lock no batch lands between the count and the buffer's size, and under the
                # admission lock none is admitted while the count is handed over (else they went uncounted).
                with self.commit_lock:
                    added = self.jobs.added_since(time.time() - _MINUTE)
                    with admission.lock:
                        limiter.observe_fleet(added + len(admission.buffer) + admission.persisting)
            with self.commit_lock:
                backlog = self.jobs.unfinished()  # also counts what other processes added or finished
                with admission.lock:
                    admission.backlog = backlog
        except Exception:
            admission.error("tick")
        try:
            self._redispatch()
        except Exception:
            admission.error("dispatch")
        with admission.lock:
            snapshot = replace(admission.stats)
            unpersisted = len(admission.buffer) + admission.persisting
            depth = unpersisted + admission.backlog
            drops, now = admission.unwarned_drops, time.monotonic()
            warn = drops and now - self._warned_at >= _WARN_INTERVAL
            if warn:
                admission.unwarned_drops, self._warned_at = 0, now
        if warn:
            logger.warning(
                "ariadne online: the audit queue is full (%d unfinished jobs, max_queue_size=%d): dropped %d newly "
                "sampled run(s) since the last warning (counted in stats.dropped)",
                depth,
                admission.max_queue_size,
                drops,
            )
        try:
            self.metrics.export(snapshot, depth=depth, unpersisted=unpersisted)
        except Exception:
            admission.error("metrics export")
