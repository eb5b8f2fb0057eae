"""A worker process, assembled from a few URLs: the user's graph on its shared PostgresSaver, the job
store, the fleet limits, the Celery worker consuming the audit queue, and the sweeper.

``ariadne-lc worker`` parses its options into a :class:`WorkerConfig` and calls :func:`run_worker`;
nothing here imports the command line. The graph is imported by path (``package.module:attribute``):
a compiled graph, or a function returning one; a function with a ``checkpointer`` parameter is given a
``PostgresSaver`` on ``checkpointer_url`` (default: the job database), the one every serving replica
writes its threads to, so that the worker forks audits from the same history.

The audit machinery is built lazily in the process that runs the tasks: with the ``threads`` pool
(the default: audits wait on model calls, not on the CPU) that is the worker process itself, warmed
up before it consumes; with ``prefork`` each pool process builds its own after the fork (connections
must not cross a fork).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ariadne_lc import links
from ariadne_lc.audit import DEFAULT_INTERVENTIONS, Auditor, StepSelector
from ariadne_lc.distributed._app import DEFAULT_BROKER_URL, DEFAULT_QUEUE, DEFAULT_RECONNECT_TRIES, create_app
from ariadne_lc.distributed._dispatch import Publisher
from ariadne_lc.distributed._limits import FleetLimits
from ariadne_lc.distributed._liveness import DEFAULT_BEAT_INTERVAL, Activity, Liveness
from ariadne_lc.distributed._needs import check_job_links
from ariadne_lc.distributed._postgres import DispatchLog, open_pool
from ariadne_lc.distributed._preflight import DEFAULT_BROKER_WAIT, check_broker, check_database
from ariadne_lc.distributed._sweeper import DEFAULT_GRACE, DEFAULT_REDELIVER_AFTER, DEFAULT_SWEEP_INTERVAL, Sweeper
from ariadne_lc.distributed._worker import AuditWorker, register_audit_task
from ariadne_lc.errors import ConfigurationError, StoreError
from ariadne_lc.online import JobStore
from ariadne_lc.online import open_job_store as online_job_store
from ariadne_lc.online._jobs import new_owner
from ariadne_lc.online._open import is_postgres_dsn
from ariadne_lc.records import Link
from ariadne_lc.store._pg import schema_lock

__all__ = ["POOLS", "WorkerConfig", "WorkerProcess", "load_graph", "open_job_store", "postgres_saver", "run_worker"]

logger = logging.getLogger("ariadne_lc.distributed")

POOLS = ("threads", "prefork", "solo")
"""Celery execution pools a worker may use."""


@dataclass(frozen=True)
class WorkerConfig:
    """Everything ``ariadne-lc worker`` needs (each field is one of its options)."""

    graph: str
    """The user's graph: ``package.module:attribute`` (a compiled graph or a function returning one)."""
    jobs_url: str
    """The job database, ``postgresql://...``."""
    broker_url: str = DEFAULT_BROKER_URL
    """The broker: ``amqp://...`` (RabbitMQ) or ``redis://...``."""
    queue: str = DEFAULT_QUEUE
    """The queue to consume; the serving side's dispatcher publishes to the same one."""
    checkpointer_url: str | None = None
    """Where the graph's PostgresSaver lives, when the graph function takes a ``checkpointer``; default ``jobs_url``."""
    concurrency: int = 4
    """Audits this worker process runs at once."""
    pool: str = "threads"
    """Celery execution pool (:data:`POOLS`)."""
    interventions: tuple[str, ...] = DEFAULT_INTERVENTIONS
    """What the audit of a job stored without a plan does (a job's own :class:`~ariadne_lc.online.AuditPlan`,
    which ``OnlineAuditor(interventions=..., step=...)`` stores with it, wins)."""
    step: StepSelector | None = None
    """Which step the audit of a job stored without a plan intervenes on."""
    links: tuple[Link, ...] | None = None
    """The links the worker's auditor audits (:func:`ariadne_lc.links.names`; ``None``: every link it can); a job
    whose plan names links (``OnlineAuditor(links=...)``) is audited on those."""
    lease: float = 120.0
    """Seconds a claim survives without a heartbeat."""
    audit_timeout: float = 300.0
    """Seconds an attempt may take."""
    max_attempts: int = 3
    """Attempts per job."""
    retry_backoff: float = 5.0
    """Seconds before the first retry (doubled each time, with jitter)."""
    max_retry_backoff: float = 600.0
    """Cap of the retry delay."""
    max_audits_per_minute: float | None = None
    """Fleet-wide rate limit (Postgres token bucket)."""
    max_model_calls_per_hour: int | None = None
    """Fleet-wide model-call budget (Postgres ledger)."""
    fleet: str | None = None
    """Name of the limits' scope; workers with the same name share them (default: the queue)."""
    sweep_interval: float = DEFAULT_SWEEP_INTERVAL
    """Seconds between sweeps (0: this worker does not sweep)."""
    grace: float = DEFAULT_GRACE
    """Seconds a never-published job is left to its dispatcher."""
    redeliver_after: float = DEFAULT_REDELIVER_AFTER
    """Seconds after its last publish an unfinished job gets another message."""
    broker_wait: float = DEFAULT_BROKER_WAIT
    """Seconds start-up waits for the broker to answer (a refused login fails at once)."""
    reconnect_tries: int = DEFAULT_RECONNECT_TRIES
    """Reconnections to a lost broker before the worker exits with status 1 (0: try forever)."""
    beat_interval: float = DEFAULT_BEAT_INTERVAL
    """Seconds between the worker's heartbeats and self-pings (``ariadne_workers``; 0: none)."""
    hostname: str | None = None
    """The Celery node name (default ``ariadne-<pid>@<host>``)."""
    loglevel: str = "INFO"
    """The worker's log level."""
    extra_args: tuple[str, ...] = field(default=())
    """More ``celery worker`` arguments, passed through."""

    def __post_init__(self) -> None:
        if self.pool not in POOLS:
            raise ConfigurationError(f"pool must be one of {', '.join(POOLS)}, got {self.pool!r}")
        if self.concurrency < 1:
            raise ConfigurationError(f"concurrency must be at least 1, got {self.concurrency}")
        if not self.lease > 0 or not self.audit_timeout > 0:
            raise ConfigurationError("lease and audit_timeout must be positive")
        if self.sweep_interval < 0:
            raise ConfigurationError(f"sweep_interval must not be negative, got {self.sweep_interval}")
        unknown = [k for k in self.links or () if k not in links.names()]
        if unknown or self.links == ():
            raise ConfigurationError(f"links must name some of {list(links.names())}, got {list(self.links or ())}")
        if self.broker_wait < 0 or self.beat_interval < 0 or self.reconnect_tries < 0:
            raise ConfigurationError("broker_wait, beat_interval and reconnect_tries must not be negative")


