"""The online auditor: sample live runs, persist the sample, audit it in the background.

Three stages, each on its own side of a thread boundary, modelled on OpenTelemetry's batch span
processor:

1. **Hot path** (:meth:`OnlineAuditor.offer`, called by the recorder when a run ends, on the agent's
   thread or event loop): filter, hash sample, budget, rate limit, queue bound, then an append to an
   in-memory deque (and an event set, only when a full batch is waiting). O(1), no I/O, no
   OpenTelemetry call, never raises.
2. **Persister** (a daemon thread): every ``persist_interval`` (or at once for a full batch) drains
   the deque into the job store, one transaction a batch. It is not woken per run on purpose: a
   wake-up right after each run would take the interpreter lock from the agent at the worst moment.
   Only a committed job is *acknowledged*: workers claim jobs from the store, never from memory.
   Once a tick (``tick_interval``) it also renews the leases of running audits, refreshes the
   backlog and the budget from the store, and exports metrics.
3. **Workers** (:mod:`ariadne_lc.online._worker`): claim, audit, commit; in a daemon thread with its
   own loop (:meth:`start`) or as tasks in the application's loop (:meth:`astart`); or in another
   process sharing the job store (neither).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from ariadne_lc._version import __version__
from ariadne_lc.audit import Auditor, StepSelector
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions import parse_intervention_types
from ariadne_lc.online._jobs import JobStore, SQLiteJobStore, new_owner, owner_alive
from ariadne_lc.online._metrics import MetricsExporter, OnlineStats
from ariadne_lc.online._sampler import Budget, Decision, RateLimiter, RunFilter, RunInfo, Sampler
from ariadne_lc.online._worker import AuditEngine, Outcome
from ariadne_lc.recorder import AriadneCallbackHandler, FinishedRun, SpanContextGetter
from ariadne_lc.trace import Trace

__all__ = [
    "DEFAULT_AUDIT_TIMEOUT",
    "DEFAULT_JOB_STORE_PATH",
    "DEFAULT_LEASE",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_BATCH_SIZE",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_QUEUE_SIZE",
    "DEFAULT_MAX_RETRY_BACKOFF",
    "DEFAULT_PERSIST_INTERVAL",
    "DEFAULT_RETRY_BACKOFF",
    "DEFAULT_SAMPLE_RATE",
    "DEFAULT_TICK_INTERVAL",
    "OnlineAuditor",
    "ShutdownReport",
]

logger = logging.getLogger("ariadne_lc.online")

DEFAULT_SAMPLE_RATE = 0.05
"""Fraction of matching runs audited."""
DEFAULT_JOB_STORE_PATH = "ariadne-online-jobs.db"
"""The SQLite job store used when none is given (relative to the working directory)."""
DEFAULT_MAX_QUEUE_SIZE = 1024
"""Unfinished jobs (in memory + in the job store) beyond which newly sampled runs are dropped."""
DEFAULT_MAX_BATCH_SIZE = 256
"""Jobs persisted per transaction; a full batch is persisted at once."""
DEFAULT_PERSIST_INTERVAL = 0.1
"""Seconds an accepted run may wait in memory before it is committed: the durability window."""
DEFAULT_MAX_CONCURRENCY = 2
"""Audits run at once by this process's workers."""
DEFAULT_AUDIT_TIMEOUT = 300.0
"""Seconds one audit attempt may take before it counts as failed (and is retried)."""
DEFAULT_MAX_ATTEMPTS = 3
"""Attempts per job, including the first."""
DEFAULT_RETRY_BACKOFF = 5.0
"""Seconds before the first retry; doubled each time (with jitter)."""
DEFAULT_MAX_RETRY_BACKOFF = 600.0
"""Upper bound on the delay before a retry."""
DEFAULT_LEASE = 120.0
"""Seconds a claim lasts without a heartbeat; a worker that stops renewing loses its jobs."""
DEFAULT_TICK_INTERVAL = 1.0
"""Seconds between heartbeats, backlog and budget refreshes and metric exports."""
DEFAULT_TIMEOUT = 30.0
"""Default timeout of :meth:`OnlineAuditor.force_flush` and :meth:`OnlineAuditor.shutdown`."""
_EXIT_TIMEOUT = 5.0
_WARN_INTERVAL = 60.0
_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class ShutdownReport:
    """What :meth:`OnlineAuditor.shutdown` left behind."""

    unpersisted: int
    """Accepted runs that never reached the job store: these audits are lost."""
    unfinished: int
    """Jobs still pending or running in the job store: the next start (any process) resumes them."""
    released: int
    """Attempts in flight that were handed back (not counted as attempts)."""

    @property
    def clean(self) -> bool:
        """Whether everything accepted was persisted and audited."""
        return self.unpersisted == 0 and self.unfinished == 0


