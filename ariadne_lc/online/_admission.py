"""Admission: what the online auditor does on the agent's thread, and the queue it fills.

The recorder calls :meth:`Admission.head` when a root run starts (filter and hash: a run outside
the sample is never even recorded) and :meth:`Admission.on_run_end` when a sampled run ends
(budget, rate limit, queue bound, then an append to an in-memory deque). Both run on the agent's
thread or event loop, so both are O(1): no I/O, no OpenTelemetry call, no waiting for an audit,
and never a raise into the agent (every hook is guarded; an error is logged and counted). The
persister thread (:mod:`ariadne_lc.online._persister`) takes batches from the other end.

One lock guards the deque, the queue counts and the :class:`OnlineStats` counters, so that the
queue bound is exact for this process: depth = buffered + being persisted + unfinished in the store.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ariadne_lc.online._metrics import OnlineStats
from ariadne_lc.online._sampler import Budget, Decision, RateLimiter, RunInfo, Sampler
from ariadne_lc.recorder import FinishedRun
from ariadne_lc.trace import Trace

__all__ = ["Admission"]

logger = logging.getLogger("ariadne_lc.online")

Queued = Trace | FinishedRun


class Admission:
    """The hot path and the bounded queue between it and the persister."""

    def __init__(
        self,
        *,
        sampler: Sampler,
        limiter: RateLimiter | None,
        budget: Budget | None,
        cost_of: Callable[[int], int] | None = None,
        max_queue_size: int,
        max_batch_size: int,
        wake: threading.Event,
    ) -> None:
        self.sampler = sampler
        self.limiter = limiter
        self.budget = budget
        self.cost_of = cost_of
        """The plan's model calls at most on a run of so many model calls, read off a built trace's steps or the model
        calls the recorder saw in a run whose trace is built later (a run with none seen: the running mean)."""
        self.max_queue_size = max_queue_size
        self.max_batch_size = max_batch_size
        self.stats = OnlineStats()
        self.lock = threading.Lock()
        """Guards everything below and :attr:`stats`."""
        self.buffer: deque[Queued] = deque()
        self.persisting = 0
        """Items taken by the persister and not committed yet."""
        self.backlog = 0
        """Unfinished jobs in the store, as of the last count (plus what was added and finished since)."""
        self.closed = False
        self.unwarned_drops = 0
        self._wake = wake

    # -- the agent's thread ------------------------------------------------------------------------

    def head(self, trace_id: str, agent_name: str | None, tags: tuple[str, ...], metadata: Mapping[str, Any]) -> bool:
        """At a root run's start: record it at all? (filter and hash)"""
        try:
            with self.lock:
                self.stats.recorded += 1
            if self.sampler.run_filter is None:  # the common case, without building a RunInfo
                return self.sampler.sampled(trace_id)
            return self._decide(RunInfo(trace_id, agent_name, tags, metadata))
        except Exception:
            self.error("sampling")
            return False

    def on_run_end(self, run: FinishedRun) -> None:
        """At a sampled run's end: queue it; its trace is built later, by the persister."""
        try:
            if self._auditable(not run.failed):
                self._admit(run)
        except Exception:
            self.error("queueing")

    def on_trace(self, trace: Trace) -> None:
        """A sampled run's trace, built by the recorder (with a trace store: a resumed turn arrives here joined
        to its paused half, which may have run on another replica)."""
        try:
            if self._auditable(trace.final_answer is not None):
                self._admit(trace)
        except Exception:
            self.error("queueing")

    def offer(self, trace: Trace) -> None:
        """A finished, recorded trace from elsewhere: the same rules as the two hooks together."""
        try:
            with self.lock:
                self.stats.recorded += 1
            if self._decide(RunInfo.of(trace)) and self._auditable(trace.final_answer is not None):
                self._admit(trace)
        except Exception:
            self.error("offer")

    def _decide(self, run: RunInfo) -> bool:
        decision = self.sampler.decide(run)
        if decision is Decision.FILTERED:
            with self.lock:
                self.stats.filtered += 1
        return decision is Decision.SAMPLED

    def _auditable(self, answered: bool) -> bool:
        # A run that raised or stopped at an interrupt has no final answer to audit.
        if not answered:
            with self.lock:
                self.stats.filtered += 1
        return answered

    def _admit(self, item: Queued) -> None:
        with self.lock:
            stats = self.stats
            stats.sampled += 1
            if self.closed:
                stats.refused += 1
                return
            depth = len(self.buffer) + self.persisting + self.backlog
            calls = len(item.steps) if isinstance(item, Trace) else item.model_calls
            cost = None if self.cost_of is None or not calls else self.cost_of(calls)
            if self.budget is not None and self.budget.exhausted(depth, cost):
                stats.over_budget += 1
                return
            if self.limiter is not None and not self.limiter.try_acquire():
                stats.rate_limited += 1
                return
            if depth >= self.max_queue_size:
                stats.dropped += 1
                self.unwarned_drops += 1
                if self.limiter is not None:
                    self.limiter.refund()
                return
            self.buffer.append(item)
            stats.accepted += 1
            stats.max_queue_depth = max(stats.max_queue_depth, depth + 1)
            wake = len(self.buffer) == self.max_batch_size
        if wake:
            self._wake.set()

    # -- any thread --------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Unfinished jobs: accepted in memory plus pending or running in the job store."""
        with self.lock:
            return len(self.buffer) + self.persisting + self.backlog

    @property
    def unpersisted(self) -> int:
        """Accepted jobs not committed yet (what a crash right now would lose)."""
        with self.lock:
            return len(self.buffer) + self.persisting

    def error(self, where: str) -> None:
        """Log the exception being handled and count it; the agent is never told."""
        with self.lock:
            self.stats.errors += 1
        logger.exception("ariadne online: %s failed; the agent is not affected", where)

    def count_error(self) -> None:
        """Count an error that was already logged where it happened."""
        with self.lock:
            self.stats.errors += 1

    def close(self) -> None:
        """Refuse new runs from now on (they are counted as ``refused``)."""
        with self.lock:
            self.closed = True

    # -- the persister's side ----------------------------------------------------------------------

    def take_batch(self) -> list[Queued]:
        """Up to ``max_batch_size`` queued items, oldest first; they count as being persisted."""
        with self.lock:
            batch = [self.buffer.popleft() for _ in range(min(len(self.buffer), self.max_batch_size))]
            self.persisting = len(batch)
        return batch

    def committed(self, added: int, persisted: int) -> None:
        """The batch taken last is in the store: ``added`` new jobs out of ``persisted`` traces."""
        with self.lock:
            self.persisting = 0
            self.backlog += added
            self.stats.persisted += persisted

    def requeue(self, items: Sequence[Queued]) -> None:
        """The batch taken last could not be committed: put it back in front, in order."""
        with self.lock:
            self.buffer.extendleft(reversed(items))
            self.persisting = 0
            self.stats.errors += 1

    def finished(self) -> None:
        """This process finished a job (done or failed)."""
        with self.lock:
            self.backlog -= 1
