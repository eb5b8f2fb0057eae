"""Sampled online audits of live traffic: never slow the agent, never lose an acknowledged audit.

Wrap the deployed graph once; a deterministic sample of its finished runs is persisted to a job
store and audited in the background, and the scores flow to the tracing backend as audit spans::

    online = OnlineAuditor(graph, jobs="audits.db", sample_rate=0.05)   # or jobs="postgresql://..."
    online.start()                      # or: await online.astart() in an async app
    graph.invoke(inputs, {"configurable": {"thread_id": "t-2"}, "callbacks": [online.handler]})
    ...
    online.shutdown()

See ``docs/online.md`` for sampling semantics, the queue policy, durability and metrics. The job
stores: :class:`InMemoryJobStore` (the reference), :class:`SQLiteJobStore` (the default) and
:class:`PostgresJobStore` (fleets; the ``postgres`` extra, imported on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ariadne_lc.online._auditor import (
    DEFAULT_AUDIT_TIMEOUT,
    DEFAULT_JOB_STORE_PATH,
    DEFAULT_LEASE,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_BATCH_SIZE,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_QUEUE_SIZE,
    DEFAULT_MAX_RETRY_BACKOFF,
    DEFAULT_PERSIST_INTERVAL,
    DEFAULT_RETRY_BACKOFF,
    DEFAULT_SAMPLE_RATE,
    DEFAULT_TICK_INTERVAL,
    OnlineAuditor,
    ShutdownReport,
)
from ariadne_lc.online._jobs import AuditPlan, Job, JobState, JobStore
from ariadne_lc.online._jobs_memory import InMemoryJobStore
from ariadne_lc.online._jobs_sqlite import SQLiteJobStore
from ariadne_lc.online._metrics import METER_NAME, OnlineStats
from ariadne_lc.online._open import open_job_store
from ariadne_lc.online._persister import Dispatcher
from ariadne_lc.online._sampler import Budget, Decision, RateLimiter, RunFilter, RunInfo, Sampler, sample_point
from ariadne_lc.online._worker import ATTR_ATTEMPT, ATTR_JOB_ID, retryable_error

if TYPE_CHECKING:
    from ariadne_lc.online._jobs_postgres import PostgresJobStore

__all__ = [
    "ATTR_ATTEMPT",
    "ATTR_JOB_ID",
    "DEFAULT_AUDIT_TIMEOUT",
    "DEFAULT_JOB_STORE_PATH",
    "DEFAULT_LEASE",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_BATCH_SIZE",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_QUEUE_SIZE",
    "DEFAULT_MAX_RETRY_BACKOFF",
    "DEFAULT_PERSIST_INTERVAL",
    "DEFAULT_RETRY_BACKOFF",
    "DEFAULT_SAMPLE_RATE",
    "DEFAULT_TICK_INTERVAL",
    "METER_NAME",
    "AuditPlan",
    "Budget",
    "Decision",
    "Dispatcher",
    "InMemoryJobStore",
    "Job",
    "JobState",
    "JobStore",
    "OnlineAuditor",
    "OnlineStats",
    "PostgresJobStore",
    "RateLimiter",
    "RunFilter",
    "RunInfo",
    "SQLiteJobStore",
    "Sampler",
    "ShutdownReport",
    "open_job_store",
    "retryable_error",
    "sample_point",
]


def __getattr__(name: str) -> Any:
    # psycopg is loaded only when a Postgres job store is asked for.
    if name == "PostgresJobStore":
        from ariadne_lc.online._jobs_postgres import PostgresJobStore

        return PostgresJobStore
    raise AttributeError(f"module 'ariadne_lc.online' has no attribute {name!r}")
