"""Is each worker really consuming? A row per worker process in Postgres, and the fleet's health from it.

A worker can be alive, connected and counted as a consumer by the broker, yet take no more work: its
consumer loop blocked (seen after a broker restart: the main thread stuck in Celery's prefetch-count
restore, ``QoS.update -> basic_qos -> read_frame``, its prefetched messages never acknowledged nor
released). Consumer counts and process checks both say "fine". So each worker process runs a
:class:`Liveness` thread that, every ``interval`` seconds,

1. pings its own Celery node through the broker (``app.control.ping(destination=[node])``). Control
   messages are handled by the same consumer loop that takes tasks, so a pong proves that loop turns;
2. writes its row in ``ariadne_workers`` (the job database): when it last beat, when its consumer
   last answered, the tasks running and when a task last started and finished. Times are the
   database server's clock, so hosts with skewed clocks agree.

:func:`fleet_health` (``ariadne-lc workers``) reads the rows and says per worker ``ok``, ``starting``,
``stalled`` (beating, but its consumer has not answered for ``stall_after`` seconds), or ``gone``
(no beat for three intervals: killed without a clean stop). A clean stop deletes the row.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ariadne_lc.distributed._postgres import with_retries

__all__ = ["DEFAULT_BEAT_INTERVAL", "DEFAULT_STALL_AFTER", "Activity", "Liveness", "WorkerHealth", "fleet_health"]

logger = logging.getLogger("ariadne_lc.distributed")

DEFAULT_BEAT_INTERVAL = 10.0
"""Seconds between a worker's beats (and self-pings)."""
DEFAULT_STALL_AFTER = 60.0
"""Seconds without an answer from its consumer after which a beating worker is reported stalled."""
_FORGET_AFTER = 86400.0
_NOW = "extract(epoch FROM clock_timestamp())::float8"


@dataclass(frozen=True, slots=True)
class Activity:
    """What the audit machinery of a process did (monotonic seconds; ``None``: never)."""

    running: int
    """Tasks in flight now."""
    tasks: int
    """Tasks handled since the process started."""
    last_started: float | None
    """When the last task started (``time.monotonic()``)."""
    last_finished: float | None
    """When the last task ended (``time.monotonic()``)."""


@dataclass(frozen=True, slots=True)
class WorkerHealth:
    """One worker process, as :func:`fleet_health` sees it."""

    node: str
    """The Celery node name (``--hostname``)."""
    owner: str
    """The process's owner identity in the job store (``host:pid:random``)."""
    queue: str
    """The queue it consumes."""
    status: str
    """``ok``, ``starting`` (no pong yet), ``stalled`` or ``gone``."""
    reason: str
    """Why, in words (empty when ``ok``)."""
    concurrency: int
    """Tasks it may run at once."""
    running: int
    """Tasks it ran at its last beat."""
    tasks: int
    """Tasks it handled since it started."""
    beat_age: float
    """Seconds since its last beat."""
    consumer_age: float | None
    """Seconds since its consumer last answered a ping (``None``: never)."""
    task_age: float | None
    """Seconds since a task last started or ended there (``None``: none yet)."""


