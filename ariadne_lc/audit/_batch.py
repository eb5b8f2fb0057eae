"""Audits of many traces at once: a thread pool (or a bounded set of tasks), a failed result for a trace that
cannot be audited, and one report with the batch's summary span."""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.audit._config import Interventions
from ariadne_lc.audit._plan import DEFAULT_INTERVENTIONS, StepSelector, intervention_names, units_of
from ariadne_lc.audit._pool import RecordedValues
from ariadne_lc.audit._sinks import AuditSink, FinishedAudit, dispatch
from ariadne_lc.errors import AriadneError, ConfigurationError
from ariadne_lc.otel import AuditSpans
from ariadne_lc.records import AuditReport, AuditResult, ReplayMode
from ariadne_lc.slots import current_slot, pinned
from ariadne_lc.stats import build_report
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from ariadne_lc.replay import Replayer

__all__ = ["BatchAudits"]

logger = logging.getLogger("ariadne_lc.audit")


class BatchAudits:
    """The batch methods of :class:`~ariadne_lc.Auditor` (a base class: the auditor provides what is declared)."""

    spans: AuditSpans
    sinks: tuple[AuditSink, ...]
    confidence: float
    seed: int
    rrr_threshold: float

    @property
    def replayer(self) -> Replayer:
        raise NotImplementedError("the Auditor provides its replayer")

    @property
    def replay_mode(self) -> ReplayMode:
        raise NotImplementedError("the Auditor provides its replay mode")

    def _audit_trace(
        self,
        trace: Trace,
        step: StepSelector | None,
        interventions: Interventions,
        batch: RecordedValues | None = None,
    ) -> Flow[list[AuditResult]]:
        raise NotImplementedError("the Auditor audits one trace")

    def audit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector | None = None,
        interventions: Interventions = DEFAULT_INTERVENTIONS,
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Audit many traces on ``max_concurrency`` threads; every trace appears in the report.

        Each trace's audit runs pinned to a model-server slot of its own (:mod:`ariadne_lc.slots`), its audits in
        step order: a server that keeps a slot's prompt cache serves its replays from the run's prefix.

        A trace that cannot be audited (any error, ours or not, e.g. its checkpointer's database
        closed) is recorded as a failed result with its ``error_type``, and the batch goes on; a trace
        with no step to audit gives a ``not_applicable`` result counted in
        :attr:`~ariadne_lc.records.AuditReport.nothing_to_audit`.
        """
        self._check_batch(interventions, max_concurrency)
        self.replayer.check_sync("audit_batch", "aaudit_batch")
        items = list(traces)
        batch = RecordedValues.from_traces(items)

        free: queue.SimpleQueue[int] = queue.SimpleQueue()  # the model-server slots (ariadne_lc.slots)
        for slot in _slots(max_concurrency):
            free.put(slot)

        def one(t: Trace) -> list[AuditResult]:
            slot = free.get()  # as many slots as threads: one is always free
            try:
                with pinned(slot):
                    return run_sync(self._audit_or_record(t, step, interventions, batch))
            finally:
                free.put(slot)

        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="ariadne-audit") as pool:
            chunks = list(pool.map(one, items))
        return self._report(r for chunk in chunks for r in chunk)

    async def aaudit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector | None = None,
        interventions: Interventions = DEFAULT_INTERVENTIONS,
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Async twin of :meth:`audit_batch` (at most ``max_concurrency`` traces at once)."""
        self._check_batch(interventions, max_concurrency)
        items = list(traces)
        free: asyncio.Queue[int] = asyncio.Queue()  # the model-server slots (ariadne_lc.slots): at most one run each
        for slot in _slots(max_concurrency):
            free.put_nowait(slot)
        batch = RecordedValues.from_traces(items)

        async def one(t: Trace) -> list[AuditResult]:
            slot = await free.get()
            try:
                with pinned(slot):  # this task's own context: the other runs keep theirs
                    return await run_async(self._audit_or_record(t, step, interventions, batch))
            finally:
                free.put_nowait(slot)

        chunks = await asyncio.gather(*(one(t) for t in items))
        return self._report(r for chunk in chunks for r in chunk)

    @staticmethod
    def _check_batch(interventions: Interventions, max_concurrency: int) -> None:
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        intervention_names(interventions)

    def _report(self, results: Iterable[AuditResult]) -> AuditReport:
        report = build_report(results, confidence=self.confidence, seed=self.seed, rrr_threshold=self.rrr_threshold)
        self.spans.summary(report)
        return report

    def _audit_or_record(
        self, trace: Trace, step: StepSelector | None, interventions: Interventions, batch: RecordedValues
    ) -> Flow[list[AuditResult]]:
        """Like :meth:`_audit_trace`, but a trace that cannot be audited gives one failed result.

        Any exception counts, not only ours: one trace's broken checkpointer or a user component's bug
        must not lose the results the batch already has.
        """
        if AuditResult.run_error_of(trace) is not None and not trace.interrupted:
            failed = AuditResult.of_failed_run(trace, replay_mode=self.replay_mode)
            dispatch(self.sinks, FinishedAudit(failed, trace, None))
            return [failed]
        try:
            return (yield from self._audit_trace(trace, step, interventions, batch))
        except Exception as exc:
            if not isinstance(exc, AriadneError):
                logger.warning("ariadne: the audit of trace %s raised", trace.trace_id, exc_info=exc)
            result = AuditResult.unauditable(trace, exc, replay_mode=self.replay_mode, units=units_of(trace))
            dispatch(self.sinks, FinishedAudit(result, trace, None))
            return [result]


def _slots(count: int) -> range:
    """The slots a batch pins its runs to: ``count`` of them from the one its caller is pinned to (0 outside any), so
    that a batch run inside a pinned block (one trace at a time per slot, ``ariadne-lc audit --concurrency``) keeps
    the caller's."""
    first = current_slot() or 0
    return range(first, first + count)
