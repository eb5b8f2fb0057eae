"""Counters of the online auditor, and their export as OpenTelemetry metrics.

The agent's thread only bumps plain integers (under the auditor's lock). The background persister
turns them into OpenTelemetry measurements once per tick: counter deltas, gauge values. So the hot
path never calls into a metrics SDK, and every instrument is synchronous (observable instruments
registered twice under one name keep only the first callback, which would hide a second auditor).

Instruments (meter ``ariadne_lc.online``; every point carries ``ariadne.online.name``):

- ``ariadne.online.recorded`` {run}: runs the handler saw start;
- ``ariadne.online.filtered`` {run}: runs the filter excluded, or that ended without an answer;
- ``ariadne.online.sampled`` {run}: runs the filter and hash selected (ended with an answer);
- ``ariadne.online.rate_limited`` / ``ariadne.online.over_budget`` {run}: sampled runs skipped;
- ``ariadne.online.dropped`` {run}: sampled runs refused, ``ariadne.online.drop_reason`` =
  ``queue_full`` or ``shut_down``;
- ``ariadne.online.persisted`` {job}: jobs committed to the job store (acknowledged);
- ``ariadne.online.dispatched`` {job}: committed jobs handed to the dispatcher (a broker);
- ``ariadne.online.dispatch_errors`` {call}: dispatcher calls that raised (their jobs stay pending);
- ``ariadne.online.undispatched`` {job}: jobs whose dispatch failed and that were not kept to be
  offered again (the retry list was full): only ``claim``-polling workers will find them;
- ``ariadne.online.audited`` / ``ariadne.online.failed`` {job}: jobs this process finished;
- ``ariadne.online.retried`` {job}: attempts that failed and were scheduled again;
- ``ariadne.online.model_calls`` {call}: model calls spent by this process's audits;
- ``ariadne.online.queue.depth`` {job}, gauge: unfinished jobs (buffer + job store backlog);
- ``ariadne.online.queue.unpersisted`` {job}, gauge: accepted jobs not yet committed;
- ``ariadne.online.audit.duration`` s, histogram per attempt, ``ariadne.online.outcome`` =
  ``done``, ``retry`` or ``failed``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Final

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider

__all__ = ["ATTR_DROP_REASON", "ATTR_NAME", "ATTR_OUTCOME", "METER_NAME", "OnlineStats"]

METER_NAME: Final = "ariadne_lc.online"
ATTR_NAME: Final = "ariadne.online.name"
ATTR_DROP_REASON: Final = "ariadne.online.drop_reason"
ATTR_OUTCOME: Final = "ariadne.online.outcome"
_DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


@dataclass(slots=True)
class OnlineStats:
    """What the online auditor did, counted since it was created.

    ``sampled == rate_limited + over_budget + dropped + refused + accepted`` at every moment.
    """

    recorded: int = 0
    """Runs seen (at their start), sampled or not, plus traces given to ``offer``."""
    filtered: int = 0
    """Runs the :class:`RunFilter` excluded, or that ended without an answer (error, interrupt)."""
    sampled: int = 0
    """Runs the filter and the hash sample selected that ended with an answer."""
    rate_limited: int = 0
    """Sampled runs skipped because the rate limit had no token."""
    over_budget: int = 0
    """Sampled runs skipped because the model-call budget was spent."""
    dropped: int = 0
    """Sampled runs refused because the queue was full (newest dropped; see the docs)."""
    refused: int = 0
    """Sampled runs refused because the auditor was shut down."""
    accepted: int = 0
    """Sampled runs queued in memory for persistence."""
    persisted: int = 0
    """Jobs committed to the job store (acknowledged)."""
    audited: int = 0
    """Jobs this process finished as done."""
    failed: int = 0
    """Jobs this process finished as failed (after retries, or not retryable)."""
    retried: int = 0
    """Attempts that failed and were scheduled again."""
    superseded: int = 0
    """Attempts whose results were discarded because their claim had been lost (lease expired)."""
    dispatched: int = 0
    """Committed jobs handed to the dispatcher."""
    dispatch_errors: int = 0
    """Dispatcher calls that raised; their jobs stay pending in the store and are offered again."""
    undispatched: int = 0
    """Jobs whose dispatch failed and that were not kept to be offered again (the list was full)."""
    model_calls: int = 0
    """Model calls spent by this process's audits."""
    errors: int = 0
    """Exceptions inside the auditor's own machinery (each was logged)."""
    max_queue_depth: int = 0
    """The highest queue depth seen when a run was accepted."""


_COUNTERS: Final = (
    ("recorded", "{run}", "Agent runs seen by the online auditor"),
    ("filtered", "{run}", "Runs excluded by the run filter, or that ended without an answer"),
    ("sampled", "{run}", "Runs selected by the filter and the hash sample"),
    ("rate_limited", "{run}", "Sampled runs skipped by the audits-per-minute rate limit"),
    ("over_budget", "{run}", "Sampled runs skipped by the model-calls-per-hour budget"),
    ("persisted", "{job}", "Audit jobs committed to the job store"),
    ("dispatched", "{job}", "Committed audit jobs handed to the dispatcher"),
    ("dispatch_errors", "{call}", "Dispatcher calls that raised (their jobs stay pending)"),
    ("undispatched", "{job}", "Jobs whose failed dispatch will not be offered again"),
    ("audited", "{job}", "Audit jobs finished as done"),
    ("failed", "{job}", "Audit jobs finished as failed"),
    ("retried", "{job}", "Audit attempts that failed and were scheduled again"),
    ("model_calls", "{call}", "Model calls spent by audits"),
)


class MetricsExporter:
    """Turns :class:`OnlineStats` snapshots into OpenTelemetry measurements (called from one thread)."""

    def __init__(self, meter_provider: MeterProvider | None, name: str, version: str) -> None:
        meter = metrics.get_meter(METER_NAME, version, meter_provider)
        self._attrs = {ATTR_NAME: name}
        self._counters = {
            field: meter.create_counter(f"ariadne.online.{field}", unit=unit, description=text)
            for field, unit, text in _COUNTERS
        }
        self._dropped = meter.create_counter(
            "ariadne.online.dropped", unit="{run}", description="Sampled runs refused (queue full or shut down)"
        )
        self._depth = meter.create_gauge(
            "ariadne.online.queue.depth", unit="{job}", description="Unfinished audit jobs (buffer + job store)"
        )
        self._unpersisted = meter.create_gauge(
            "ariadne.online.queue.unpersisted", unit="{job}", description="Accepted jobs not yet committed"
        )
        self._duration = meter.create_histogram(
            "ariadne.online.audit.duration",
            unit="s",
            description="Duration of one audit attempt",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self._last: dict[str, int] = {}

    def export(self, stats: OnlineStats, *, depth: int, unpersisted: int) -> None:
        """Add what changed since the last call and set the gauges."""
        values = asdict(stats)
        for field, counter in self._counters.items():
            delta = values[field] - self._last.get(field, 0)
            if delta:
                counter.add(delta, self._attrs)
        for field, reason in (("dropped", "queue_full"), ("refused", "shut_down")):
            delta = values[field] - self._last.get(field, 0)
            if delta:
                self._dropped.add(delta, {**self._attrs, ATTR_DROP_REASON: reason})
        self._last = values
        self._depth.set(depth, self._attrs)
        self._unpersisted.set(unpersisted, self._attrs)

    def audit_duration(self, seconds: float, outcome: str) -> None:
        """Record one attempt's duration."""
        self._duration.record(seconds, {**self._attrs, ATTR_OUTCOME: outcome})