class Liveness:
    """Beats this worker's row and pings its consumer (see the module docstring). Never raises.

    Args:
        pool: A connection pool on the job database (:func:`~ariadne_lc.distributed.open_pool`).
        app: The worker's Celery app (for the self-ping).
        owner: The process's identity in the job store.
        queue, concurrency: What the worker consumes, and how many at once.
        activity: Returns the audit machinery's :class:`Activity` (``None``: not in this process).
        interval: Seconds between beats.
    """

    def __init__(
        self,
        pool: Any,
        app: Any,
        *,
        owner: str,
        queue: str,
        concurrency: int,
        activity: Callable[[], Activity | None] = lambda: None,
        interval: float = DEFAULT_BEAT_INTERVAL,
    ) -> None:
        self._pool = pool
        self._app = app
        self.owner = owner
        self.queue = queue
        self.concurrency = concurrency
        self._activity = activity
        self.interval = float(interval)
        self.node: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, node: str) -> None:
        """Start beating as Celery node ``node`` (once the worker is ready: the ping needs its consumer)."""
        self.node = node

        def forget() -> None:
            with self._pool.connection() as conn:
                conn.execute(f"DELETE FROM ariadne_workers WHERE beat_at < {_NOW} - %s", (_FORGET_AFTER,))

        try:
            with_retries(forget, "forgetting workers gone for a day")
        except Exception:
            logger.debug("ariadne distributed: forgetting old worker rows failed", exc_info=True)
        self._beat(pong=False)
        self._thread = threading.Thread(target=self._main, name="ariadne-distributed-liveness", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        while not self._stop.wait(self.interval):
            self._beat(pong=self._ping())

    def _ping(self) -> bool:
        try:
            replies = self._app.control.ping(
                destination=[self.node], timeout=max(1.0, min(5.0, self.interval)), limit=1
            )
        except Exception as exc:
            logger.info("ariadne distributed: pinging this worker's consumer failed: %s", exc)
            return False
        ok = any(self.node in reply for reply in replies or ())
        if not ok:
            logger.warning("ariadne distributed: this worker's consumer (%s) did not answer a ping", self.node)
        return ok

    def _beat(self, *, pong: bool) -> None:
        act = self._activity()
        now = time.monotonic()

        def ago(at: float | None) -> float | None:
            return None if at is None else max(0.0, now - at)

        started, finished = (None, None) if act is None else (ago(act.last_started), ago(act.last_finished))
        row = {
            "owner": self.owner,
            "node": self.node or "",
            "queue": self.queue,
            "concurrency": self.concurrency,
            "interval": self.interval,
            "pong": pong,
            "running": 0 if act is None else act.running,
            "tasks": 0 if act is None else act.tasks,
            "started": started,
            "finished": finished,
        }

        def write() -> None:
            with self._pool.connection() as conn:
                conn.execute(
                    "INSERT INTO ariadne_workers (owner, node, queue, concurrency, beat_every, started_at, beat_at, "
                    f"consumer_at, running, tasks, task_started_at, task_ended_at) VALUES (%(owner)s, %(node)s, "
                    f"%(queue)s, %(concurrency)s, %(interval)s, {_NOW}, {_NOW}, CASE WHEN %(pong)s THEN {_NOW} END, "
                    f"%(running)s, %(tasks)s, {_NOW} - %(started)s::float8, {_NOW} - %(finished)s::float8) "
                    "ON CONFLICT (owner) DO UPDATE SET node = EXCLUDED.node, beat_at = EXCLUDED.beat_at, "
                    "consumer_at = COALESCE(EXCLUDED.consumer_at, ariadne_workers.consumer_at), "
                    "running = EXCLUDED.running, tasks = EXCLUDED.tasks, "
                    "task_started_at = EXCLUDED.task_started_at, task_ended_at = EXCLUDED.task_ended_at",
                    row,
                )

        try:
            with_retries(write, "beating")
        except Exception:
            logger.warning("ariadne distributed: writing this worker's heartbeat failed", exc_info=True)

    def stop(self) -> None:
        """Stop beating and delete the row (a clean stop is not a worker gone)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.interval + 10.0)

        def delete() -> None:
            with self._pool.connection() as conn:
                conn.execute("DELETE FROM ariadne_workers WHERE owner = %s", (self.owner,))

        try:
            with_retries(delete, "removing this worker's heartbeat")
        except Exception:
            logger.warning("ariadne distributed: removing this worker's heartbeat row failed", exc_info=True)


def fleet_health(
    pool: Any, *, queue: str | None = None, stall_after: float = DEFAULT_STALL_AFTER
) -> list[WorkerHealth]:
    """The health of every worker that beat in the last day (of ``queue``, when given), by node name."""

    def read() -> list[tuple[Any, ...]]:
        with pool.connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(
                f"SELECT node, owner, queue, concurrency, beat_every, running, tasks, {_NOW} - started_at, "
                f"{_NOW} - beat_at, "
                f"{_NOW} - consumer_at, {_NOW} - GREATEST(task_started_at, task_ended_at) FROM ariadne_workers "
                f"WHERE beat_at > {_NOW} - %(forget)s AND (%(queue)s::text IS NULL OR queue = %(queue)s) "
                "ORDER BY node, owner",
                {"forget": _FORGET_AFTER, "queue": queue},
            ).fetchall()
            return rows

    found = []
    for node, owner, q, concurrency, every, running, tasks, up_for, beat_age, consumer_age, task_age in with_retries(
        read, "reading the workers' heartbeats"
    ):
        beat_age = float(beat_age)
        consumer_age = None if consumer_age is None else float(consumer_age)
        if beat_age > 3 * float(every):
            status, reason = "gone", f"no heartbeat for {beat_age:.0f} s (killed, or its host is down)"
        elif consumer_age is None and float(up_for) <= stall_after:
            status, reason = "starting", "its consumer has not answered a ping yet"
        elif consumer_age is None or consumer_age > stall_after:
            silent = float(up_for) if consumer_age is None else consumer_age
            status = "stalled"
            reason = (
                f"alive, but its consumer has not answered a ping for {silent:.0f} s: it takes no tasks and "
                "holds its prefetched messages; restart it"
            )
        else:
            status, reason = "ok", ""
        found.append(
            WorkerHealth(
                node=str(node),
                owner=str(owner),
                queue=str(q),
                status=status,
                reason=reason,
                concurrency=int(concurrency),
                running=int(running),
                tasks=int(tasks),
                beat_age=beat_age,
                consumer_age=consumer_age,
                task_age=None if task_age is None else float(task_age),
            )
        )
    return found
