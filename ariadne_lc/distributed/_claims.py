"""Claiming a job for a task, and holding it: the first step of an audit task (:mod:`~ariadne_lc.distributed._worker`).

**Claim** ``J`` (``JobStore.claim_job``): it must be pending and due, or running under an expired lease. Otherwise
the message is a duplicate (done, failed, or running elsewhere) and is dropped, with three exceptions: the job is
held by this very process but no audit here holds it (a commit that failed earlier: hand it back and claim it
again), by a dead process on this host (SIGKILL, OOM: reclaim it at once), or the message is a *redelivery* (its
worker's connection dropped) while another live worker holds the job, in which case a watch message is published
for when the lease would expire, so that the job is looked at again if that worker dies too.

:class:`JobClaims`, a base of :class:`~ariadne_lc.distributed.AuditWorker`, also keeps the claims this process holds
and renews their leases from a heartbeat thread, and retries a failed job-store call in place for a few seconds
before it surfaces as :class:`~ariadne_lc.errors.StoreError`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ariadne_lc.distributed._dispatch import Publisher
from ariadne_lc.errors import JobNotFoundError, StoreError
from ariadne_lc.online import Job, JobState, JobStore
from ariadne_lc.online._jobs import owner_alive

__all__ = ["JobClaims"]

logger = logging.getLogger("ariadne_lc.distributed")

_STORE_RETRIES = (0.2, 0.5, 1.0, 2.0, 4.0)
_CLAIM_TRIES = 5

T = TypeVar("T")


class JobClaims:
    """Claims jobs, holds them and keeps their leases; the worker sets the attributes declared here."""

    jobs: JobStore
    publisher: Publisher
    owner: str
    lease: float
    _lock: threading.Lock
    _claims: set[str]
    _inflight: Counter[str]
    _stop: threading.Event

    def _unclaimed(self, job_id: str, redelivered: bool) -> Job | str:
        """The claim found ``job_id`` not claimable: decide whether this message may be dropped.

        A message is dropped only when the job is finished, held under a live claim, or pending with a
        backoff (its own delayed message comes). A job that is pending and due, or that this attempt
        frees (a dead owner, a failed commit of ours), is claimed again: between the first claim and
        the read the job may have been freed by another statement (the sweeper's reclaim, another
        thread's reclaim of the same dead worker), and dropping the message then would leave the job
        unclaimed until the sweeper's ``redeliver_after``.
        """
        for _ in range(_CLAIM_TRIES):
            job = self._store(lambda: self.jobs.get(job_id), "reading the job")
            if job.state in (JobState.DONE, JobState.FAILED):
                return "duplicate"
            if job.state is JobState.PENDING:
                if job.next_attempt_at > time.time():
                    return "not_due"  # a retry or deferral backing off: its own delayed message comes
            elif not self._free(job):
                if redelivered:
                    self._publish([job_id], countdown=self.lease, why="watch")
                    return "watching"
                return "duplicate"
            again = self._store(lambda: self.jobs.claim_job(job_id, self.owner, lease=self.lease), "claiming")
            if again is not None:
                return again
        # Still unclaimable but not provably taken (claims racing for minutes): never drop it silently.
        self._publish([job_id], countdown=1.0, why="re-claim")
        return "watching"

    def _free(self, job: Job) -> bool:
        """For a ``running`` job: hand it back or reclaim it when its holder certainly no longer audits
        it; ``False`` when a live attempt may hold it."""
        with self._lock:
            # Held by this process, but by no task here (a commit that failed): hand it back. Another
            # message for the same job being processed here right now is not idle: leave it alone.
            ours_idle = job.owner == self.owner and job.claim not in self._claims and self._inflight[job.job_id] <= 1
        if ours_idle and job.claim is not None:
            claim = job.claim
            self._store(lambda: self.jobs.release([claim]), "handing back a job")
            return True
        if job.owner is not None and not owner_alive(job.owner):
            self._store(lambda: self.jobs.reclaim(owner_alive), "reclaiming the jobs of a dead worker")
            return True
        return False

    def _store(self, fn: Callable[[], T], what: str) -> T:
        """A job-store call, tried again a few times when it fails (the database restarting, or this
        process's connections terminated); raises :class:`StoreError` after the last try."""
        for delay in (*_STORE_RETRIES, None):
            try:
                return fn()
            except JobNotFoundError:
                raise  # the store answered: trying again cannot make the job appear
            except StoreError as exc:
                if delay is None:
                    raise
                logger.info("ariadne distributed: %s failed (%s); trying again in %.1f s", what, exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _publish(self, job_ids: list[str], *, countdown: float, why: str) -> None:
        try:
            self.publisher.publish(job_ids, countdown=countdown)
        except Exception:
            logger.warning("ariadne distributed: could not publish the %s of job %s; the sweeper will", why, job_ids[0])

    @contextmanager
    def _holding(self, claim: str) -> Iterator[None]:
        with self._lock:
            self._claims.add(claim)
        try:
            yield
        finally:
            with self._lock:
                self._claims.discard(claim)

    def _beat(self) -> None:
        while not self._stop.wait(self.lease / 4):
            with self._lock:
                claims = list(self._claims)
            if not claims:
                continue
            try:
                self.jobs.heartbeat(claims, lease=self.lease)
            except Exception:
                logger.warning("ariadne distributed: renewing %d lease(s) failed", len(claims), exc_info=True)
