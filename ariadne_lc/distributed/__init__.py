"""Audits across many machines: sampled runs become Celery tasks, audit state stays in Postgres.

::

    serving replicas (N)                       broker (RabbitMQ)            audit workers (M)
    agent thread ─▶ OnlineAuditor ─▶ persister ─▶ commit jobs (Postgres) ─▶ publish "audit J" ─▶ claim J,
                     (O(1), no I/O)    thread      then dispatcher.dispatch    (confirmed)         audit, commit
                                                                                                 results + state,
                                                                                                 then ack

- **Install**: ``pip install 'ariadne-lc[distributed]'`` (Celery, kombu, py-amqp, psycopg,
  langgraph-checkpoint-postgres).
- **Serving side**: ``OnlineAuditor(graph, jobs=PostgresJobStore(url), dispatcher=CeleryDispatcher(broker,
  jobs_url=url))``. The agent's thread does what it always did; the persister thread commits the
  sampled runs as jobs and then publishes one task per job. Broker down: the jobs are safe in
  Postgres, the dispatcher counts the failure and pauses, the sweeper publishes them later.
- **Workers**: ``ariadne-lc worker --graph my_app.agent:build_graph --jobs postgresql://...`` on any
  host (:func:`run_worker`); they load the user's graph on its shared ``PostgresSaver``.
- **Delivery** is at-least-once (:mod:`~ariadne_lc.distributed._app`); the **result** of a job is
  written exactly once, with its terminal state, under the attempt's claim
  (:mod:`~ariadne_lc.distributed._worker`); lost messages are re-published by the **sweeper**
  (:mod:`~ariadne_lc.distributed._sweeper`); the **rate limit and budget** are the fleet's, in
  Postgres (:class:`FleetLimits`).

Why RabbitMQ is the recommended broker (Redis works too, with the settings below):

- *Redelivery is immediate and exact.* RabbitMQ tracks each unacknowledged delivery per consumer
  connection: when a worker dies, its messages are requeued the moment its connection closes. Redis
  has no acknowledgements; Celery emulates them with a ``visibility_timeout`` that must exceed the
  longest audit (so at least ``audit_timeout``, minutes), and a dead worker's audits wait that long.
- *Nothing confirmed is lost.* Durable queues, persistent messages and publisher confirms mean that
  a task the dispatcher counted as published survives a broker restart. Redis keeps messages in
  memory; without persistence (as on these machines) a restart loses every queued task, and only the
  sweeper would bring them back.
- *Operable with standard tools*: ``rabbitmqctl list_queues name messages_ready
  messages_unacknowledged consumers``, the management UI, and Celery's own ``celery inspect`` and
  Flower, which work with both.
"""

from ariadne_lc.distributed._app import (
    DEFAULT_BROKER_URL,
    DEFAULT_QUEUE,
    DEFAULT_RECONNECT_TRIES,
    TASK_NAME,
    broker_kind,
    create_app,
)
from ariadne_lc.distributed._dispatch import BrokerUnavailableError, CeleryDispatcher, DispatchStats, Publisher
from ariadne_lc.distributed._limits import FleetLimits
from ariadne_lc.distributed._liveness import (
    DEFAULT_BEAT_INTERVAL,
    DEFAULT_STALL_AFTER,
    Activity,
    Liveness,
    WorkerHealth,
    fleet_health,
)
from ariadne_lc.distributed._postgres import DispatchLog, open_pool
from ariadne_lc.distributed._preflight import DEFAULT_BROKER_WAIT, check_broker, check_database
from ariadne_lc.distributed._runtime import POOLS, WorkerConfig, load_graph, open_job_store, postgres_saver, run_worker
from ariadne_lc.distributed._sweeper import DEFAULT_GRACE, DEFAULT_REDELIVER_AFTER, DEFAULT_SWEEP_INTERVAL, Sweeper
from ariadne_lc.distributed._worker import METER_NAME, OUTCOMES, AuditWorker, register_audit_task

__all__ = [
    "DEFAULT_BEAT_INTERVAL",
    "DEFAULT_BROKER_URL",
    "DEFAULT_BROKER_WAIT",
    "DEFAULT_GRACE",
    "DEFAULT_QUEUE",
    "DEFAULT_RECONNECT_TRIES",
    "DEFAULT_REDELIVER_AFTER",
    "DEFAULT_STALL_AFTER",
    "DEFAULT_SWEEP_INTERVAL",
    "METER_NAME",
    "OUTCOMES",
    "POOLS",
    "TASK_NAME",
    "Activity",
    "AuditWorker",
    "BrokerUnavailableError",
    "CeleryDispatcher",
    "DispatchLog",
    "DispatchStats",
    "FleetLimits",
    "Liveness",
    "Publisher",
    "Sweeper",
    "WorkerConfig",
    "WorkerHealth",
    "broker_kind",
    "check_broker",
    "check_database",
    "create_app",
    "fleet_health",
    "load_graph",
    "open_job_store",
    "open_pool",
    "postgres_saver",
    "register_audit_task",
    "run_worker",
]