def open_job_store(url: str) -> JobStore:
    """The shared job store at ``url`` (``postgresql://...``; workers on many hosts share it)."""
    if not is_postgres_dsn(url):
        raise ConfigurationError(f"--jobs must be a postgresql:// URL (workers on many hosts share it), got {url!r}")
    return online_job_store(url)


def postgres_saver(url: str, *, max_size: int) -> tuple[Any, Any]:
    """A set-up ``PostgresSaver`` on a connection pool of its own; returns (saver, pool).

    Its ``setup()`` (the checkpointer's migrations) runs under a Postgres advisory lock
    (:func:`ariadne_lc.store._pg.schema_lock`), as ariadne_lc's own tables are created, so that serving
    replicas and workers started at the same moment on a fresh database do not fail with
    ``UniqueViolation``. Use it on the serving side too.
    """
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        name="ariadne-checkpointer",
        open=False,
    )
    try:
        pool.open(wait=True, timeout=10.0)
    except Exception as exc:
        pool.close()
        raise StoreError(f"cannot connect to the checkpointer's PostgreSQL at {url.split('@')[-1]}: {exc}") from exc
    saver = PostgresSaver(pool)  # type: ignore[arg-type]  # a dict_row pool, which the annotation cannot see
    try:
        with schema_lock(url):  # its migrations race when a fleet starts at once on a fresh database
            saver.setup()
    except Exception:
        pool.close()
        raise
    return saver, pool


