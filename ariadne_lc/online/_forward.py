"""The online worker's result path: the auditor's sinks, with the result store moved after the commit.

An online audit's results are committed to the job store together with the job's terminal state
(exactly one set per job). The auditor's other sinks (its span, score write-back, any sink of the
user's) run as the audit produces each record, as in a batch audit. A
:class:`~ariadne_lc.audit.ResultStoreSink` is different: writing there during the audit would store
results of attempts that are then retried or superseded. So :func:`split_result_stores` takes the
result stores out of the auditor's sinks, and :class:`ResultForwarder` puts each committed result in
them, under its job store ``result_id`` (``"{job}:{step}:{intervention}"``): one record per result,
whichever attempt produced it, and a second write of it replaces the first.

A store that fails is logged and counted; the job store keeps the result either way. If the process
dies between the commit and the copy, the copy is missing (never doubled): the job store is the
record of truth (``online.jobs.list_results()``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ariadne_lc.audit import ResultStoreSink
from ariadne_lc.online._jobs import Job, stored_result
from ariadne_lc.online._worker import AuditRunner
from ariadne_lc.records import AuditResult
from ariadne_lc.store import ResultStore

__all__ = ["ResultForwarder", "split_result_stores"]

logger = logging.getLogger("ariadne_lc.online")


def split_result_stores(auditor: AuditRunner) -> tuple[AuditRunner, tuple[ResultStore, ...]]:
    """``auditor`` without its result-store sinks, and the stores those sinks wrote to."""
    stores = tuple(s.store for s in auditor.sinks if isinstance(s, ResultStoreSink))
    if not stores:
        return auditor, ()
    return auditor.with_sinks([s for s in auditor.sinks if not isinstance(s, ResultStoreSink)]), stores


class ResultForwarder:
    """Copies each committed job's results into the result stores (on the worker's thread)."""

    def __init__(self, stores: Sequence[ResultStore], *, on_error: Callable[[], None]) -> None:
        self.stores = tuple(stores)
        self.on_error = on_error
        """Called once per failed write (after it was logged), e.g. to count it."""

    def __call__(self, job: Job, results: Sequence[AuditResult]) -> None:
        for store in self.stores:
            for result in results:
                try:
                    store.put_result(stored_result(job.job_id, result))
                except Exception:
                    logger.exception(
                        "ariadne online: copying result %s:%s to %s failed; it stays in the job store",
                        job.job_id,
                        result.intervention_type,
                        type(store).__name__,
                    )
                    self.on_error()