def _positive(name: str, value: float, *, minimum: float = 0.0, strict: bool = True) -> None:
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    if not valid or value < minimum or (strict and value == minimum):
        bound = f"greater than {minimum:g}" if strict else f"at least {minimum:g}"
        raise ConfigurationError(f"{name} must be a number {bound}, got {value!r}")


class OnlineAuditor:
    """Audits a sample of a deployed agent's live runs in the background, durably.

    Attach :attr:`handler` to the agent's runs (or serve :meth:`wrap`'s result), start the workers
    with :meth:`start` (sync apps and sync savers) or ``await`` :meth:`astart` (async apps, async-only
    savers), and :meth:`shutdown` at the end. Results land in :attr:`jobs`
    (``online.jobs.list_results()``) and as audit spans on ``tracer_provider``.

    Args:
        graph: The compiled graph being served, with the checkpointer its runs write to.
        jobs: The job store, or a path for a :class:`SQLiteJobStore` (``":memory:"``: not durable).
        auditor: The auditor to run; default ``Auditor(graph, tracer_provider=tracer_provider)``. Give it
            no ``result_store``: results are stored, exactly once, in ``jobs``.
        sample_rate: Fraction of matching runs to audit, decided by a hash of the trace id.
        run_filter: Which runs are eligible (agent, tags, metadata such as user or environment).
        max_audits_per_minute: Rate limit (token bucket); sampled runs beyond it are skipped and counted.
        max_model_calls_per_hour: Budget of audit model calls; sampled runs beyond it are skipped and counted.
        step, interventions: What each audit does (see :meth:`Auditor.audit <ariadne_lc.Auditor.audit>`).
        max_queue_size: Bound on unfinished jobs (buffer + store backlog); beyond it the newest sampled
            run is dropped, counted and warned about.
        max_batch_size: Jobs persisted per transaction.
        persist_interval: Seconds between commits of accepted runs (the window a crash can lose).
        max_concurrency: Audits this process runs at once.
        audit_timeout: Seconds an attempt may take.
        max_attempts: Attempts per job (retries with exponential backoff between them).
        retry_backoff, max_retry_backoff: First retry delay and its cap, in seconds.
        lease: Seconds a claim survives without a heartbeat.
        tick_interval: Seconds between heartbeats, refreshes from the store and metric exports.
        tracer_provider: For the default auditor's spans (default: the global provider).
        meter_provider: For the metrics (default: the global provider).
        name: Put on every metric point as ``ariadne.online.name``; default the graph's name.
        span_context_getter: Passed to the recorder (see :class:`~ariadne_lc.AriadneCallbackHandler`).

    Examples:
        >>> online = OnlineAuditor(graph, jobs="audits.db", sample_rate=0.05)  # doctest: +SKIP
        >>> online.start()  # doctest: +SKIP
        >>> config = {"configurable": {"thread_id": "t-2"}, "callbacks": [online.handler]}  # doctest: +SKIP
        >>> graph.invoke(inputs, config)  # doctest: +SKIP
        >>> online.shutdown()  # doctest: +SKIP
    """

    def __init__(
        self,
        graph: Any,
        *,
        jobs: JobStore | str | Path = DEFAULT_JOB_STORE_PATH,
        auditor: Auditor | None = None,
        sample_rate: float = DEFAULT_SAMPLE_RATE,
        run_filter: RunFilter | None = None,
        max_audits_per_minute: float | None = None,
        max_model_calls_per_hour: int | None = None,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
        max_queue_size: int = DEFAULT_MAX_QUEUE_SIZE,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        persist_interval: float = DEFAULT_PERSIST_INTERVAL,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        audit_timeout: float = DEFAULT_AUDIT_TIMEOUT,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        retry_backoff: float = DEFAULT_RETRY_BACKOFF,
        max_retry_backoff: float = DEFAULT_MAX_RETRY_BACKOFF,
        lease: float = DEFAULT_LEASE,
        tick_interval: float = DEFAULT_TICK_INTERVAL,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        name: str | None = None,
        span_context_getter: SpanContextGetter | None = None,
    ) -> None:
        for arg, value in (("max_queue_size", max_queue_size), ("max_batch_size", max_batch_size)):
            _positive(arg, value, minimum=1, strict=False)
        _positive("max_concurrency", max_concurrency, minimum=1, strict=False)
        _positive("max_attempts", max_attempts, minimum=1, strict=False)
        _positive("audit_timeout", audit_timeout)
        _positive("retry_backoff", retry_backoff, strict=False)
        _positive("max_retry_backoff", max_retry_backoff, strict=False)
        _positive("tick_interval", tick_interval)
        _positive("persist_interval", persist_interval)
        if not (isinstance(lease, int | float) and lease > 2 * tick_interval):
            raise ConfigurationError(
                f"lease must be more than twice tick_interval ({tick_interval:g} s), got {lease!r}"
            )
        types = tuple(
            str(t)
            for t in parse_intervention_types(interventions if isinstance(interventions, str) else list(interventions))
        )
        self.sampler = Sampler(sample_rate, run_filter)
        self._limiter = (
            None if max_audits_per_minute is None else RateLimiter(max_audits_per_minute, clock=time.monotonic)
        )
        self._budget = (
            None
            if max_model_calls_per_hour is None
            else Budget(max_model_calls_per_hour, initial_estimate=float(len(types)))
        )
        self.auditor = auditor if auditor is not None else Auditor(graph, tracer_provider=tracer_provider)
        self.step: StepSelector = step
        self.interventions = types
        self.max_queue_size = max_queue_size
        self.max_batch_size = max_batch_size
        self.persist_interval = float(persist_interval)
        self.max_concurrency = max_concurrency
        self.audit_timeout = float(audit_timeout)
        self.max_attempts = max_attempts
        self.retry_backoff = float(retry_backoff)
        self.max_retry_backoff = float(max_retry_backoff)
        self.lease = float(lease)
        self.tick_interval = float(tick_interval)
        self.name = name or getattr(graph, "name", None) or "default"
        self.owner = new_owner()
        self.stats = OnlineStats()
        self.handler = AriadneCallbackHandler(
            span_context_getter=span_context_getter, sample=self._head, on_run_end=self._on_run_end
        )
        """The callback handler to put in the agent's run config."""

        self._owns_jobs = not isinstance(jobs, JobStore)
        self.jobs: JobStore = SQLiteJobStore(jobs) if isinstance(jobs, str | Path) else jobs
        """The job store: jobs and, once audited, their results (``online.jobs.list_results()``)."""
        self._lock = threading.Lock()
        self._buffer: deque[Trace | FinishedRun] = deque()
        self._persisting = 0
        self._backlog = 0
        self._closed = False
        self._closing = False
        self._abandon = threading.Event()
        self._unwarned_drops = 0
        self._warned_at = -_WARN_INTERVAL
        self._wake = threading.Event()
        self._progress = threading.Condition()
        self._engine: AuditEngine | None = None
        self._engine_thread: threading.Thread | None = None
        self._report: ShutdownReport | None = None
        self._shutdown_lock = threading.Lock()
        # Held while a job is finished in the store and while the backlog is counted from it, so that
        # the hot path's view of the queue (buffer + in flight + backlog) is exact for this process.
        self._commit_lock = threading.Lock()
        self._metrics = MetricsExporter(meter_provider, self.name, __version__)

        reclaimed = self.jobs.reclaim(owner_alive)
        if reclaimed:
            logger.info("ariadne online: %d job(s) of a dead worker are pending again", reclaimed)
        self._backlog = self.jobs.unfinished()
        self._persister = threading.Thread(target=self._persist_main, name="ariadne-online-persist", daemon=True)
        self._persister.start()
        self._at_exit = partial(_shutdown_at_exit, weakref.ref(self))
        atexit.register(self._at_exit)

    # -- the hot path ------------------------------------------------------------------------------

    def offer(self, trace: Trace) -> None:
        """Consider a finished, already recorded run for auditing (for traces from a recorder of your
        own; :attr:`handler` needs no help). Same rules and costs as the handler's hot path."""
        try:
            with self._lock:
                self.stats.recorded += 1
            if self._decide(RunInfo.of(trace)) and self._auditable(trace.final_answer is not None):
                self._admit(trace)
        except Exception:
            self._error("offer")

    # The handler's hooks. They run on the agent's thread or event loop: O(1), no I/O, no
    # OpenTelemetry call, never raising, never waiting for an audit.

    def _head(self, trace_id: str, agent_name: str | None, tags: tuple[str, ...], metadata: Mapping[str, Any]) -> bool:
        """At a root run's start: record it at all? (filter and hash)"""
        try:
            with self._lock:
                self.stats.recorded += 1
            if self.sampler.run_filter is None:  # the common case, without building a RunInfo
                return self.sampler.sampled(trace_id)
            return self._decide(RunInfo(trace_id, agent_name, tags, metadata))
        except Exception:
            self._error("sampling")
            return False

    def _on_run_end(self, run: FinishedRun) -> None:
        """At a sampled run's end: queue it; its trace is built later, by the persister."""
        try:
            if self._auditable(not run.failed):
                self._admit(run)
        except Exception:
            self._error("queueing")

    def _decide(self, run: RunInfo) -> bool:
        decision = self.sampler.decide(run)
        if decision is Decision.FILTERED:
            with self._lock:
                self.stats.filtered += 1
        return decision is Decision.SAMPLED

    def _auditable(self, answered: bool) -> bool:
        # A run that raised or stopped at an interrupt has no final answer to audit.
        if not answered:
            with self._lock:
                self.stats.filtered += 1
        return answered

    def _admit(self, item: Trace | FinishedRun) -> None:
        with self._lock:
            stats = self.stats
            stats.sampled += 1
            if self._closed:
                stats.refused += 1
                return
            depth = len(self._buffer) + self._persisting + self._backlog
            if self._budget is not None and self._budget.exhausted(depth):
                stats.over_budget += 1
                return
            if self._limiter is not None and not self._limiter.try_acquire():
                stats.rate_limited += 1
                return
            if depth >= self.max_queue_size:
                stats.dropped += 1
                self._unwarned_drops += 1
                if self._limiter is not None:
                    self._limiter.refund()
                return
            self._buffer.append(item)
            stats.accepted += 1
            stats.max_queue_depth = max(stats.max_queue_depth, depth + 1)
            wake = len(self._buffer) == self.max_batch_size
        if wake:
            self._wake.set()

    def wrap(self, graph: Any) -> Any:
        """``graph`` with :attr:`handler` bound to every run (``graph.with_config(callbacks=[handler])``).

        Serve the returned runnable; callbacks given at invoke time are added to it. Keep passing the
        compiled graph itself to auditors.
        """
        return graph.with_config(callbacks=[self.handler])

    @property
    def queue_depth(self) -> int:
        """Unfinished jobs: accepted in memory plus pending or running in the job store."""
        with self._lock:
            return len(self._buffer) + self._persisting + self._backlog

    @property
    def unpersisted(self) -> int:
        """Accepted jobs not committed yet (what a crash right now would lose)."""
        with self._lock:
            return len(self._buffer) + self._persisting

    # -- persister thread --------------------------------------------------------------------------

    def _persist_main(self) -> None:
        next_tick = 0.0
        while True:
            self._wake.wait(min(self.persist_interval, self.tick_interval))
            self._wake.clear()
            try:
                self._drain()
            except Exception:  # never let the persister die: the accepted runs would wait forever
                self._error("persisting")
                self._abandon.wait(self.tick_interval)
            with self._lock:
                closing, empty = self._closing, not self._buffer
            now = time.monotonic()
            if now >= next_tick or closing:
                self._tick()
                next_tick = now + self.tick_interval
            if closing and (empty or self._abandon.is_set()):
                return

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._buffer:
                    return
                batch = [self._buffer.popleft() for _ in range(min(len(self._buffer), self.max_batch_size))]
                self._persisting = len(batch)
            traces = self._build(batch)
            try:
                with self._commit_lock:
                    added = self.jobs.add(traces, sample_rate=self.sampler.rate)
                    with self._lock:
                        self._persisting = 0
                        self._backlog += added
                        self.stats.persisted += len(traces)
            except Exception:
                logger.exception("ariadne online: persisting %d job(s) failed; they stay queued in memory", len(batch))
                with self._lock:
                    self._buffer.extendleft(reversed(traces))
                    self._persisting = 0
                    self.stats.errors += 1
                self._abandon.wait(self.tick_interval)
                return
            engine = self._engine
            if engine is not None:
                engine.notify()
            self._notify_progress()

    def _build(self, batch: list[Trace | FinishedRun]) -> list[Trace]:
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
                with self._lock:
                    self.stats.errors += 1
            time.sleep(0)
        return traces

    def _tick(self) -> None:
        spent = 0
        try:
            engine = self._engine
            claims = engine.active_claims() if engine is not None else []
            if claims:
                self.jobs.heartbeat(claims, lease=self.lease)
            if self._budget is not None:
                spent = self.jobs.model_calls_since(time.time() - _HOUR)
            with self._commit_lock:
                backlog = self.jobs.unfinished()  # also counts what other processes added or finished
                with self._lock:
                    self._backlog = backlog
                    if self._budget is not None:
                        self._budget.spent = spent
        except Exception:
            self._error("tick")
        with self._lock:
            snapshot = replace(self.stats)
            unpersisted = len(self._buffer) + self._persisting
            depth = unpersisted + self._backlog
            drops, now = self._unwarned_drops, time.monotonic()
            warn = drops and now - self._warned_at >= _WARN_INTERVAL
            if warn:
                self._unwarned_drops, self._warned_at = 0, now
        if warn:
            logger.warning(
                "ariadne online: the audit queue is full (%d unfinished jobs, max_queue_size=%d): dropped %d newly "
                "sampled run(s) since the last warning (counted in stats.dropped)",
                depth,
                self.max_queue_size,
                drops,
            )
        try:
            self._metrics.export(snapshot, depth=depth, unpersisted=unpersisted)
        except Exception:
            self._error("metrics export")

    # -- workers -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Run audits in this process: workers on a daemon thread with its own event loop, each
        audit the synchronous ``Auditor.audit`` on a daemon thread of its own.

        Use it for sync serving and sync savers (``SqliteSaver``, ``InMemorySaver``, Postgres).
        Audits share the interpreter with the agent: at high sample rates prefer running them in
        another process (an ``OnlineAuditor`` on the same job store that calls ``start()`` and is
        never attached to runs).
        """
        engine = self._new_engine(use_async=False)
        started = threading.Event()
        thread = threading.Thread(
            target=self._engine_main, args=(engine, started), name="ariadne-online-audits", daemon=True
        )
        self._engine_thread = thread
        thread.start()
        started.wait()

    async def astart(self) -> None:
        """Run audits as tasks in the running event loop (``Auditor.aaudit``); call it from the app's
        loop, e.g. in a FastAPI lifespan. Needed when the graph's saver is async-only
        (``AsyncSqliteSaver`` is bound to its loop). Blocking store calls go to a helper thread."""
        engine = self._new_engine(use_async=True)
        engine.begin()

    def _new_engine(self, *, use_async: bool) -> AuditEngine:
        with self._lock:
            if self._closed:
                raise ConfigurationError("this OnlineAuditor was shut down; create a new one")
            if self._engine is not None:
                raise ConfigurationError("the audit workers are already running (start() or astart() was called)")
            self._engine = AuditEngine(
                jobs=self.jobs,
                auditor=self.auditor,
                step=self.step,
                interventions=self.interventions,
                owner=self.owner,
                concurrency=self.max_concurrency,
                lease=self.lease,
                audit_timeout=self.audit_timeout,
                max_attempts=self.max_attempts,
                retry_backoff=self.retry_backoff,
                max_retry_backoff=self.max_retry_backoff,
                poll_interval=self.tick_interval,
                use_async=use_async,
                on_outcome=self._on_outcome,
                on_finished=self._on_finished,
                commit_lock=self._commit_lock,
            )
            return self._engine

    @staticmethod
    def _engine_main(engine: AuditEngine, started: threading.Event) -> None:
        try:
            asyncio.run(engine.run(started))
        except Exception:
            logger.exception("ariadne online: the audit thread stopped with an error")
        finally:
            started.set()

    def _on_finished(self) -> None:
        with self._lock:
            self._backlog -= 1

    def _on_outcome(self, outcome: Outcome) -> None:
        with self._lock:
            stats = self.stats
            if outcome.kind == "done":
                stats.audited += 1
            elif outcome.kind == "failed":
                stats.failed += 1
            elif outcome.kind == "retry":
                stats.retried += 1
            else:
                stats.superseded += 1
            stats.model_calls += outcome.model_calls
            if self._budget is not None:
                self._budget.spent += outcome.model_calls
        if outcome.kind != "superseded":
            if self._budget is not None:
                self._budget.observe(outcome.model_calls)
            self._metrics.audit_duration(outcome.duration_s, outcome.kind)
        self._notify_progress()

    # -- flush and shutdown ------------------------------------------------------------------------

    def force_flush(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Persist every accepted run and, when this process runs workers, wait until every job
        persisted so far is done or failed. ``True`` if that happened within ``timeout`` seconds."""
        self._refuse_on_engine_loop("force_flush", "aforce_flush")
        if self._report is not None:  # shut down: nothing more will happen here
            return self._report.clean
        deadline = time.monotonic() + timeout
        if not self._wait_persisted(deadline):
            return False
        if self._engine is None:
            return True
        try:
            return self._wait_audited(self.jobs.max_seq(), deadline)
        except Exception:
            self._error("force_flush")
            return False

    async def aforce_flush(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """:meth:`force_flush` without blocking the running loop (the waiting happens on a thread)."""
        return await asyncio.to_thread(self.force_flush, timeout)

    def shutdown(self, timeout: float = DEFAULT_TIMEOUT, *, drain: bool = True) -> ShutdownReport:
        """Refuse new runs, persist what was accepted, finish the queued audits (``drain``), stop the
        workers and release what is still in flight, all within ``timeout`` seconds.

        Nothing persisted is lost: unfinished jobs wait in the job store for the next start. Returns
        what was left; calling it again returns the same report.
        """
        self._refuse_on_engine_loop("shutdown", "ashutdown")
        with self._shutdown_lock:
            if self._report is not None:
                return self._report
            deadline = time.monotonic() + timeout
            self._close_and_persist(deadline)
            if drain and self._engine is not None:
                self._drain_audits(deadline)
            released = self._stop_engine(deadline)
            return self._finish(released)

    async def ashutdown(self, timeout: float = DEFAULT_TIMEOUT, *, drain: bool = True) -> ShutdownReport:
        """:meth:`shutdown` from the event loop the workers run on (or any loop)."""
        engine = self._engine
        if engine is None or not engine.use_async or engine.loop is not asyncio.get_running_loop():
            return await asyncio.to_thread(self.shutdown, timeout, drain=drain)
        if self._report is not None:
            return self._report
        deadline = time.monotonic() + timeout
        await asyncio.to_thread(self._close_and_persist, deadline)
        if drain:
            await asyncio.to_thread(self._drain_audits, deadline)
        engine.stop()
        if not await engine.wait_stopped(max(0.0, deadline - time.monotonic())):
            logger.warning(
                "ariadne online: audit tasks still running at the shutdown deadline; their jobs are released"
            )
        released = await asyncio.to_thread(self._release, engine)
        return await asyncio.to_thread(self._finish, released)

    def _refuse_on_engine_loop(self, name: str, async_name: str) -> None:
        engine = self._engine
        if engine is None or not engine.use_async:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return
        if running is engine.loop:
            raise ConfigurationError(
                f"{name}() would block the event loop the audits run on; use 'await online.{async_name}()'"
            )

    def _close_and_persist(self, deadline: float) -> None:
        with self._lock:
            self._closed = True
            self._closing = True
        self._wake.set()
        self._persister.join(max(0.0, deadline - time.monotonic()))
        if self._persister.is_alive():
            self._abandon.set()
            self._wake.set()

    def _wait_persisted(self, deadline: float) -> bool:
        self._wake.set()
        with self._progress:
            while self.unpersisted:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._persister.is_alive():
                    return False
                self._progress.wait(min(remaining, self.tick_interval))
        return True

    def _drain_audits(self, deadline: float) -> None:
        try:
            self._wait_audited(self.jobs.max_seq(), deadline)
        except Exception:
            self._error("draining the audits")

    def _wait_audited(self, up_to_seq: int, deadline: float) -> bool:
        while True:
            if self.jobs.unfinished(up_to_seq=up_to_seq) == 0:
                return True
            remaining = deadline - time.monotonic()
            engine = self._engine
            if remaining <= 0 or engine is None or not engine.running:
                return False
            with self._progress:
                self._progress.wait(min(remaining, self.tick_interval))

    def _stop_engine(self, deadline: float) -> int:
        engine = self._engine
        if engine is None:
            return 0
        loop = engine.loop
        if loop is not None and not loop.is_closed():
            if engine.use_async:
                if loop.is_running():

                    async def stop() -> None:
                        engine.stop()
                        await engine.wait_stopped(max(0.0, deadline - time.monotonic()))

                    try:
                        asyncio.run_coroutine_threadsafe(stop(), loop).result(max(0.0, deadline - time.monotonic()))
                    except Exception:
                        logger.warning("ariadne online: the audit tasks did not stop in time")
            else:
                with contextlib.suppress(RuntimeError):  # the loop already closed
                    loop.call_soon_threadsafe(engine.stop)
        if self._engine_thread is not None:
            self._engine_thread.join(max(0.0, deadline - time.monotonic()))
        return self._release(engine)

    def _release(self, engine: AuditEngine) -> int:
        claims = engine.active_claims()
        if not claims:
            return 0
        try:
            return self.jobs.release(claims)
        except Exception:
            self._error("release")
            return 0

    def _finish(self, released: int) -> ShutdownReport:
        self._tick()
        try:
            unfinished = self.jobs.unfinished()
        except Exception:
            self._error("shutdown")
            unfinished = -1
        report = ShutdownReport(unpersisted=self.unpersisted, unfinished=unfinished, released=released)
        if report.unpersisted:
            logger.warning(
                "ariadne online: %d accepted run(s) could not be persisted before the shutdown timeout and are lost",
                report.unpersisted,
            )
        if report.unfinished:
            logger.info("ariadne online: %d job(s) left in the job store for the next start", report.unfinished)
        if self._owns_jobs:
            self.jobs.close()
        atexit.unregister(self._at_exit)
        self._report = report
        return report

    # -- helpers -----------------------------------------------------------------------------------

    def _notify_progress(self) -> None:
        with self._progress:
            self._progress.notify_all()

    def _error(self, where: str) -> None:
        with self._lock:
            self.stats.errors += 1
        logger.exception("ariadne online: %s failed; the agent is not affected", where)

    def __enter__(self) -> OnlineAuditor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    async def __aenter__(self) -> OnlineAuditor:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.ashutdown()


def _shutdown_at_exit(ref: weakref.ref[OnlineAuditor]) -> None:
    online = ref()
    if online is not None:
        online.shutdown(_EXIT_TIMEOUT, drain=False)
