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

A failure that repeats every tick (the broker down, the store unreachable) is logged once with its
traceback, then at most once a minute as one line with the count since (:class:`_RecurringFailure`,
on the same :class:`_Every` as the drop warning); every failure is still counted in the stats and
metrics. The first success after an outage says so, and the next failure logs its traceback again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ariadne_lc.online._admission import Admission, Queued
from ariadne_lc.online._jobs import AuditPlan, JobStore
from ariadne_lc.online._metrics import MetricsExporter
from ariadne_lc.trace import Trace

__all__ = ["Dispatcher", "Persister"]

logger = logging.getLogger("ariadne_lc.online")

_WARN_INTERVAL = 60.0
_HOUR = 3600.0
_MINUTE = 60.0


class _Every:
    """Says yes at most once per ``interval`` (monotonic seconds): what rate-limits a warning."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._at = -interval

    def due(self, now: float) -> bool:
        if now - self._at < self.interval:
            return False
        self._at = now
        return True


class _RecurringFailure:
    """Logs a failure that may repeat on every tick without flooding the log: the first of an outage
    with its traceback, then one line with the count at most every ``_WARN_INTERVAL``."""

    def __init__(self, what: str, consequence: str) -> None:
        self.what = what
        self.consequence = consequence
        self._every = _Every(_WARN_INTERVAL)
        self._failing = False
        self._unlogged = 0
        self._outage = 0

    def failed(self, exc: BaseException) -> None:
        """Call in the ``except`` block (the first failure's log takes the exception being handled)."""
        self._outage += 1
        if not self._failing:
            self._failing, self._unlogged = True, 0
            self._every.due(time.monotonic())  # the traceback counts as this interval's line
            logger.exception("ariadne online: %s failed; %s", self.what, self.consequence)
            return
        self._unlogged += 1
        if self._every.due(time.monotonic()):
            logger.warning(
                "ariadne online: %s is still failing: %d more failure(s) since the last message (%d in a row; "
                "%s): %s: %s",
                self.what,
                self._unlogged,
                self._outage,
                self.consequence,
                type(exc).__name__,
                exc,
            )
            self._unlogged = 0

    def succeeded(self) -> None:
        if self._failing:
            logger.info("ariadne online: %s works again after %d failure(s)", self.what, self._outage)
        self._failing, self._unlogged, self._outage = False, 0, 0


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
        plan: AuditPlan | None = None,
    ) -> None:
        self.admission = admission
        self.jobs = jobs
        self.plan = plan
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
        self._drop_warning = _Every(_WARN_INTERVAL)
        self._persist_failures = _RecurringFailure("persisting sampled runs", "they stay queued in memory")
        self._dispatch_failures = _RecurringFailure(
            "dispatching committed jobs", "they stay pending and are offered again (stats.dispatch_errors)"
        )
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
                    added = self.jobs.add(traces, sample_rate=self.admission.sampler.rate, plan=self.plan)
                    self.admission.committed(len(added), len(traces))
            except Exception as exc:
                self._persist_failures.failed(exc)
                self.admission.requeue(traces)
                self.abandon.wait(self.tick_interval)
                return
            self._persist_failures.succeeded()
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
        except Exception as exc:
            self._dispatch_failures.failed(exc)  # logged once with its traceback, then once a minute
            keep = max(0, self.admission.max_queue_size - len(self._undispatched))
            self._undispatched.extend(job_ids[:keep])
            with self.admission.lock:
                self.admission.stats.dispatch_errors += 1
                self.admission.stats.undispatched += len(job_ids) - min(keep, len(job_ids))
            return
        self._dispatch_failures.succeeded()
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
            warn = drops and self._drop_warning.due(now)
            if warn:
                admission.unwarned_drops = 0
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
