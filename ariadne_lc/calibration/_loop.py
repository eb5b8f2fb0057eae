"""Many calibration jobs: one after another or several at once, until done or the model-call budget is spent.

:class:`JobLoop` is the scheduling half of :class:`~ariadne_lc.calibration.runner.CalibrationRunner` (which audits
each job, :meth:`~JobLoop.run_job`); :class:`RunSummary` is what a run did. Every audit goes to the log the moment it
is made, in either mode, so a stopped run resumes exactly as a sequential one.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from ariadne_lc.calibration._plan import CalibrationJob
from ariadne_lc.errors import ConfigurationError

__all__ = ["JobLoop", "RunSummary"]


@dataclass
class RunSummary:
    """What a :meth:`CalibrationRunner.run` did."""

    jobs: int = 0
    jobs_skipped: int = 0
    audits_written: int = 0
    audits_deferred: int = 0
    """Audits that failed for a reason a retry may fix (the model or a replay failed): not stored, so that a
    resumed run tries them again (:func:`~ariadne_lc.online.retryable_error` decides, as for online audits)."""
    model_calls: int = 0
    wall_s: float = 0.0
    stopped: str | None = None
    errors: list[str] = field(default_factory=list)


class JobLoop(ABC):
    """Runs jobs with :meth:`run_job` under a model-call budget; the runner supplies the job and the counts."""

    max_calls: int | None
    """Stop cleanly at this many model calls (``None``: no budget)."""
    deferred: int
    """Audits not stored because a retry may fix them (see :attr:`RunSummary.audits_deferred`)."""
    _calls: Callable[[], int]
    _halt: threading.Event | None = None

    def halted(self) -> bool:
        """Whether :meth:`run` stopped on an exception (Ctrl-C): jobs still in flight on other threads then start no
        audit and store nothing more, so that no audit cut short by the shutdown is stored as failed."""
        return self._halt is not None and self._halt.is_set()

    @abstractmethod
    def run_job(self, job: CalibrationJob) -> int:
        """Record and audit one job; returns the number of audits written."""

    def _budget_left(self) -> bool:
        return not self.halted() and (self.max_calls is None or self._calls() < self.max_calls)

    def run(
        self,
        jobs: Sequence[CalibrationJob],
        *,
        on_job: Callable[[CalibrationJob, int], None] | None = None,
        concurrency: int = 1,
    ) -> RunSummary:
        """Run ``jobs`` in order until done or the call budget is spent; ``on_job`` hears of each one.

        Args:
            jobs: the plan (:func:`plan_jobs`).
            on_job: called on the calling thread as each job finishes (in the order they finish).
            concurrency: jobs in flight at once, each on its own thread, started in the plan's order. Every audit
                still goes to the log the moment it is made, so a stopped run resumes exactly as a sequential one.
                The records are the same as one job at a time when the model's reply depends only on the request
                (the local server's default, :mod:`ariadne_lc.local._serve`); the gain is the Python work of one
                job overlapping the model calls of another.

        Raises:
            ConfigurationError: ``concurrency`` is below 1.
        """
        if concurrency < 1:
            raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
        self._halt = threading.Event()
        summary = RunSummary(jobs=len(jobs))
        started = time.perf_counter()
        first_calls = self._calls()
        first_deferred = self.deferred

        def finished(job: CalibrationJob, written: int) -> None:
            summary.audits_written += written
            if written == 0:
                summary.jobs_skipped += 1
            if on_job is not None:
                on_job(job, written)

        def budget_spent() -> bool:
            if self._budget_left():
                return False
            summary.stopped = f"max_calls={self.max_calls} reached after {self._calls()} model calls"
            return True

        if concurrency == 1:
            for job in jobs:
                if budget_spent():
                    break
                finished(job, self.run_job(job))
        else:
            pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="calibration")
            running: dict[Future[int], CalibrationJob] = {}
            try:
                for job in jobs:
                    if len(running) >= concurrency:
                        done, _ = wait(running, return_when=FIRST_COMPLETED)
                        for future in done:
                            finished(running.pop(future), future.result())
                    if budget_spent():
                        break
                    running[pool.submit(self.run_job, job)] = job
                for future in list(running):
                    finished(running.pop(future), future.result())
            except BaseException:
                # Ctrl-C or an error: start nothing more and do not wait for the jobs in flight (a job can take
                # minutes on a slow model) nor store what they make from here on: a resumed run redoes them
                self._halt.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
        summary.model_calls = self._calls() - first_calls
        summary.audits_deferred = self.deferred - first_deferred
        summary.wall_s = time.perf_counter() - started
        return summary
