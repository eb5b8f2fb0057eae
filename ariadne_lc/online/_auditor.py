"""The online auditor: sample live runs, persist the sample, audit it in the background.

:class:`OnlineAuditor` is a thin front over three stages, each on its own side of a thread
boundary, modelled on OpenTelemetry's batch span processor:

1. **Admission** (:mod:`ariadne_lc.online._admission`), on the agent's thread or event loop: filter,
   hash sample, budget, rate limit, queue bound, then an append to an in-memory deque. O(1), no I/O,
   no OpenTelemetry call, never raises.
2. **Persister** (:mod:`ariadne_lc.online._persister`), a daemon thread: commits batches to the job
   store (only a committed job is *acknowledged*), announces them to a dispatcher if one is given,
   and once a tick renews leases, refreshes counts from the store and exports metrics.
3. **Workers** (:mod:`ariadne_lc.online._worker`), started and stopped by
   :mod:`ariadne_lc.online._lifecycle`: claim, audit, commit; in a daemon thread with its own loop
   (:meth:`~OnlineAuditor.start`), as tasks in the application's loop (:meth:`~OnlineAuditor.astart`),
   or in other processes sharing the job store (neither).

The auditor's start, flush and shutdown are :class:`~ariadne_lc.online._controls.RunControls`, a base of
:class:`OnlineAuditor` over the :class:`~ariadne_lc.online._lifecycle.Lifecycle`.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from ariadne_lc._version import __version__
from ariadne_lc.audit import DEFAULT_BUDGET, DEFAULT_INTERVENTIONS, Auditor, StepSelector, cost_bound
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions import parse_interventions
from ariadne_lc.online._admission import Admission
from ariadne_lc.online._controls import RunControls
from ariadne_lc.online._forward import ResultForwarder, split_result_stores
from ariadne_lc.online._jobs import AuditPlan, JobStore, new_owner, owner_alive
from ariadne_lc.online._lifecycle import Lifecycle, ShutdownReport
from ariadne_lc.online._metrics import MetricsExporter, OnlineStats
from ariadne_lc.online._open import open_job_store
from ariadne_lc.online._persister import Dispatcher, Persister
from ariadne_lc.online._runner import with_links
from ariadne_lc.online._sampler import Budget, RateLimiter, RunFilter, Sampler
from ariadne_lc.online._worker import AuditEngine, AuditRunner
from ariadne_lc.recorder import AriadneCallbackHandler, SpanContextGetter
from ariadne_lc.records import Link
from ariadne_lc.store import TraceStore
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
_EXIT_TIMEOUT = 5.0


def _positive(name: str, value: float, *, minimum: float = 0.0, strict: bool = True) -> None:
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    if not valid or value < minimum or (strict and value == minimum):
        bound = f"greater than {minimum:g}" if strict else f"at least {minimum:g}"
        raise ConfigurationError(f"{name} must be a number {bound}, got {value!r}")


class OnlineAuditor(RunControls):
    """Audits a sample of a deployed agent's live runs in the background, durably.

    Attach :attr:`handler` to the agent's runs (or serve :meth:`wrap`'s result), start the workers
    with :meth:`start` (sync apps and sync savers) or ``await`` :meth:`astart` (async apps, async-only
    savers), and :meth:`shutdown` at the end. Results land in :attr:`jobs`
    (``online.jobs.list_results()``) and as audit spans on ``tracer_provider``.

    Args:
        graph: The compiled graph being served, with the checkpointer its runs write to.
        jobs: The job store; or a PostgreSQL URI (``"postgresql://user@host/db"``) for a
            :class:`~ariadne_lc.online.PostgresJobStore` shared by a fleet (the ``postgres`` extra); or a
            path for a :class:`~ariadne_lc.online.SQLiteJobStore` (``":memory:"``: not durable). A store
            built here is closed at shutdown; one passed in is left open.
        auditor: The auditor to run; default ``Auditor(graph, tracer_provider=tracer_provider)``. Its
            sinks get each record as in a batch audit (span, score write-back, yours), except its result
            store: results are committed, exactly one set per job, to ``jobs`` with the job's state, and
            only then copied to the auditor's ``result_store`` under their job ``result_id`` (so a
            retried or superseded attempt never reaches it). See :mod:`ariadne_lc.online._forward`.
        sample_rate: Fraction of matching runs to audit, decided by a hash of the trace id.
        run_filter: Which runs are eligible (agent, tags, metadata such as user or environment).
        max_audits_per_minute: Rate limit (token bucket); sampled runs beyond it are skipped and counted.
        max_model_calls_per_hour: Budget of audit model calls; sampled runs beyond it are skipped and counted.
        step, interventions: What each audit does (see :meth:`Auditor.audit <ariadne_lc.Auditor.audit>`).
        links: Which links each audit audits (:func:`ariadne_lc.links.names`; see ``Auditor(links=...)``), applied
            to ``auditor`` (or the default one) and stored with each job, so that a fleet's workers audit the same
            links. ``None``: the auditor's own.
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
        dispatcher: Announces each batch of newly committed jobs to workers elsewhere (a broker), on the
            persister thread; default none (workers poll the store). See
            :class:`~ariadne_lc.online.Dispatcher`: one that raises or blocks never reaches the agent.
        trace_store: A trace store the replicas serving this agent share (``PostgresTraceStore``), for human in
            the loop across replicas: each sampled run's trace is stored there (on the recorder's builder
            thread), and a turn paused at an interrupt on one replica and resumed on another is joined into one
            trace and audited whole. The resume follows its paused half's sampling decision. Default none:
            paused runs wait in this process's memory, and a resume that reaches another replica is not audited.

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
        auditor: AuditRunner | None = None,
        sample_rate: float = DEFAULT_SAMPLE_RATE,
        run_filter: RunFilter | None = None,
        max_audits_per_minute: float | None = None,
        max_model_calls_per_hour: int | None = None,
        step: StepSelector | None = None,
        interventions: str | Sequence[str] = DEFAULT_INTERVENTIONS,
        links: Sequence[Link] | None = None,
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
        dispatcher: Dispatcher | None = None,
        trace_store: TraceStore | None = None,
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
        if dispatcher is not None and not isinstance(dispatcher, Dispatcher):
            raise ConfigurationError(f"dispatcher must have a dispatch(job_ids) method, got {dispatcher!r}")
        types = tuple(parse_interventions(interventions if isinstance(interventions, str) else list(interventions)))
        self.sampler = Sampler(sample_rate, run_filter)
        limiter = None if max_audits_per_minute is None else RateLimiter(max_audits_per_minute, clock=time.monotonic)
        budget = (
            None
            if max_model_calls_per_hour is None
            else Budget(max_model_calls_per_hour, initial_estimate=float(len(types)))
        )
        base = auditor if auditor is not None else Auditor(graph, tracer_provider=tracer_provider)
        self.auditor = with_links(base, None if links is None else tuple(links))
        named = None if links is None else tuple(getattr(self.auditor, "links", links))
        worker_auditor, result_stores = split_result_stores(self.auditor)
        self.step: StepSelector | None = step
        self.interventions = types
        self.max_concurrency = max_concurrency
        self.lease = float(lease)
        self.tick_interval = float(tick_interval)
        self.name = name or getattr(graph, "name", None) or "default"
        self.owner = new_owner()
        self.jobs: JobStore = open_job_store(jobs)
        """The job store: jobs and, once audited, their results (``online.jobs.list_results()``)."""
        wake = threading.Event()
        self._life: Lifecycle  # built last: the stages before it call into it only once running
        plan_budget = getattr(self.auditor, "budget", DEFAULT_BUDGET)
        self._admission = Admission(
            sampler=self.sampler,
            limiter=limiter,
            budget=budget,
            cost_of=lambda run_calls: cost_bound(run_calls, plan_budget),
            max_queue_size=max_queue_size,
            max_batch_size=max_batch_size,
            wake=wake,
        )
        self.stats: OnlineStats = self._admission.stats
        """What this auditor did so far (read under no lock: a snapshot may be mid-update)."""
        self.trace_store = trace_store
        # With a trace store the recorder builds each sampled trace (joining resumed turns through the store)
        # and hands it over; without one the persister builds it from the finished run.
        self.handler = AriadneCallbackHandler(
            trace_store,
            graph=graph,
            span_context_getter=span_context_getter,
            sample=self._admission.head,
            on_run_end=None if trace_store is not None else self._admission.on_run_end,
            on_trace=self._admission.on_trace if trace_store is not None else None,
        )
        """The callback handler to put in the agent's run config."""
        metrics = MetricsExporter(meter_provider, self.name, __version__)
        # Held while a job is finished in the store and while the backlog is counted from it, so that
        # the hot path's view of the queue (buffer + in flight + backlog) is exact for this process.
        commit_lock = threading.Lock()
        self._persister = Persister(
            self._admission,
            self.jobs,
            persist_interval=float(persist_interval),
            tick_interval=self.tick_interval,
            lease=self.lease,
            dispatcher=dispatcher,
            metrics=metrics,
            commit_lock=commit_lock,
            active_claims=lambda: self._life.active_claims(),
            on_committed=lambda: self._life.notify_workers(),
            wake=wake,
            # Stored with each job: a fleet's workers audit it as asked here, whatever their own flags.
            plan=AuditPlan(step=step, interventions=types, links=named),
        )
        forward = ResultForwarder(result_stores, on_error=self._admission.count_error) if result_stores else None
        engine_factory = partial(
            AuditEngine,
            jobs=self.jobs,
            auditor=worker_auditor,
            on_committed=forward,
            step=step,
            interventions=types,
            owner=self.owner,
            concurrency=max_concurrency,
            lease=self.lease,
            audit_timeout=float(audit_timeout),
            max_attempts=max_attempts,
            retry_backoff=float(retry_backoff),
            max_retry_backoff=float(max_retry_backoff),
            poll_interval=self.tick_interval,
            on_outcome=lambda outcome: self._life.on_outcome(outcome),
            on_finished=self._admission.finished,
            commit_lock=commit_lock,
        )
        self._at_exit = partial(_shutdown_at_exit, weakref.ref(self))
        self._life = Lifecycle(
            admission=self._admission,
            persister=self._persister,
            jobs=self.jobs,
            owns_jobs=not isinstance(jobs, JobStore),
            metrics=metrics,
            engine_factory=engine_factory,
            tick_interval=self.tick_interval,
            at_exit=self._at_exit,
        )

        reclaimed = self.jobs.reclaim(owner_alive)
        if reclaimed:
            logger.info("ariadne online: %d job(s) of a dead worker are pending again", reclaimed)
        self._admission.backlog = self.jobs.unfinished()
        self._persister.start()
        atexit.register(self._at_exit)

    # -- the agent's side --------------------------------------------------------------------------

    def offer(self, trace: Trace) -> None:
        """Consider a finished, already recorded run for auditing (for traces from a recorder of your
        own; :attr:`handler` needs no help). Same rules and costs as the handler's hot path."""
        self._admission.offer(trace)

    def wrap(self, graph: Any) -> Any:
        """``graph`` with :attr:`handler` bound to every run (``graph.with_config(callbacks=[handler])``).

        Serve the returned runnable; callbacks given at invoke time are added to it. Keep passing the
        compiled graph itself to auditors.
        """
        return graph.with_config(callbacks=[self.handler])

    @property
    def queue_depth(self) -> int:
        """Unfinished jobs: accepted in memory plus pending or running in the job store."""
        return self._admission.depth

    @property
    def unpersisted(self) -> int:
        """Accepted jobs not committed yet (what a crash right now would lose)."""
        return self._admission.unpersisted

    @property
    def max_queue_size(self) -> int:
        """Bound on unfinished jobs (buffer + store backlog)."""
        return self._admission.max_queue_size


def _shutdown_at_exit(ref: weakref.ref[OnlineAuditor]) -> None:
    online = ref()
    if online is not None:
        online.shutdown(_EXIT_TIMEOUT, drain=False)
