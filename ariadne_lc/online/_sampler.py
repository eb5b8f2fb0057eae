"""Which finished runs get audited: a deterministic hash sample, filters, a rate limit and a budget.

The decision runs on the agent's thread, so every piece here is O(1), allocation-light and pure
or lock-guarded. Filter and hash run when a run *starts* (on :class:`RunInfo`: id, agent, tags,
metadata), so a run outside the sample is never even recorded. The hash sample is *eligibility*: the
same trace id always gets the same answer (``blake2b`` of the id, read as a uniform number in [0, 1),
compared with the rate). The rate limit and the budget then thin eligible runs, when they end, in
arrival order; they skip (and count), they never defer, so a burst cannot build a backlog behind them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import Enum
from hashlib import blake2b
from typing import Any

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.trace import Trace

__all__ = ["Budget", "Decision", "RateLimiter", "RunFilter", "RunInfo", "Sampler", "sample_point"]

_SCALE = 1 << 64


def sample_point(trace_id: str) -> float:
    """Where ``trace_id`` falls in [0, 1): the first 64 bits of its BLAKE2b digest over 2**64."""
    return int.from_bytes(blake2b(trace_id.encode(), digest_size=8).digest(), "big") / _SCALE


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What is known of a run when it starts: enough to filter and sample it."""

    trace_id: str
    """The root run id (the trace id its trace will have)."""
    agent_name: str | None = None
    """``gen_ai.agent.name`` from the run metadata, or the graph's name."""
    tags: tuple[str, ...] = ()
    """The run's tags."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """The run's metadata (``config["metadata"]``, e.g. user or environment, and LangGraph's keys)."""

    @classmethod
    def of(cls, trace: Trace) -> RunInfo:
        """The run info of a recorded trace."""
        return cls(trace.trace_id, trace.agent_name, trace.tags, trace.metadata)


def _frozen(values: Collection[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return frozenset((values,))
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs are eligible for auditing at all; every condition given must hold.

    Examples:
        >>> only = RunFilter(agent_names={"support-bot"}, metadata={"environment": "production"})
        >>> internal = RunFilter(exclude_metadata={"user_id": {"qa-1", "qa-2"}})
    """

    agent_names: Collection[str] | None = None
    """Only runs of these agents (the trace's ``agent_name``)."""
    tags: Collection[str] | None = None
    """Only runs carrying at least one of these tags."""
    exclude_tags: Collection[str] = ()
    """Never runs carrying any of these tags."""
    metadata: Mapping[str, object] = field(default_factory=dict)
    """Only runs whose metadata has each key with this value (a set, list or tuple means "one of")."""
    exclude_metadata: Mapping[str, object] = field(default_factory=dict)
    """Never runs whose metadata has one of these keys with this value (or one of these values)."""
    predicate: Callable[[RunInfo], bool] | None = None
    """A last custom test; it runs on the agent's thread, so keep it quick (a raise counts as "no")."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent_names", _frozen(self.agent_names))
        object.__setattr__(self, "tags", _frozen(self.tags))
        object.__setattr__(self, "exclude_tags", _frozen(self.exclude_tags) or frozenset())

    def matches(self, run: RunInfo) -> bool:
        """Whether ``run`` passes every condition."""
        if self.agent_names is not None and run.agent_name not in self.agent_names:
            return False
        if self.tags is not None and not any(t in self.tags for t in run.tags):
            return False
        if self.exclude_tags and any(t in self.exclude_tags for t in run.tags):
            return False
        meta = run.metadata
        for key, wanted in self.metadata.items():
            if key not in meta or not _equals(meta[key], wanted):
                return False
        for key, unwanted in self.exclude_metadata.items():
            if key in meta and _equals(meta[key], unwanted):
                return False
        return self.predicate is None or bool(self.predicate(run))


def _equals(value: object, wanted: object) -> bool:
    if isinstance(wanted, set | frozenset | list | tuple):
        return value in wanted
    return value == wanted


class Decision(Enum):
    """The sampler's verdict on one run."""

    FILTERED = "filtered"
    """The run does not match the filter."""
    NOT_SAMPLED = "not_sampled"
    """The hash put the run outside the sample."""
    SAMPLED = "sampled"
    """The run is in the sample."""


class Sampler:
    """The deterministic part of the decision: filter, then hash.

    Args:
        rate: Fraction of matching runs to sample, in [0, 1].
        run_filter: Which runs are eligible; ``None`` means all.

    The number sampled out of ``n`` eligible runs is Binomial(n, rate) when trace ids are distinct
    (a cryptographic hash of distinct ids is as good as independent coin flips): the observed
    fraction is within ``3 * sqrt(rate * (1 - rate) / n)`` of ``rate`` with probability 99.7%
    (±0.65 points for 10,000 runs at 5%).
    """

    def __init__(self, rate: float, run_filter: RunFilter | None = None) -> None:
        if not (isinstance(rate, int | float) and 0.0 <= rate <= 1.0) or isinstance(rate, bool):
            raise ConfigurationError(f"sample_rate must be a number in [0, 1], got {rate!r}")
        self.rate = float(rate)
        self.run_filter = run_filter
        self._threshold = round(self.rate * _SCALE)

    def decide(self, run: RunInfo) -> Decision:
        """The verdict for ``run``; never raises (a failing filter predicate means "filtered")."""
        if self.run_filter is not None:
            try:
                if not self.run_filter.matches(run):
                    return Decision.FILTERED
            except Exception:
                return Decision.FILTERED
        return Decision.SAMPLED if self.sampled(run.trace_id) else Decision.NOT_SAMPLED

    def sampled(self, trace_id: str) -> bool:
        """The hash decision alone: whether ``trace_id`` falls inside the sample."""
        if self._threshold >= _SCALE:
            return True
        if self._threshold <= 0:
            return False
        return int.from_bytes(blake2b(trace_id.encode(), digest_size=8).digest(), "big") < self._threshold


