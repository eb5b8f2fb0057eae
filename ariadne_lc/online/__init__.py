"""Sampled online audits of live traffic: never slow the agent, never lose an acknowledged audit.

Wrap the deployed graph once; a deterministic sample of its finished runs is persisted to a job
store and audited in the background, and the scores flow to the tracing backend as audit spans::

    online = OnlineAuditor(graph, jobs="audits.db", sample_rate=0.05)
    online.start()                      # or: await online.astart() in an async app
    graph.invoke(inputs, {"configurable": {"thread_id": "t-2"}, "callbacks": [online.handler]})
    ...
    online.shutdown()

See ``docs/online.md`` for sampling semantics, the queue policy, durability and metrics.
"""

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
from ariadne_lc.online._jobs import Job, JobState, JobStore, SQLiteJobStore
from ariadne_lc.online._metrics import METER_NAME, OnlineStats
from ariadne_lc.online._sampler import Budget, Decision, RateLimiter, RunFilter, RunInfo, Sampler, sample_point
from ariadne_lc.online._worker import ATTR_ATTEMPT, ATTR_JOB_ID, retryable_error

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
    "Budget",
    "Decision",
    "Job",
    "JobState",
    "JobStore",
    "OnlineAuditor",
    "OnlineStats",
    "RateLimiter",
    "RunFilter",
    "RunInfo",
    "SQLiteJobStore",
    "Sampler",
    "ShutdownReport",
    "retryable_error",
    "sample_point",
]
