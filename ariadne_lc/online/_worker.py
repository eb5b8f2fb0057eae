"""Audit workers: claim a job, audit it, then commit, retry or give up; never a word to the agent.

The workers are asyncio tasks. Where they run is the only difference between the two modes:

- *thread mode* (:meth:`OnlineAuditor.start`): a daemon thread with its own event loop; each audit
  is the synchronous :meth:`Auditor.audit <ariadne_lc.Auditor.audit>` on a daemon thread of its own,
  so it works with sync savers (``SqliteSaver``) and a timed-out audit can be abandoned;
- *loop mode* (:meth:`OnlineAuditor.astart`): tasks in the application's running loop; each audit is
  :meth:`Auditor.aaudit <ariadne_lc.Auditor.aaudit>` (needed for async-only savers such as
  ``AsyncSqliteSaver``, which are bound to that loop); store calls go to a helper thread so the
  loop never waits on SQLite.

What runs an audit is any :class:`~ariadne_lc.online._runner.AuditRunner`. An attempt ends done, retry, failed or
superseded (:mod:`ariadne_lc.online._outcome` says when, and which errors a retry may fix; its names and the runner's
protocol are re-exported here). A bug in the bookkeeping around an audit (a runner or callback that
raises) fails the job at once with that error, so it cannot come back after every lease and hold up ``force_flush``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from ariadne_lc.audit import StepSelector
from ariadne_lc.errors import StoreError
from ariadne_lc.online._jobs import Job, JobStore
from ariadne_lc.online._outcome import (
    _FINAL_RAISED,
    Outcome,
    OutcomeKind,
    backoff_delay,
    failed_result,
    retryable_error,
    retryable_type,
)
from ariadne_lc.online._runner import AuditRunner, in_daemon_thread, with_links
from ariadne_lc.otel import audit_span_attributes
from ariadne_lc.records import AuditResult
from ariadne_lc.semconv import ARIADNE_SAMPLE_RATE
from ariadne_lc.trace import Trace

__all__ = [
    "ATTR_ATTEMPT",
    "ATTR_JOB_ID",
    "AuditEngine",
    "AuditRunner",
    "Outcome",
    "backoff_delay",
    "failed_result",
    "retryable_error",
    "retryable_type",
]

logger = logging.getLogger("ariadne_lc.online")

ATTR_JOB_ID = "ariadne.online.job_id"
ATTR_ATTEMPT = "ariadne.online.attempt"

T = TypeVar("T")


class AuditEngine:
    """The worker tasks of one online auditor (see the module docstring)."""

    def __init__(
        self,
        *,
        jobs: JobStore,
        auditor: AuditRunner,
        step: StepSelector | None,
        interventions: tuple[str, ...],
        owner: str,
        concurrency: int,
        lease: float,
        audit_timeout: float,
        max_attempts: int,
        retry_backoff: float,
        max_retry_backoff: float,
        poll_interval: float,
        use_async: bool,
        on_outcome: Callable[[Outcome], None],
        on_finished: Callable[[], None],
        commit_lock: threading.Lock,
        on_committed: Callable[[Job, Sequence[AuditResult]], None] | None = None,
    ) -> None:
        self.jobs = jobs
        self.auditor = auditor
        self.step = step
        self.interventions = interventions
        self.owner = owner
        self.concurrency = concurrency
        self.lease = lease
        self.audit_timeout = audit_timeout
        self.max_attempts = max_attempts
        self.retry_backoff = retry_backoff
        self.max_retry_backoff = max_retry_backoff
        self.poll_interval = poll_interval
        self.use_async = use_async
        self.on_outcome = on_outcome
        self.on_finished = on_finished
        self.commit_lock = commit_lock
        self.on_committed = on_committed
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._changed: asyncio.Event | None = None
        self._claims: set[str] = set()
        self._claims_lock = threading.Lock()
        self._io_pool: ThreadPoolExecutor | None = None
        self._rng = random.Random()
        self._stopping = False

    # -- lifecycle (on the engine's loop unless said otherwise) -------------------------------------

    def begin(self) -> None:
        """Create the worker tasks on the running loop."""
        self.loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        if self.use_async:
            self._io_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ariadne-online-store")
        self._tasks = [
            self.loop.create_task(self._worker(), name=f"ariadne-online-audit-{i}") for i in range(self.concurrency)
        ]

    async def run(self, started: threading.Event) -> None:
        """Thread mode: run the workers until :meth:`stop`."""
        self.begin()
        started.set()
        await self.wait_stopped()

    def notify(self) -> None:
        """Wake idle workers: new jobs were persisted (any thread)."""
        loop = self.loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed
            loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        # A broadcast: every waiter holds the old event, which is now set; later waiters get a new one.
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def stop(self) -> None:
        """Stop the workers: no new claims, and the attempts in flight are cancelled (the caller
        releases their jobs)."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()

    async def wait_stopped(self, timeout: float | None = None) -> bool:
        """Until every worker task has ended, or ``timeout``; whether they all ended."""
        ended = True
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=timeout)
            ended = not pending
        if self._io_pool is not None:
            self._io_pool.shutdown(wait=False)
        return ended

    @property
    def running(self) -> bool:
        return any(not t.done() for t in self._tasks)

    def active_claims(self) -> list[str]:
        """Claim tokens of the attempts in flight (any thread)."""
        with self._claims_lock:
            return list(self._claims)

    # -- the work ----------------------------------------------------------------------------------

    async def _io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._io_pool is None:  # thread mode: the loop is ours, a short block is fine
            return fn(*args, **kwargs)
        assert self.loop is not None
        return await self.loop.run_in_executor(self._io_pool, partial(fn, *args, **kwargs))

    async def _worker(self) -> None:
        # Checked as well as cancelled: code under an audit may swallow a cancellation.
        while not self._stopping:
            assert self._changed is not None
            changed = self._changed
            try:
                job = await self._io(self._claim)
            except StoreError:
                logger.exception("ariadne online: claiming a job failed; trying again in %.1f s", self.poll_interval)
                await asyncio.sleep(self.poll_interval)
                continue
            if job is None:
                await self._idle(changed)
                continue
            claim = job.claim or ""
            try:
                await self._process(job)
            except asyncio.CancelledError:
                raise  # shutting down: the claim stays listed and the shutdown releases it
            except Exception as exc:
                logger.exception("ariadne online: bookkeeping of job %s failed; failing the job", job.job_id)
                await self._io(self._give_up, job, exc)
            with self._claims_lock:
                self._claims.discard(claim)

    def _claim(self) -> Job | None:
        # The claim is listed where it is made, so a shutdown that cancels the worker meanwhile
        # still finds and releases it.
        job = self.jobs.claim(self.owner, lease=self.lease)
        if job is not None and job.claim is not None:
            with self._claims_lock:
                self._claims.add(job.claim)
        return job

    async def _idle(self, changed: asyncio.Event) -> None:
        timeout = self.poll_interval
        try:
            due = await self._io(self.jobs.next_due)
        except StoreError:
            due = None
        if due is not None:
            timeout = min(timeout, max(0.001, due - time.time()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), timeout)

    async def _process(self, job: Job) -> None:
        error: str | None
        error_type: str | None = None
        if job.attempts > self.max_attempts:  # the previous attempts' workers died mid-audit
            error = f"gave up after {self.max_attempts} attempts; the last one: {job.error or 'its worker died'}"
            failed = failed_result(job.trace, error, replay_mode=self.auditor.replay_mode)
            await self._settle(job, "failed", [failed], error, 0.0)
            return
        started = time.perf_counter()
        results: list[AuditResult] = []
        final = False
        try:
            results = await asyncio.wait_for(self._audit(job), self.audit_timeout)
        except TimeoutError:
            error, error_type = f"TimeoutError: the audit took longer than {self.audit_timeout:g} s", "TimeoutError"
        except _FINAL_RAISED as exc:
            error, error_type, final = f"{type(exc).__name__}: {exc}", type(exc).__name__, True
        except Exception as exc:
            error, error_type = f"{type(exc).__name__}: {exc}", type(exc).__name__
            logger.warning(
                "ariadne online: audit of job %s raised (attempt %d)", job.job_id, job.attempts, exc_info=True
            )
        else:
            error = retryable_error(results)
            if error is None and results and all(r.status == "failed" for r in results):
                error, final = results[0].error or "the audit failed", True
        duration = time.perf_counter() - started
        if error is None:
            await self._settle(job, "done", results, None, duration)
        elif final or job.attempts >= self.max_attempts:
            logger.warning("ariadne online: job %s failed after %d attempt(s): %s", job.job_id, job.attempts, error)
            fallback = [failed_result(job.trace, error, error_type, replay_mode=self.auditor.replay_mode)]
            await self._settle(job, "failed", results or fallback, error, duration)
        else:
            logger.warning("ariadne online: job %s attempt %d failed, will retry: %s", job.job_id, job.attempts, error)
            await self._settle(job, "retry", results, error, duration)

    def _audit(self, job: Job) -> Awaitable[list[AuditResult]]:
        attributes = {ARIADNE_SAMPLE_RATE: job.sample_rate, ATTR_JOB_ID: job.job_id, ATTR_ATTEMPT: job.attempts}
        # The job's own plan (another process sharing the store may have sampled it), else ours.
        step, interventions = (job.plan.step, job.plan.interventions) if job.plan else (self.step, self.interventions)
        auditor = with_links(self.auditor, job.plan.links if job.plan else None)  # the job's links, if it names any
        if self.use_async:
            return self._aaudit(auditor, job.trace, step, interventions, attributes)

        def audit() -> list[AuditResult]:
            with audit_span_attributes(attributes):
                return auditor.audit(job.trace, step, interventions)

        return in_daemon_thread(audit, f"ariadne-online-audit-{job.job_id[:8]}")

    @staticmethod
    async def _aaudit(
        auditor: AuditRunner,
        trace: Trace,
        step: StepSelector | None,
        interventions: Sequence[str],
        attributes: dict[str, Any],
    ) -> list[AuditResult]:
        with audit_span_attributes(attributes):
            return await auditor.aaudit(trace, step, interventions)

    async def _settle(
        self, job: Job, kind: OutcomeKind, results: list[AuditResult], error: str | None, duration: float
    ) -> None:
        await self._io(self._commit, job, kind, results, error or "failed", duration)

    def _commit(self, job: Job, kind: OutcomeKind, results: list[AuditResult], error: str, duration: float) -> None:
        """Record the outcome and do the bookkeeping in one synchronous step, so that a worker task
        cancelled meanwhile (shutdown) cannot separate them."""
        calls = sum(r.model_calls for r in results)
        try:
            if kind == "retry":
                delay = backoff_delay(job.attempts, self.retry_backoff, self.max_retry_backoff, self._rng)
                kept = self.jobs.retry(job, error, delay=delay, model_calls=calls)
            else:
                # Finishing a job and the auditor's backlog count move together (OnlineAuditor._tick).
                with self.commit_lock:
                    if kind == "done":
                        kept = self.jobs.complete(job, results, model_calls=calls)
                    else:
                        kept = self.jobs.fail(job, error, results, model_calls=calls)
                    if kept:
                        self.on_finished()
        except StoreError:
            # The job stays running under our claim; once we stop renewing it (the claim leaves the
            # active set) its lease expires and a worker takes it again.
            logger.exception("ariadne online: could not record the outcome of job %s", job.job_id)
            kept = False
        if kept and kind != "retry" and self.on_committed is not None:
            self.on_committed(job, results)  # after the commit: the job store holds the record of truth
        self.on_outcome(Outcome(job, kind if kept else "superseded", calls, duration, error))

    def _give_up(self, job: Job, exc: Exception) -> None:
        """Fail ``job`` after a bug around its audit (the runner's bookkeeping, a callback), using nothing that
        may have raised. Left claimed, the job would come back when its lease expired, hit the same bug on
        every attempt and keep ``force_flush`` waiting for ever."""
        error = f"{type(exc).__name__} in the online auditor's bookkeeping: {exc}"
        try:
            with self.commit_lock:
                kept = self.jobs.fail(job, error, [failed_result(job.trace, error, type(exc).__name__)], model_calls=0)
                if kept:
                    self.on_finished()
            if kept:
                self.on_outcome(Outcome(job, "failed", 0, 0.0, error))
        except Exception:
            logger.exception("ariadne online: could not fail job %s either; its lease will expire", job.job_id)