class RateLimiter:
    """A token bucket: ``per_minute`` audits a minute on average, bursts of up to ``burst``.

    Alone it limits one process. Fed the fleet's count (:meth:`observe_fleet`, from
    :meth:`JobStore.added_since <ariadne_lc.online.JobStore.added_since>` over the last minute, as
    the persister does every tick) it also holds the limit across every process sharing the job
    store: a token is only given while the fleet's jobs of the last minute, plus those this process
    accepted since that count, stay under ``per_minute``.

    Args:
        per_minute: Refill rate, audits per minute (> 0).
        burst: Bucket capacity; default a tenth of a minute's worth, at least 1.
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(self, per_minute: float, *, burst: float | None = None, clock: Callable[[], float]) -> None:
        if not per_minute > 0 or math.isinf(per_minute):
            raise ConfigurationError(f"max_audits_per_minute must be a positive number, got {per_minute!r}")
        capacity = max(1.0, per_minute / 10) if burst is None else burst
        if capacity < 1:
            raise ConfigurationError(f"the rate limit's burst must be at least 1, got {burst!r}")
        self.per_minute = float(per_minute)
        self.per_second = per_minute / 60.0
        self.capacity = float(capacity)
        self._clock = clock
        self._tokens = self.capacity
        self._at = clock()
        self._fleet: int | None = None
        self._since_fleet = 0
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        """Take a token if one is there."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.per_second)
            self._at = now
            if self._fleet is not None and self._fleet + self._since_fleet + 1 > self.per_minute:
                return False
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                self._since_fleet += 1
                return True
            return False

    def refund(self) -> None:
        """Give back a token taken for a run that was then dropped."""
        with self._lock:
            self._tokens = min(self.capacity, self._tokens + 1.0)
            self._since_fleet = max(0, self._since_fleet - 1)

    def observe_fleet(self, added_last_minute: int) -> None:
        """Jobs created in the last minute by every process sharing the job store (this one's
        committed jobs included), plus this process's accepted jobs not committed yet: from now on the
        fleet-wide count bounds the tokens too. The caller must keep :meth:`try_acquire` from running
        between taking that count and this call (the persister holds the admission lock), or the
        jobs accepted in between are counted by neither."""
        with self._lock:
            self._fleet = max(0, int(added_last_minute))
            self._since_fleet = 0


class Budget:
    """Model calls an hour that audits may spend, checked before a run is accepted.

    Spent calls come from :attr:`AuditResult.model_calls <ariadne_lc.AuditResult.model_calls>` of
    audits finished in the last hour: :meth:`refresh` sets them from the job store (so audits done by
    other processes on the same store count too), :meth:`record` adds this process's as they finish.
    Accepted jobs not yet finished are reserved at the running mean of calls per job, so a burst
    cannot overshoot the budget by the whole backlog. The budget owns its numbers and their lock:
    every method may be called from any thread.

    Args:
        per_hour: Model calls an hour (> 0).
        initial_estimate: Calls per job assumed before any job has finished.
    """

    def __init__(self, per_hour: int, *, initial_estimate: float) -> None:
        if isinstance(per_hour, bool) or not isinstance(per_hour, int) or per_hour < 1:
            raise ConfigurationError(f"max_model_calls_per_hour must be a positive int, got {per_hour!r}")
        self.per_hour = per_hour
        self._spent = 0
        self._calls = 0
        self._jobs = 0
        self._initial = max(0.0, initial_estimate)
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        """Calls spent in the last hour, as of the last refresh plus those recorded since."""
        with self._lock:
            return self._spent

    @property
    def estimate(self) -> float:
        """Expected model calls of one job."""
        with self._lock:
            return self._estimate()

    def _estimate(self) -> float:
        return self._calls / self._jobs if self._jobs else self._initial

    def refresh(self, spent_last_hour: int) -> None:
        """Set the calls spent in the last hour (counted by the job store, fleet-wide)."""
        with self._lock:
            self._spent = max(0, int(spent_last_hour))

    def record(self, calls: int, *, finished: bool = True) -> None:
        """Count an attempt's calls as spent; a ``finished`` job also teaches the per-job estimate
        (an attempt whose results were discarded spent its calls but says nothing about a job)."""
        with self._lock:
            self._spent += calls
            if finished:
                self._calls += calls
                self._jobs += 1

    def exhausted(self, outstanding: int, cost: float | None = None) -> bool:
        """Whether accepting one more job could exceed the budget: ``cost`` is what the plan spends on it at most
        (:func:`~ariadne_lc.audit._budget.cost_bound`, when its length is known), and it is also what each job still
        outstanding is reserved at until one has finished."""
        with self._lock:
            mine = self._estimate() if cost is None else cost
            each = self._calls / self._jobs if self._jobs else mine
            return self._spent + outstanding * each + mine > self.per_hour