def load_graph(spec: str, checkpointer: Any) -> Any:
    """Import ``module:attribute``: a compiled graph, or a function returning one (given ``checkpointer``
    when it has a parameter of that name)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigurationError(f"--graph must look like 'package.module:attribute', got {spec!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for --graph: {exc}") from None
    target = getattr(module, attribute, None)
    if target is None:
        raise ConfigurationError(f"module {module_name!r} has no attribute {attribute!r}")
    graph = target
    if callable(target) and not hasattr(target, "get_state_history"):
        takes_saver = "checkpointer" in inspect.signature(target).parameters
        graph = target(checkpointer=checkpointer) if takes_saver else target()
    if not hasattr(graph, "get_state_history"):
        raise ConfigurationError(f"{spec} is a {type(graph).__name__}, not a compiled LangGraph graph")
    if getattr(graph, "checkpointer", None) is None:
        raise ConfigurationError(f"{spec} has no checkpointer: workers fork audits from the serving side's threads")
    return graph


class WorkerProcess:
    """The lazily built audit machinery of the process that runs the tasks (see the module docstring)."""

    def __init__(self, config: WorkerConfig, app: Any) -> None:
        self.config = config
        self.app = app
        self._lock = threading.Lock()
        self._worker: AuditWorker | None = None
        self._pid = 0
        self._closers: list[Any] = []

    def get(self) -> AuditWorker:
        """This process's :class:`AuditWorker`, built on first use."""
        with self._lock:
            if self._worker is None or self._pid != os.getpid():
                self._closers = []
                self._worker = self._build()
                self._pid = os.getpid()
            return self._worker

    def _build(self) -> AuditWorker:
        c = self.config
        saver, saver_pool = postgres_saver(c.checkpointer_url or c.jobs_url, max_size=c.concurrency + 2)
        self._closers.append(saver_pool)
        graph = load_graph(c.graph, saver)
        jobs = open_job_store(c.jobs_url)
        self._closers.append(jobs)
        pool = open_pool(c.jobs_url, name="ariadne-worker", max_size=2)
        self._closers.append(pool)
        limits = None
        if c.max_audits_per_minute is not None or c.max_model_calls_per_hour is not None:
            limits = FleetLimits(
                pool,
                name=c.fleet or c.queue,
                max_audits_per_minute=c.max_audits_per_minute,
                max_model_calls_per_hour=c.max_model_calls_per_hour,
                initial_estimate=float(max(1, len(c.interventions))),
            )
        return AuditWorker(
            jobs=jobs,
            auditor=Auditor(graph, links=c.links),
            publisher=Publisher(self.app, DispatchLog(pool)),
            limits=limits,
            step=c.step,
            interventions=c.interventions,
            lease=c.lease,
            audit_timeout=c.audit_timeout,
            max_attempts=c.max_attempts,
            retry_backoff=c.retry_backoff,
            max_retry_backoff=c.max_retry_backoff,
        )

    def activity(self) -> Activity | None:
        """The audit machinery's activity, when it runs in this process (not with ``prefork``)."""
        with self._lock:
            worker = self._worker if self._pid == os.getpid() else None
        return None if worker is None else worker.activity()

    def owner(self) -> str:
        """This process's identity in the job store (its audit worker's, when built here)."""
        with self._lock:
            worker = self._worker if self._pid == os.getpid() else None
        return new_owner() if worker is None else worker.owner

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.close()
            for closer in reversed(self._closers):
                try:
                    closer.close()
                except Exception:
                    logger.debug("ariadne distributed: closing %r failed", closer, exc_info=True)
            self._worker, self._closers = None, []


