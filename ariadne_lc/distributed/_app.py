"""The Celery application both sides share: the serving side publishes with it, workers consume with it.

Only delivery lives in Celery. The job's state and its results are in the Postgres job store, so the
app has no result backend and every task ignores its result. The settings that make delivery
at-least-once, and why each one is there:

- ``task_acks_late``: a message is acknowledged after the audit's outcome is committed, not when it
  is received; a worker that dies before that leaves the message unacknowledged and the broker hands
  it to another worker.
- ``task_reject_on_worker_lost``: when a pool process dies (SIGKILL, OOM killer) the message is
  requeued rather than acknowledged as failed.
- ``worker_prefetch_multiplier = 1``: a worker holds one message per free slot, so messages are not
  parked behind a long audit on a busy worker while another sits idle.
- ``worker_enable_prefetch_count_reduction = False``: after a lost broker connection, Celery by
  default reconnects with a reduced prefetch count and raises it again, one ``basic.qos`` per
  finished task, as the tasks that were running end. Reported in issue 17: a worker reconnected
  after a RabbitMQ restart and blocked for good in that restore (``QoS.update -> basic_qos ->
  read_frame``), alive and counted as a consumer but taking no task, its prefetched messages
  unacknowledged (4 of 24 restarts; 0 of 8 with the reduction off). Without it the worker keeps
  ``concurrency`` × 1 as its prefetch count across reconnects and sends ``basic.qos`` only when it
  connects; the cost is that right after a reconnect it may hold a message for each task still
  finishing from before (those tasks' messages were requeued by the broker anyway). The stall is
  also why each worker beats and pings its own consumer (:mod:`~ariadne_lc.distributed._liveness`).
- ``broker_connection_max_retries = 100`` (Celery's default, stated; ``--reconnect-tries``): after a
  lost connection a worker retries 2 s apart, growing by 2 s to 30 s, 100 times (about 45 minutes),
  then stops with exit status 1 for its supervisor to restart it. ``ariadne-lc worker`` does not let
  Celery retry at start-up: it has already waited for the broker, boundedly
  (:mod:`~ariadne_lc.distributed._preflight`).
- Publisher confirms (RabbitMQ): a publish returns only once the broker has the message, so
  "dispatched" means "safe in a durable queue".
- A Redis broker has no acknowledgement protocol: an unacknowledged message comes back only after the
  ``visibility_timeout``, which therefore has to exceed the longest audit (else a running audit is
  handed to a second worker); :func:`create_app` sets it from ``audit_timeout``.
"""

from __future__ import annotations

import logging
from typing import Any

from ariadne_lc.errors import ConfigurationError

__all__ = [
    "DEFAULT_BROKER_URL",
    "DEFAULT_QUEUE",
    "DEFAULT_RECONNECT_TRIES",
    "TASK_NAME",
    "broker_kind",
    "create_app",
]

logger = logging.getLogger("ariadne_lc.distributed")

DEFAULT_BROKER_URL = "amqp://guest:guest@127.0.0.1:5672//"
"""RabbitMQ on this host, its default account."""
DEFAULT_QUEUE = "ariadne-audits"
"""The durable queue audit tasks go to."""
DEFAULT_RECONNECT_TRIES = 100
"""Reconnections to a lost broker before a worker gives up and exits with status 1 (Celery's default)."""
TASK_NAME = "ariadne_lc.audit_job"
"""The one task: audit the job with this id (its only argument)."""
_CONNECT_TIMEOUT = 2.0
_VISIBILITY_MARGIN = 600.0


def broker_kind(url: str) -> str:
    """``"amqp"`` or ``"redis"``, from the broker URL's scheme (other brokers are refused)."""
    scheme = url.partition("://")[0].lower()
    if scheme in ("amqp", "amqps", "pyamqp"):
        return "amqp"
    if scheme in ("redis", "rediss"):
        return "redis"
    raise ConfigurationError(f"the broker URL must be amqp://... (RabbitMQ) or redis://..., got {url.split('@')[-1]!r}")


def create_app(
    broker_url: str = DEFAULT_BROKER_URL,
    *,
    queue: str = DEFAULT_QUEUE,
    audit_timeout: float = 300.0,
    main: str = "ariadne_lc",
) -> Any:
    """A Celery app configured for audits (see the module docstring for each setting).

    Args:
        broker_url: ``amqp://user:password@host:5672/vhost`` (RabbitMQ, recommended) or ``redis://host:6379/0``.
        queue: The queue audit tasks are published to and consumed from; give each deployment (and each
            test run) its own.
        audit_timeout: Seconds an audit may take; a Redis broker's visibility timeout is set well above it.
        main: The app's name (shown by ``celery inspect`` and Flower).

    Returns:
        A ``celery.Celery`` instance; workers register the audit task on it
        (:func:`~ariadne_lc.distributed.register_audit_task`).
    """
    try:
        from celery import Celery
        from kombu.entity import Exchange, Queue
    except ImportError as exc:  # pragma: no cover - depends on the installation
        from ariadne_lc.errors import MissingExtraError

        raise MissingExtraError("distributed audits", "distributed", str(exc)) from None
    kind = broker_kind(broker_url)
    if not queue or not queue.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ConfigurationError(f"queue must be a non-empty name of letters, digits, '-', '_' or '.', got {queue!r}")
    if audit_timeout <= 0:
        raise ConfigurationError(f"audit_timeout must be positive, got {audit_timeout!r}")
    transport: dict[str, Any] = {}
    if kind == "amqp":
        transport["confirm_publish"] = True
    else:
        transport["visibility_timeout"] = int(2 * audit_timeout + _VISIBILITY_MARGIN)
    app = Celery(main, broker=broker_url, set_as_current=False)
    exchange = Exchange(queue, type="direct", durable=True)  # type: ignore[no-untyped-call]
    app.conf.update(
        task_queues=[Queue(queue, exchange, routing_key=queue, durable=True)],  # type: ignore[no-untyped-call]
        task_default_queue=queue,
        task_default_exchange=queue,
        task_default_routing_key=queue,
        task_routes={TASK_NAME: {"queue": queue, "routing_key": queue}},
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        task_ignore_result=True,
        task_store_errors_even_if_ignored=False,
        result_backend=None,
        task_serializer="json",
        accept_content=["json"],
        task_default_delivery_mode="persistent",
        worker_prefetch_multiplier=1,
        worker_enable_prefetch_count_reduction=False,
        # A lost broker connection requeues the unacknowledged messages; the audits in flight go on and
        # commit under their claims, and the redelivered copies find the job taken (see the task).
        worker_cancel_long_running_tasks_on_connection_loss=False,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=DEFAULT_RECONNECT_TRIES,
        broker_connection_timeout=_CONNECT_TIMEOUT,
        broker_transport_options=transport,
        worker_hijack_root_logger=False,
        worker_send_task_events=True,
        task_send_sent_event=False,
    )
    return app
