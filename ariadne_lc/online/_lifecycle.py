"""Lifecycle of an online auditor: starting the audit workers, flushing, shutting down.

Workers (:mod:`ariadne_lc.online._worker`) run in a daemon thread with their own loop
(:meth:`Lifecycle.start`) or as tasks in the application's loop (:meth:`Lifecycle.astart`), or not
at all here (another process, or a broker's workers, audit the shared job store). Shutdown follows
OpenTelemetry's batch processor: refuse new runs, persist what was accepted, finish the queued audits
(``drain``), stop the workers, release the attempts still in flight, all within one timeout, and
report what was left (:class:`ShutdownReport`). Nothing persisted is lost: unfinished jobs wait in
the job store for the next start, in any process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.online._admission import Admission
from ariadne_lc.online._jobs import JobStore
from ariadne_lc.online._metrics import MetricsExporter
from ariadne_lc.online._persister import Persister
from ariadne_lc.online._worker import AuditEngine, Outcome

__all__ = ["Lifecycle", "ShutdownReport"]

logger = logging.getLogger("ariadne_lc.online")


@dataclass(frozen=True, slots=True)
class ShutdownReport:
    """What :meth:`OnlineAuditor.shutdown <ariadne_lc.online.OnlineAuditor.shutdown>` left behind."""

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


class Lifecycle:
    """The workers, the progress condition and the shutdown sequence of one online auditor."""

    def __init__(
        self,
        *,
        admission: Admission,
        persister: Persister,
        jobs: JobStore,
        owns_jobs: bool,
        metrics: MetricsExporter,
        engine_factory: Callable[..., AuditEngine],
        tick_interval: float,
        at_exit: Callable[[], None],
    ) -> None:
        self.admission = admission
        self.persister = persister
        self.jobs = jobs
        self.owns_jobs = owns_jobs
        self.metrics = metrics
        self.engine_factory = engine_factory
        self.tick_interval = tick_interval
        self.at_exit = at_exit
        self.engine: AuditEngine | None = None
        self.engine_thread: threading.Thread | None = None
        self.report: ShutdownReport | None = None
        self.progress = threading.Condition()
        self._shutdown_lock = threading.Lock()
        self._lock = threading.Lock()

    # -- workers -----------------------------------------------------------------------------------

    def start(self) -> None:
        engine = self._new_engine(use_async=False)
        started = threading.Event()
        thread = threading.Thread(
            target=_engine_main, args=(engine, started), name="ariadne-online-audits", daemon=True
        )
        self.engine_thread = thread
        thread.start()
        started.wait()

    async def astart(self) -> None:
        self._new_engine(use_async=True).begin()

    def _new_engine(self, *, use_async: bool) -> AuditEngine:
        with self._lock:
            if self.admission.closed:
                raise ConfigurationError("this OnlineAuditor was shut down; create a new one")
            if self.engine is not None:
                raise ConfigurationError("the audit workers are already running (start() or astart() was called)")
            self.engine = self.engine_factory(use_async=use_async)
            return self.engine

    def active_claims(self) -> list[str]:
        engine = self.engine
        return engine.active_claims() if engine is not None else []

    def notify_workers(self) -> None:
        """New jobs were committed: wake idle workers and anyone waiting for progress."""
        engine = self.engine
        if engine is not None:
            engine.notify()
        self.notify_progress()

    def on_outcome(self, outcome: Outcome) -> None:
        """Bookkeeping of one finished attempt (on a worker's thread)."""
        budget = self.admission.budget
        with self.admission.lock:
            stats = self.admission.stats
            if outcome.kind == "done":
                stats.audited += 1
            elif outcome.kind == "failed":
                stats.failed += 1
            elif outcome.kind == "retry":
                stats.retried += 1
            else:
                stats.superseded += 1
            stats.model_calls += outcome.model_calls
        if budget is not None:
            budget.record(outcome.model_calls, finished=outcome.kind != "superseded")
        if outcome.kind != "superseded":
            self.metrics.audit_duration(outcome.duration_s, outcome.kind)
        self.notify_progress()

    def notify_progress(self) -> None:
        with self.progress:
            self.progress.notify_all()

    # -- flush -------------------------------------------------------------------------------------

    def force_flush(self, timeout: float) -> bool:
        self.refuse_on_engine_loop("force_flush", "aforce_flush")
        if self.report is not None:  # shut down: nothing more will happen here
            return self.report.clean
        deadline = time.monotonic() + timeout
        if not self._wait_persisted(deadline):
            return False
        if self.engine is None:
            return True
        try:
            return self._wait_audited(self.jobs.max_seq(), deadline)
        except Exception:
            self.admission.error("force_flush")
            return False

    def flush_persisted(self, timeout: float) -> bool:
        if self.report is not None:
            return self.report.clean
        return self._wait_persisted(time.monotonic() + timeout)

    def refuse_on_engine_loop(self, name: str, async_name: str) -> None:
        engine = self.engine
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

    def _wait_persisted(self, deadline: float) -> bool:
        self.persister.wake.set()
        with self.progress:
            while self.admission.unpersisted:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.persister.alive:
                    return False
                self.progress.wait(min(remaining, self.tick_interval))
        return True

    def _wait_audited(self, up_to_seq: int, deadline: float) -> bool:
        while True:
            if self.jobs.unfinished(up_to_seq=up_to_seq) == 0:
                return True
            remaining = deadline - time.monotonic()
            engine = self.engine
            if remaining <= 0 or engine is None or not engine.running:
                return False
            with self.progress:
                self.progress.wait(min(remaining, self.tick_interval))

    # -- shutdown ----------------------------------------------------------------------------------

    def shutdown(self, timeout: float, *, drain: bool) -> ShutdownReport:
        self.refuse_on_engine_loop("shutdown", "ashutdown")
        with self._shutdown_lock:
            if self.report is not None:
                return self.report
            deadline = time.monotonic() + timeout
            self._close_and_persist(deadline)
            if drain and self.engine is not None:
                self._drain_audits(deadline)
            return self._finish(self._stop_engine(deadline))

    async def ashutdown(self, timeout: float, *, drain: bool) -> ShutdownReport:
        engine = self.engine
        if engine is None or not engine.use_async or engine.loop is not asyncio.get_running_loop():
            return await asyncio.to_thread(self.shutdown, timeout, drain=drain)
        if self.report is not None:
            return self.report
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

    def _close_and_persist(self, deadline: float) -> None:
        self.admission.close()
        self.persister.close(deadline)

    def _drain_audits(self, deadline: float) -> None:
        try:
            self._wait_audited(self.jobs.max_seq(), deadline)
        except Exception:
            self.admission.error("draining the audits")

    def _stop_engine(self, deadline: float) -> int:
        engine = self.engine
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
        if self.engine_thread is not None:
            self.engine_thread.join(max(0.0, deadline - time.monotonic()))
        return self._release(engine)

    def _release(self, engine: AuditEngine) -> int:
        claims = engine.active_claims()
        if not claims:
            return 0
        try:
            return self.jobs.release(claims)
        except Exception:
            self.admission.error("release")
            return 0

    def _finish(self, released: int) -> ShutdownReport:
        self.persister.tick()
        try:
            unfinished = self.jobs.unfinished()
        except Exception:
            self.admission.error("shutdown")
            unfinished = -1
        report = ShutdownReport(unpersisted=self.admission.unpersisted, unfinished=unfinished, released=released)
        if report.unpersisted:
            logger.warning(
                "ariadne online: %d accepted run(s) could not be persisted before the shutdown timeout and are lost",
                report.unpersisted,
            )
        if report.unfinished:
            logger.info("ariadne online: %d job(s) left in the job store for the next start", report.unfinished)
        if self.owns_jobs:
            self.jobs.close()
        atexit.unregister(self.at_exit)
        self.report = report
        return report


def _engine_main(engine: AuditEngine, started: threading.Event) -> None:
    try:
        asyncio.run(engine.run(started))
    except Exception:
        logger.exception("ariadne online: the audit thread stopped with an error")
    finally:
        started.set()