def _sweeper(config: WorkerConfig, app: Any) -> tuple[Sweeper, list[Any]]:
    jobs = open_job_store(config.jobs_url)
    pool = open_pool(config.jobs_url, name="ariadne-sweeper", max_size=3)  # the election holds one
    log = DispatchLog(pool)
    sweeper = Sweeper(
        jobs,
        Publisher(app, log),
        log,
        pool,
        interval=config.sweep_interval,
        grace=config.grace,
        redeliver_after=config.redeliver_after,
    )
    return sweeper, [jobs, pool]


def run_worker(config: WorkerConfig) -> int:
    """Run a Celery worker consuming the audit queue until it is stopped (SIGTERM: warm shutdown, the
    audits in flight finish first; SIGQUIT or SIGKILL: they are redelivered). Returns Celery's exit
    status: 0 after a clean stop, non-zero when the worker failed (its reason is in the log).

    Raises:
        BrokerUnavailableError: At start-up, the broker refused the login or did not answer as one
            within ``config.broker_wait`` seconds.
        StoreError: At start-up, a database could not be connected to (the server's reason included).
        ConfigurationError: At start-up, jobs waiting name a link this process has not registered
            (:mod:`~ariadne_lc.distributed._needs`).
    """
    from celery import signals

    check_database(config.jobs_url, option="--jobs")
    check_job_links(config.jobs_url, graph=config.graph)
    if config.checkpointer_url is not None:
        check_database(config.checkpointer_url, option="--checkpointer")
    check_broker(config.broker_url, wait=config.broker_wait)
    app = create_app(config.broker_url, queue=config.queue, audit_timeout=config.audit_timeout)
    # Start-up already waited for the broker (boundedly): a broker lost since is a failed start, not
    # Celery's 100 retries.
    app.conf.broker_connection_retry_on_startup = False
    app.conf.broker_connection_max_retries = config.reconnect_tries or None
    process = WorkerProcess(config, app)
    register_audit_task(app, process.get)
    if config.pool != "prefork":
        process.get()  # load the graph and connect before consuming; prefork children build their own
    closers: list[Any] = []
    background: list[Sweeper | Liveness] = []

    def on_ready(sender: Any = None, **_: Any) -> None:
        # After the pool is up, in the main process, so that a prefork child never inherits its connections.
        if background:
            return
        if config.sweep_interval > 0:
            sweeper, owned = _sweeper(config, app)
            closers.extend(owned)
            background.append(sweeper)
            sweeper.start()
        if config.beat_interval > 0:
            pool = open_pool(config.jobs_url, name="ariadne-liveness", max_size=1)
            closers.append(pool)
            liveness = Liveness(
                pool,
                app,
                owner=process.owner(),
                queue=config.queue,
                concurrency=config.concurrency,
                activity=process.activity,
                interval=config.beat_interval,
            )
            background.append(liveness)
            liveness.start(str(getattr(sender, "hostname", "") or hostname))

    signals.worker_ready.connect(on_ready, weak=False)
    hostname = config.hostname or f"ariadne-{os.getpid()}@%h"
    argv = [
        "worker",
        f"--loglevel={config.loglevel}",
        f"--concurrency={config.concurrency}",
        f"--pool={config.pool}",
        f"--queues={config.queue}",
        f"--hostname={hostname}",
        "--without-gossip",
        "--without-mingle",
        *config.extra_args,
    ]
    started: list[Any] = []

    def on_init(instance: Any = None, **_: Any) -> None:
        started.append(instance)

    # Neither app.worker_main nor app.start returns the worker's exit status (a worker that gave up
    # after Celery's reconnection attempts exited 0): read it from the worker instance itself.
    signals.celeryd_init.connect(on_init, weak=False)
    try:
        app.start(argv=argv)
    finally:
        signals.celeryd_init.disconnect(on_init)
        signals.worker_ready.disconnect(on_ready)
        for task in background:
            task.stop()
        for closer in closers:
            closer.close()
        process.close()
    status = getattr(started[0], "exitcode", None) if started else 1
    return int(status or 0)
