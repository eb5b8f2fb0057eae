"""Publishing audit tasks: the serving side's dispatcher, and the publisher workers and the sweeper share.

A task message carries only a job id; the job (its trace) is already committed in Postgres when it
is published, so a lost message loses nothing but time: the sweeper
(:mod:`ariadne_lc.distributed._sweeper`) publishes again any job left without one.

:class:`CeleryDispatcher` is what ``OnlineAuditor``'s persister thread calls after each commit. It
runs on that thread, never on the agent's. When the broker is down it raises, and the persister keeps
the ids to offer them again (the jobs stay pending in the store); it also pauses publishing for a
growing time (1 s doubling to 30 s) so that a dead broker costs one connection
timeout per pause and not one per batch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ariadne_lc.distributed._app import DEFAULT_BROKER_URL, DEFAULT_QUEUE, TASK_NAME, create_app
from ariadne_lc.distributed._postgres import DispatchLog, open_pool
from ariadne_lc.errors import AriadneError

__all__ = ["BrokerUnavailableError", "CeleryDispatcher", "DispatchStats", "Publisher"]

logger = logging.getLogger("ariadne_lc.distributed")

_MIN_PAUSE = 1.0
_MAX_PAUSE = 30.0
_WARN_INTERVAL = 60.0


class BrokerUnavailableError(AriadneError):
    """The message broker did not take a task (down, unreachable, or refused the publish)."""


class Publisher:
    """Publishes one audit task per job id on ``app``'s queue and records each confirmed publish.

    It keeps one broker connection of its own (not Celery's process-wide producer pool, which other
    apps on the same broker share), opened on first use with a single connection attempt, and drops
    it at the first error so that the next call reconnects. Thread-safe.

    Args:
        app: The Celery app (:func:`~ariadne_lc.distributed.create_app`).
        log: Where confirmed publishes are recorded (``None``: not recorded).
    """

    def __init__(self, app: Any, log: DispatchLog | None) -> None:
        self.app = app
        self.log = log
        self.queue = str(app.conf.task_default_queue)
        self._lock = threading.Lock()
        self._conn: Any = None
        self._producer: Any = None

    def publish(self, job_ids: Sequence[str], *, countdown: float | None = None) -> int:
        """Publish a task for each id, in order, on one connection; ``countdown`` delays them.

        Returns how many were published. Raises :class:`BrokerUnavailableError` at the first failure,
        after recording the ones published before it.
        """
        done: list[str] = []
        with self._lock:
            try:
                producer = self._ready()
                for job_id in job_ids:
                    self.app.send_task(
                        TASK_NAME,
                        args=(job_id,),
                        queue=self.queue,
                        routing_key=self.queue,
                        countdown=countdown,
                        producer=producer,
                        retry=False,
                        ignore_result=True,
                    )
                    done.append(job_id)
            except Exception as exc:
                self._drop()
                self._record(done)
                broker = str(self.app.conf.broker_url).split("@")[-1]
                raise BrokerUnavailableError(f"the broker at {broker} did not take the task: {exc}") from exc
        self._record(done)
        return len(done)

    def _ready(self) -> Any:
        if self._producer is None:
            from kombu.messaging import Producer

            conn = self.app.connection_for_write()
            try:
                conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
                self._producer = Producer(conn.channel())  # type: ignore[no-untyped-call]
            except BaseException:
                conn.release()
                raise
            self._conn = conn
        return self._producer

    def _drop(self) -> None:
        conn, self._conn, self._producer = self._conn, None, None
        if conn is not None:
            try:
                conn.release()
            except Exception:
                logger.debug("ariadne distributed: closing a broken broker connection failed", exc_info=True)

    def close(self) -> None:
        """Close the broker connection."""
        with self._lock:
            self._drop()

    def _record(self, job_ids: list[str]) -> None:
        if self.log is None or not job_ids:
            return
        try:
            self.log.published(job_ids)
        except Exception:
            # The messages are out; without the record the sweeper only publishes a harmless duplicate.
            logger.warning("ariadne distributed: could not record %d published task(s)", len(job_ids), exc_info=True)


@dataclass(slots=True)
class DispatchStats:
    """What a :class:`CeleryDispatcher` did."""

    dispatched: int = 0
    """Tasks the broker confirmed."""
    failed: int = 0
    """Dispatch calls that failed (the broker was down or refused): their jobs stay pending."""
    paused: int = 0
    """Dispatch calls refused at once because publishing was paused after a failure."""


class CeleryDispatcher:
    """The persister's dispatch hook for distributed audits: a task per committed job.

    Give it to ``OnlineAuditor(..., jobs=PostgresJobStore(url), dispatcher=CeleryDispatcher(...))``.
    It connects lazily (on the first dispatch), so creating it does no network I/O.

    :meth:`dispatch` raises :class:`BrokerUnavailableError` when the broker does not take the tasks:
    the persister counts it (``stats.dispatch_errors``) and offers the ids again on later ticks, and the
    jobs wait, safe, as pending in the store. After a failure, publishing pauses (1 s, doubling up to
    30 s; a call during the pause fails at once) so that a dead broker costs one connection timeout
    (2 s) per pause, not one per batch.

    Args:
        broker_url: The broker the workers consume from.
        jobs_url: The job database (``postgresql://...``), where confirmed publishes are recorded for the
            sweeper; ``None`` records nothing (the sweeper then re-publishes each job once after its
            grace period).
        queue: The workers' queue.
        app: A Celery app of your own (:func:`~ariadne_lc.distributed.create_app`); overrides ``broker_url``
            and ``queue``.

    Examples:
        >>> dispatcher = CeleryDispatcher("amqp://guest:guest@127.0.0.1:5672//",
        ...                               jobs_url="postgresql://postgres@127.0.0.1/app")  # doctest: +SKIP
    """

    def __init__(
        self,
        broker_url: str = DEFAULT_BROKER_URL,
        *,
        jobs_url: str | None = None,
        queue: str = DEFAULT_QUEUE,
        app: Any = None,
    ) -> None:
        self.app = app if app is not None else create_app(broker_url, queue=queue)
        self.jobs_url = jobs_url
        self.stats = DispatchStats()
        self._publisher: Publisher | None = None
        self._pool: Any = None
        self._lock = threading.Lock()
        self._paused_until = 0.0
        self._pause = _MIN_PAUSE
        self._warned_at = -_WARN_INTERVAL

    def _ready(self) -> Publisher:
        if self._publisher is None:
            log = None
            if self.jobs_url is not None:
                self._pool = open_pool(self.jobs_url, name="ariadne-dispatch", max_size=1)
                log = DispatchLog(self._pool)
            self._publisher = Publisher(self.app, log)
        return self._publisher

    def dispatch(self, job_ids: Sequence[str]) -> None:
        """Publish a task for each newly committed job (on the persister thread).

        Raises:
            BrokerUnavailableError: Some were not published (the broker is down, or publishing is paused).
        """
        with self._lock:
            if time.monotonic() < self._paused_until:
                self.stats.paused += 1
                raise BrokerUnavailableError("publishing is paused after a broker failure")
        published = 0
        try:
            publisher = self._ready()
            published = publisher.publish(job_ids)
        except BrokerUnavailableError as exc:
            self._failed(len(job_ids), exc)
            raise
        with self._lock:
            self.stats.dispatched += published
            self._pause = _MIN_PAUSE

    def _failed(self, count: int, exc: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self.stats.failed += 1
            self._paused_until = now + self._pause
            pause, self._pause = self._pause, min(_MAX_PAUSE, self._pause * 2)
            warn = now - self._warned_at >= _WARN_INTERVAL
            if warn:
                self._warned_at = now
        if warn:
            logger.warning(
                "ariadne distributed: publishing %d audit task(s) failed (%s); the jobs are safe in the job store, "
                "publishing pauses %.0f s",
                count,
                exc,
                pause,
            )

    def snapshot(self) -> DispatchStats:
        """A copy of :attr:`stats`."""
        with self._lock:
            return replace(self.stats)

    def close(self) -> None:
        """Release the broker and database connections."""
        if self._publisher is not None:
            self._publisher.close()
        if self._pool is not None:
            self._pool.close()
