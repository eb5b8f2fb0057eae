"""``ariadne-lc worker``: a Celery worker that audits the jobs a fleet of serving replicas sampled.

::

    ariadne-lc worker --graph my_app.agent:build_graph --jobs postgresql://app@db/app \\
        --broker amqp://guest:guest@rabbit:5672// --concurrency 8

Everything distributed lives in :mod:`ariadne_lc.distributed` (the extra of the same name); this module
only turns options into a :class:`~ariadne_lc.distributed.WorkerConfig` and checks the services first,
so that an unreachable broker or database is one line naming it, not a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer

from ariadne_lc.cli._audit_cmd import (
    DEFAULT_INTERVENTIONS,
    DEFAULT_STEP,
    LINK_HELP,
    STEP_HELP,
    parse_interventions,
    parse_links,
    parse_step,
)
from ariadne_lc.cli._common import EXIT_GATE, console, fail, one_line_errors
from ariadne_lc.cli._interrupt import EXIT_INTERRUPTED, Interruption

if TYPE_CHECKING:
    from ariadne_lc.distributed import WorkerConfig

__all__ = ["check_service", "worker", "workers"]

_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
_HOW_TO_START = {
    "amqp": "start RabbitMQ (e.g. 'rabbitmq-server -detached')",
    "redis": "start Redis (e.g. 'redis-server --daemonize yes')",
    "postgresql": "start PostgreSQL (e.g. 'pg_ctlcluster <version> main start')",
}


def check_service(url: str, *, timeout: float = 3.0) -> str | None:
    """``None`` when a TCP connection to the service in ``url`` opens, else a one-line reason naming the
    service, its URL (password masked), what went wrong and, when nothing listens, how to start it."""
    from ariadne_lc.distributed._preflight import masked, reach

    unreachable = reach(url, timeout=timeout)
    if unreachable is None:
        return None
    scheme = urlsplit(url).scheme.lower()
    kind = "amqp" if scheme.startswith(("amqp", "pyamqp")) else "redis" if scheme.startswith("redis") else "postgresql"
    name = {"amqp": "RabbitMQ", "redis": "Redis", "postgresql": "PostgreSQL"}[kind]
    what_to_do = _HOW_TO_START[kind] if unreachable.refused else "check the host and port in the URL"
    return f"{name} is not reachable at {masked(url)} ({unreachable.reason}); {what_to_do}"


@one_line_errors
def worker(
    graph: Annotated[
        str,
        typer.Option(
            help="Your graph: 'package.module:attribute', a compiled graph or a "
            "function returning one (given checkpointer=PostgresSaver when it takes one)."
        ),
    ],
    jobs: Annotated[str, typer.Option(help="The job database shared with the serving replicas: postgresql://...")],
    broker: Annotated[str, typer.Option(help="The broker: amqp://... (RabbitMQ) or redis://...")] = _BROKER,
    queue: Annotated[str, typer.Option(help="The queue the serving side publishes to.")] = "ariadne-audits",
    concurrency: Annotated[int, typer.Option(help="Audits this worker runs at once.")] = 4,
    pool: Annotated[str, typer.Option(help="Celery pool: threads (audits wait on models), prefork, solo.")] = "threads",
    checkpointer: Annotated[str | None, typer.Option(help="PostgresSaver database, when not --jobs.")] = None,
    interventions: Annotated[
        str,
        typer.Option(
            help="Intervention types for jobs stored without a plan (the serving side's plan travels with each job)."
        ),
    ] = DEFAULT_INTERVENTIONS,
    step: Annotated[str, typer.Option(help=STEP_HELP + " For jobs stored without a plan.")] = DEFAULT_STEP,
    link: Annotated[
        list[str] | None, typer.Option(help=LINK_HELP + " A job whose plan names links is audited on those.")
    ] = None,
    audit_timeout: Annotated[float, typer.Option(help="Seconds an audit attempt may take.")] = 300.0,
    lease: Annotated[float, typer.Option(help="Seconds a claim survives without a heartbeat.")] = 120.0,
    max_attempts: Annotated[int, typer.Option(help="Attempts per job.")] = 3,
    retry_backoff: Annotated[float, typer.Option(help="Seconds before the first retry (doubled each time).")] = 5.0,
    max_audits_per_minute: Annotated[float | None, typer.Option(help="Fleet-wide audit rate limit.")] = None,
    max_model_calls_per_hour: Annotated[int | None, typer.Option(help="Fleet-wide model-call budget.")] = None,
    fleet: Annotated[str | None, typer.Option(help="Scope of the limits (default: the queue).")] = None,
    sweep_interval: Annotated[float, typer.Option(help="Seconds between sweeps for lost tasks (0: none).")] = 30.0,
    grace: Annotated[float, typer.Option(help="Seconds a never-published job is left to its dispatcher.")] = 10.0,
    redeliver_after: Annotated[float, typer.Option(help="Re-publish unfinished jobs after this long.")] = 600.0,
    broker_wait: Annotated[float, typer.Option(help="Seconds start-up waits for the broker to answer.")] = 30.0,
    reconnect_tries: Annotated[
        int, typer.Option(help="Reconnections to a lost broker before exiting 1 (0: forever).")
    ] = 100,
    beat_interval: Annotated[float, typer.Option(help="Seconds between heartbeats (0: none).")] = 10.0,
    hostname: Annotated[str | None, typer.Option(help="Celery node name (default ariadne-<pid>@<host>).")] = None,
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "INFO",
) -> None:
    """Consume audit tasks: claim each job in Postgres, audit it on your graph, commit the results once."""
    links = parse_links(link, graph=graph)  # bad options are one line before any service is contacted
    kinds, selector = tuple(parse_interventions(interventions)), parse_step(step)
    from ariadne_lc.distributed import WorkerConfig, broker_kind

    for name, url in (("--jobs", jobs), ("--checkpointer", checkpointer)):
        if url is not None and not url.startswith(("postgresql://", "postgres://")):
            fail(f"{name} must be a postgresql:// URL (workers on many hosts share it), got {url!r}")
    broker_kind(broker)
    for url in (broker, jobs, checkpointer):
        if url is not None:
            problem = check_service(url)
            if problem is not None:
                fail(problem)
    config = WorkerConfig(
        graph=graph,
        jobs_url=jobs,
        broker_url=broker,
        queue=queue,
        checkpointer_url=checkpointer,
        concurrency=concurrency,
        pool=pool,
        interventions=kinds,
        step=selector,
        links=links,
        lease=lease,
        audit_timeout=audit_timeout,
        max_attempts=max_attempts,
        retry_backoff=retry_backoff,
        max_audits_per_minute=max_audits_per_minute,
        max_model_calls_per_hour=max_model_calls_per_hour,
        fleet=fleet,
        sweep_interval=sweep_interval,
        grace=grace,
        redeliver_after=redeliver_after,
        broker_wait=broker_wait,
        reconnect_tries=reconnect_tries,
        beat_interval=beat_interval,
        hostname=hostname,
        loglevel=loglevel,
    )
    status = _run_interruptible(config, jobs)
    if status:
        raise typer.Exit(status)  # Celery logged why; a supervisor restarts a worker that exits non-zero


def _run_interruptible(config: WorkerConfig, jobs: str) -> int:
    """Run the worker; on Ctrl-C, Celery's warm shutdown (no new task; a second Ctrl-C cancels the ones in flight)
    with the deadline of every long command (:mod:`ariadne_lc.cli._interrupt`), the line saying what is kept, exit
    130. Audits cut short are not lost: their jobs are claimed under a lease, and go to a worker again when it ends."""
    from celery import signals

    from ariadne_lc.distributed import run_worker
    from ariadne_lc.distributed._preflight import masked

    stop = Interruption(
        lambda: (
            f"every audit finished is committed in {masked(jobs)}; the audits in flight go to a worker again when "
            "their lease ends; start the worker again to go on"
        )
    )

    def on_shutting_down(sig: str = "", **_: Any) -> None:  # Celery calls it from its signal handler
        if sig == "SIGINT":
            stop.begin()

    signals.worker_shutting_down.connect(on_shutting_down, weak=False)
    try:
        status = run_worker(config)
    finally:
        signals.worker_shutting_down.disconnect(on_shutting_down)
    if stop.interrupted:
        stop.announce()
        raise typer.Exit(EXIT_INTERRUPTED)
    return status


@one_line_errors
def workers(
    jobs: Annotated[str, typer.Option(help="The job database the workers share: postgresql://...")],
    queue: Annotated[str | None, typer.Option(help="Only the workers of this queue.")] = None,
    stall_after: Annotated[float, typer.Option(help="Seconds without a pong from its consumer: stalled.")] = 60.0,
) -> None:
    """Each worker's health from its heartbeat: ok, starting, stalled (alive, consumer blocked), gone.

    Exit status 1 when any worker is stalled or gone, so that it can serve as a probe.
    """
    from ariadne_lc.distributed import fleet_health, open_pool
    from ariadne_lc.distributed._preflight import check_database

    if not jobs.startswith(("postgresql://", "postgres://")):
        fail(f"--jobs must be a postgresql:// URL, got {jobs!r}")
    check_database(jobs, option="--jobs")
    pool = open_pool(jobs, name="ariadne-workers-cmd", max_size=1)
    try:
        found = fleet_health(pool, queue=queue, stall_after=stall_after)
    finally:
        pool.close()
    if not found:
        console.print("no worker has beaten in the last day")
        return
    for w in found:
        ages = f"beat {w.beat_age:.0f} s ago"
        ages += "" if w.consumer_age is None else f", consumer answered {w.consumer_age:.0f} s ago"
        ages += "" if w.task_age is None else f", last task {w.task_age:.0f} s ago"
        line = f"{w.status:8} {w.node} (queue {w.queue}): {w.running}/{w.concurrency} running, {w.tasks} handled"
        line += f"; {ages}"
        console.print(line + (f"; {w.reason}" if w.reason else ""), highlight=False, soft_wrap=True)
    if any(w.status in ("stalled", "gone") for w in found):
        raise typer.Exit(EXIT_GATE)
