"""One audit task, from message to committed outcome: claim, limit, audit, commit, acknowledge.

A message says "audit job J". It may arrive twice (at-least-once delivery, the sweeper's safety net)
or after the job was finished, so the task is an idempotent step on the job's state in Postgres, and
the message is acknowledged only after that step is committed (``acks_late``):

1. **Claim** ``J``: it must be pending and due, or running under an expired lease; otherwise the message is a
   duplicate and is dropped, save for the exceptions :mod:`~ariadne_lc.distributed._claims` describes (a job this
   process holds idle, one of a dead process on this host, a redelivery while another live worker holds it).
2. **Limit**: the fleet's rate limit and budget (:class:`~ariadne_lc.distributed.FleetLimits`). When they
   say wait, the job is handed back (the attempt not counted) and the task re-published with the delay.
3. **Audit** with the user's graph, on a daemon thread bounded by ``audit_timeout``; the job's lease
   is renewed meanwhile by this process's heartbeat thread.
4. **Commit** the outcome, as the online workers do: results and ``done`` together; a retryable failure
   back to ``pending`` with an exponential backoff and jitter, its task re-published with that delay;
   a final failure ``failed`` (decided by each failed result's ``error_type``, see
   :func:`~ariadne_lc.online.retryable_error`: an error of a type this package does not know, such as the
   checkpointer's on a closed database, is final). The store accepts the commit only under the attempt's claim token, so
   a result set is written exactly once even when two workers audited the same job.

Store errors (the database restarting, connections terminated) are retried in place for a few seconds
(:mod:`~ariadne_lc.distributed._claims`), then surface as :class:`~ariadne_lc.errors.StoreError`; the Celery task
answers them with a retry of the message after a backoff.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider

from ariadne_lc import links
from ariadne_lc.audit import DEFAULT_INTERVENTIONS, StepSelector
from ariadne_lc.distributed._app import TASK_NAME
from ariadne_lc.distributed._claims import JobClaims
from ariadne_lc.distributed._dispatch import Publisher
from ariadne_lc.distributed._limits import FleetLimits
from ariadne_lc.distributed._liveness import Activity
from ariadne_lc.distributed._needs import missing_link_hint
from ariadne_lc.errors import ConfigurationError, JobNotFoundError, StoreError, TraceError
from ariadne_lc.online import ATTR_ATTEMPT, ATTR_JOB_ID, Job, JobStore, retryable_error
from ariadne_lc.online._jobs import new_owner
from ariadne_lc.online._runner import with_links
from ariadne_lc.online._worker import AuditRunner, failed_result
from ariadne_lc.otel import audit_span_attributes
from ariadne_lc.records import AuditResult
from ariadne_lc.semconv import ARIADNE_SAMPLE_RATE

__all__ = ["METER_NAME", "OUTCOMES", "AuditWorker", "register_audit_task"]

logger = logging.getLogger("ariadne_lc.distributed")

METER_NAME = "ariadne_lc.distributed"
OUTCOMES = ("done", "retry", "failed", "superseded", "deferred", "duplicate", "watching", "not_due", "unknown")
"""How a task can end: the first four commit an attempt; the others leave the job to another message."""
_MAX_DEFER = 300.0

T = TypeVar("T")


def _backoff(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """``base * 2**(attempt-1)`` capped at ``cap``, with equal jitter (between half and all of it)."""
    full = min(cap, base * 2.0 ** max(0, attempt - 1))
    return full / 2 + rng.random() * full / 2


class _Timeout(Exception):
    pass


def _with_timeout(fn: Callable[[], T], timeout: float, name: str) -> T:
    """``fn()`` on a daemon thread; :class:`_Timeout` after ``timeout`` seconds (the thread is abandoned:
    an audit cannot be interrupted, and its late result is never committed, its claim being gone)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name=name, daemon=True).start()
    if not done.wait(timeout):
        raise _Timeout()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


