"""The sweeper: every unfinished job gets a task message again, sooner or later.

Messages can be lost where the job cannot: the broker was down when the serving side committed the
job (the dispatcher gave up), a Redis broker without persistence restarted, a retry's delayed message
could not be published, a redelivered message found the job held by a worker that died later on
another host. The job store is the truth, so one loop repairs all of these: every ``interval``
seconds, one worker of the fleet (a Postgres advisory lock elects it for that round) looks at the jobs
still pending or running and publishes a task for each that

- was never published and is older than ``grace`` (the dispatcher may be publishing it right now), or
- was last published more than ``redeliver_after`` seconds ago (its message may be gone).

It also frees at once the jobs of dead worker processes on its own host. A duplicate message costs
one claim that finds the job taken; so ``redeliver_after`` trades recovery time for duplicates (at
most one per unfinished job per ``redeliver_after``). Keep it above the lease.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from typing import Any

from ariadne_lc.distributed._dispatch import Publisher
from ariadne_lc.distributed._postgres import DispatchLog, with_retries
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.online import JobStore
from ariadne_lc.online._jobs import owner_alive

__all__ = ["DEFAULT_GRACE", "DEFAULT_REDELIVER_AFTER", "DEFAULT_SWEEP_INTERVAL", "Sweeper"]

logger = logging.getLogger("ariadne_lc.distributed")

DEFAULT_SWEEP_INTERVAL = 30.0
"""Seconds between sweeps."""
DEFAULT_GRACE = 10.0
"""Seconds a never-published job is left to its dispatcher."""
DEFAULT_REDELIVER_AFTER = 600.0
"""Seconds after its last publish an unfinished job gets another message."""
_MAX_PER_SWEEP = 1000


class Sweeper:
    """Re-publishes tasks for unfinished jobs that have none (see the module docstring).

    Args:
        jobs: The shared job store.
        publisher: Publishes on the workers' queue and records into ``log``.
        log: The dispatch log (in the job database).
        pool: A connection pool on the job database (for the election).
        interval, grace, redeliver_after: See the module docstring (seconds).
    """

    def __init__(
        self,
        jobs: JobStore,
        publisher: Publisher,
        log: DispatchLog,
        pool: Any,
        *,
        interval: float = DEFAULT_SWEEP_INTERVAL,
        grace: float = DEFAULT_GRACE,
        redeliver_after: float = DEFAULT_REDELIVER_AFTER,
    ) -> None:
        if not interval > 0 or grace < 0 or not redeliver_after > 0:
            raise ConfigurationError("interval and redeliver_after must be positive and grace not negative")
        self.jobs = jobs
        self.publisher = publisher
        self.log = log
        self.interval = float(interval)
        self.grace = float(grace)
        self.redeliver_after = float(redeliver_after)
        self.republished = 0
        """Tasks this sweeper published."""
        self._pool = pool
        self._key = zlib.crc32(f"ariadne-sweeper:{publisher.queue}".encode())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> int:
        """One sweep, if this process wins the round; returns how many tasks it published."""

        def elected_sweep() -> int:
            with self._pool.connection() as conn, conn.transaction():
                # Held until the transaction ends; a crashed sweeper's connection closes and frees it.
                if not conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (self._key,)).fetchone()[0]:
                    return 0
                return self._sweep()

        return with_retries(elected_sweep, "sweeping")

    def _sweep(self) -> int:
        reclaimed = self.jobs.reclaim(owner_alive)
        if reclaimed:
            logger.info("ariadne distributed: %d job(s) of dead workers on this host are pending again", reclaimed)
        now = time.time()
        unfinished = self.jobs.unfinished_ids()  # ids and creation times only: no trace is read
        last = self.log.last_published(list(unfinished))
        stale = [
            job_id
            for job_id, created in unfinished.items()
            if (job_id in last and last[job_id] < now - self.redeliver_after)
            or (job_id not in last and created < now - self.grace)
        ][:_MAX_PER_SWEEP]
        if not stale:
            return 0
        published = self.publisher.publish(stale)
        self.republished += published
        logger.info("ariadne distributed: the sweeper published %d task(s) for unfinished jobs", published)
        return published

    def start(self) -> None:
        """Sweep every ``interval`` seconds on a daemon thread until :meth:`stop`."""
        self._thread = threading.Thread(target=self._main, name="ariadne-distributed-sweeper", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sweep()
            except Exception:
                logger.warning("ariadne distributed: a sweep failed; next in %.0f s", self.interval, exc_info=True)

    def stop(self) -> None:
        """Stop sweeping (waits for a sweep in progress)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