class AuditWorker(JobClaims):
    """The audit machinery of one worker process (see the module docstring).

    Args:
        jobs: The shared job store (Postgres).
        auditor: Built on the user's graph with its shared checkpointer.
        publisher: For retries, deferrals and watch messages.
        limits: The fleet's rate limit and budget, or ``None``.
        step, interventions: What the audit of a job stored without a plan does (a job's
            :attr:`~ariadne_lc.online.Job.plan`, stored by the serving side, wins).
        lease: Seconds a claim lasts without a heartbeat (renewed every quarter lease).
        audit_timeout: Seconds an attempt may take.
        max_attempts: Attempts per job, the first included.
        retry_backoff, max_retry_backoff: First retry delay and its cap, in seconds.
        meter_provider: For the ``ariadne_lc.distributed`` metrics (default: the global provider).
    """

    def __init__(
        self,
        *,
        jobs: JobStore,
        auditor: AuditRunner,
        publisher: Publisher,
        limits: FleetLimits | None = None,
        step: StepSelector | None = None,
        interventions: Sequence[str] = DEFAULT_INTERVENTIONS,
        lease: float = 120.0,
        audit_timeout: float = 300.0,
        max_attempts: int = 3,
        retry_backoff: float = 5.0,
        max_retry_backoff: float = 600.0,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        if not lease > 0 or not audit_timeout > 0 or max_attempts < 1:
            raise ConfigurationError("lease and audit_timeout must be positive and max_attempts at least 1")
        self.jobs = jobs
        self.auditor = auditor
        self.publisher = publisher
        self.limits = limits
        self.step: StepSelector | None = step
        self.interventions = tuple(interventions)
        self.lease = float(lease)
        self.audit_timeout = float(audit_timeout)
        self.max_attempts = max_attempts
        self.retry_backoff = float(retry_backoff)
        self.max_retry_backoff = float(max_retry_backoff)
        self.owner = new_owner()
        self.outcomes: Counter[str] = Counter()
        """Tasks by outcome (see :data:`OUTCOMES`), in this process."""
        self._rng = random.Random()
        self._lock = threading.Lock()
        self._claims: set[str] = set()
        self._inflight: Counter[str] = Counter()
        self._stop = threading.Event()
        self._tasks_seen = 0
        self._last_started: float | None = None
        self._last_finished: float | None = None
        meter = metrics.get_meter(METER_NAME, meter_provider=meter_provider)
        self._tasks = meter.create_counter("ariadne.distributed.tasks", "{task}", "Audit tasks by outcome")
        self._duration = meter.create_histogram("ariadne.distributed.audit.duration", "s", "Audit attempts")
        self._heartbeat = threading.Thread(target=self._beat, name="ariadne-distributed-heartbeat", daemon=True)
        self._heartbeat.start()

    # -- the task ----------------------------------------------------------------------------------

    def run(self, job_id: str, *, redelivered: bool = False) -> str:
        """Process one message for ``job_id``; returns the outcome (one of :data:`OUTCOMES`)."""
        with self._lock:
            self._inflight[job_id] += 1
            self._tasks_seen += 1
            self._last_started = time.monotonic()
        try:
            outcome = self._run(job_id, redelivered)
        finally:
            with self._lock:
                self._inflight[job_id] -= 1
                if not self._inflight[job_id]:
                    del self._inflight[job_id]
                self._last_finished = time.monotonic()
        with self._lock:
            self.outcomes[outcome] += 1
        self._tasks.add(1, {"ariadne.distributed.outcome": outcome})
        return outcome

    def _run(self, job_id: str, redelivered: bool) -> str:
        try:
            job = self._store(lambda: self.jobs.claim_job(job_id, self.owner, lease=self.lease), "claiming")
            job_or_outcome = job if job is not None else self._unclaimed(job_id, redelivered)
        except JobNotFoundError:
            # Final: a task of another job store, or a job deleted since; retrying cannot make it appear.
            logger.warning("ariadne distributed: a task names job %s, which is not in the job store", job_id)
            return "unknown"
        if isinstance(job_or_outcome, str):
            return job_or_outcome
        job = job_or_outcome
        claim = job.claim or ""
        with self._holding(claim):
            try:
                return self._attempt(job)
            except StoreError:
                raise  # the task retries it (register_audit_task)
            except Exception as exc:
                # A bug around the audit (the runner's bookkeeping): fail the job now, or it would come back
                # after every lease and hit the same bug.
                logger.exception("ariadne distributed: bookkeeping of job %s failed; failing the job", job.job_id)
                error = f"{type(exc).__name__} in the audit worker's bookkeeping: {exc}"
                return self._commit(job, "failed", [failed_result(job.trace, error, type(exc).__name__)], error, 0.0)

    def _attempt(self, job: Job) -> str:
        if job.attempts > self.max_attempts:  # earlier attempts' workers died mid-audit
            gave_up = f"gave up after {self.max_attempts} attempts; the last one: {job.error or 'its worker died'}"
            failed = failed_result(job.trace, gave_up, replay_mode=self.auditor.replay_mode)
            return self._commit(job, "failed", [failed], gave_up, 0.0)
        if self.limits is not None:
            wait = self.limits.acquire(job.job_id, job.attempts)
            if wait > 0:
                claim = job.claim or ""
                self._store(lambda: self.jobs.release([claim]), "handing back a deferred job")
                self._publish([job.job_id], countdown=min(wait, _MAX_DEFER), why="deferral")
                return "deferred"
        started = time.perf_counter()
        results: list[AuditResult] = []
        error: str | None = None
        error_type: str | None = None
        final = False
        try:
            results = self._audit(job)
        except _Timeout:
            error, error_type = f"TimeoutError: the audit took longer than {self.audit_timeout:g} s", "TimeoutError"
        except (TraceError, ConfigurationError) as exc:
            error, error_type, final = f"{type(exc).__name__}: {exc}", type(exc).__name__, True
        except Exception as exc:
            error, error_type = f"{type(exc).__name__}: {exc}", type(exc).__name__
            logger.warning("ariadne distributed: audit of job %s raised (attempt %d)", job.job_id, job.attempts)
        else:
            error = retryable_error(results)
            if error is None and results and all(r.status == "failed" for r in results):
                error, final = results[0].error or "the audit failed", True
        duration = time.perf_counter() - started
        self._duration.record(duration)
        if self.limits is not None:
            calls = sum(r.model_calls for r in results)
            try:
                self.limits.settle(job.job_id, job.attempts, calls)
            except StoreError:
                logger.warning("ariadne distributed: could not settle the budget of job %s", job.job_id)
        if error is None:
            return self._commit(job, "done", results, None, duration)
        if final or job.attempts >= self.max_attempts:
            logger.warning(
                "ariadne distributed: job %s failed after %d attempt(s): %s", job.job_id, job.attempts, error
            )
            fallback = [failed_result(job.trace, error, error_type, replay_mode=self.auditor.replay_mode)]
            return self._commit(job, "failed", results or fallback, error, duration)
        return self._commit(job, "retry", results, error, duration)

    def _audit(self, job: Job) -> list[AuditResult]:
        attributes = {ARIADNE_SAMPLE_RATE: job.sample_rate, ATTR_JOB_ID: job.job_id, ATTR_ATTEMPT: job.attempts}

        # The plan the serving side stored with the job; the worker's own --step/--interventions only
        # for jobs stored without one.
        step, interventions = (job.plan.step, job.plan.interventions) if job.plan else (self.step, self.interventions)
        named = job.plan.links if job.plan else None  # the job's links, if it names any
        unknown = [k for k in named or () if k not in links.names()]
        if unknown:
            raise ConfigurationError(missing_link_hint(unknown))
        auditor = with_links(self.auditor, named)

        def audit() -> list[AuditResult]:
            with audit_span_attributes(attributes):
                return auditor.audit(job.trace, step, interventions)

        return _with_timeout(audit, self.audit_timeout, f"ariadne-audit-{job.job_id[:8]}")

    def _commit(self, job: Job, kind: str, results: list[AuditResult], error: str | None, duration: float) -> str:
        calls = sum(r.model_calls for r in results)
        message = error or "failed"
        delay = 0.0
        if kind == "done":
            kept = self._store(lambda: self.jobs.complete(job, results, model_calls=calls), "committing results")
        elif kind == "failed":
            kept = self._store(lambda: self.jobs.fail(job, message, results, model_calls=calls), "committing a failure")
        else:
            delay = _backoff(job.attempts, self.retry_backoff, self.max_retry_backoff, self._rng)
            kept = self._store(
                lambda: self.jobs.retry(job, message, delay=delay, model_calls=calls), "scheduling a retry"
            )
        if not kept:
            logger.info("ariadne distributed: job %s was taken over by another worker; results discarded", job.job_id)
            return "superseded"
        if kind == "retry":
            logger.warning(
                "ariadne distributed: job %s attempt %d failed, retrying in %.1f s: %s",
                job.job_id,
                job.attempts,
                delay,
                error,
            )
            self._publish([job.job_id], countdown=delay, why="retry")
        return kind

    def activity(self) -> Activity:
        """Tasks running and handled, and when one last started and ended (for the worker's heartbeat)."""
        with self._lock:
            return Activity(
                running=sum(self._inflight.values()),
                tasks=self._tasks_seen,
                last_started=self._last_started,
                last_finished=self._last_finished,
            )

    def close(self) -> None:
        """Stop the heartbeat (the jobs in flight keep their leases until they expire)."""
        self._stop.set()


def register_audit_task(app: Any, get_worker: Callable[[], AuditWorker]) -> Any:
    """Register the audit task on ``app``; ``get_worker`` returns this process's :class:`AuditWorker`
    (created lazily, after a prefork pool has forked). Returns the task."""

    @app.task(  # type: ignore[untyped-decorator]
        name=TASK_NAME,
        bind=True,
        acks_late=True,
        reject_on_worker_lost=True,
        ignore_result=True,
        max_retries=None,
    )
    def audit_job(self: Any, job_id: str) -> str:
        redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
        try:
            return get_worker().run(job_id, redelivered=redelivered)
        except StoreError as exc:
            countdown = min(60.0, 2.0 ** min(self.request.retries, 6))
            logger.warning("ariadne distributed: job %s: %s; the task is retried in %.0f s", job_id, exc, countdown)
            raise self.retry(exc=exc, countdown=countdown) from None

    return audit_job
