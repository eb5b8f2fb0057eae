"""How an online audit attempt ends: done, retry, failed or superseded, and which errors a retry may fix.

An attempt ends one of four ways. *Done*: the results and the ``done`` state are committed together.
*Retry*: the audit timed out, or a result failed with an error a retry may fix (the replayed graph or
the critic's model raised, a timeout, a connection error, the checkpointer's database
dropping its connection; see :func:`retryable_error`) — the job goes
back to ``pending`` after an exponential backoff with jitter (:func:`backoff_delay`). *Failed*: the trace cannot be
audited (a :class:`~ariadne_lc.errors.TraceError`, bad configuration, or every result failed for a reason a retry
cannot fix: a missing checkpoint, or an error of a type this package does not know, such as the
checkpointer's ``sqlite3.ProgrammingError`` on a closed database, which the auditor records in the
result with its type) or the attempts are used up — the error is stored, with the failed results or one
that records it (:func:`failed_result`). *Superseded*: the claim was lost (the lease expired and another worker took
the job) — the results are discarded. The workers (:mod:`ariadne_lc.online._worker`) and the Celery tasks
(:mod:`ariadne_lc.distributed`) decide with the same functions.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ariadne_lc.audit._plan import units_of
from ariadne_lc.errors import (
    ConfigurationError,
    CriticError,
    NoCheckpointerError,
    NotReplayableError,
    ReplayDidNotFinishError,
    ReplayError,
    ServerUnavailableError,
    ThreadNotFoundError,
    TraceError,
    error_class,
)
from ariadne_lc.online._jobs import Job
from ariadne_lc.records import AuditResult, ReplayMode
from ariadne_lc.trace import Trace

__all__ = [
    "Outcome",
    "OutcomeKind",
    "backoff_delay",
    "failed_result",
    "retryable_error",
    "retryable_type",
]

_RETRYABLE: tuple[type[BaseException], ...] = (
    ReplayError,
    CriticError,
    TimeoutError,
    ConnectionError,
    ServerUnavailableError,
)
# A deleted server thread (remote audits) is as final as a pruned history.
_FINAL: tuple[type[BaseException], ...] = (
    NoCheckpointerError,
    NotReplayableError,
    ReplayDidNotFinishError,
    TraceError,
    ThreadNotFoundError,
)
_FINAL_RAISED: tuple[type[BaseException], ...] = (ConfigurationError, *_FINAL)
OutcomeKind = Literal["done", "retry", "failed", "superseded"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one attempt ended (handed to the auditor's bookkeeping)."""

    job: Job
    kind: OutcomeKind
    model_calls: int
    duration_s: float
    error: str | None


def retryable_error(results: Sequence[AuditResult]) -> str | None:
    """The error of the first failed result that a retry may fix, else ``None``; decided by the
    result's :attr:`~ariadne_lc.records.AuditResult.error_type`, never by its message.

    Retryable: a :class:`~ariadne_lc.errors.ReplayError` (the replayed graph raised: a model or
    network error) or a :class:`~ariadne_lc.errors.CriticError` (the critic's model failed), and
    timeouts and connection errors, and a LangGraph Server that does not answer
    (:class:`~ariadne_lc.errors.ServerUnavailableError`). Final, as a retry would fail the same way: the
    replay errors that describe the history (:class:`~ariadne_lc.errors.NoCheckpointerError`,
    :class:`~ariadne_lc.errors.NotReplayableError` and so a graph mismatch,
    :class:`~ariadne_lc.errors.ReplayDidNotFinishError`), trace errors, a deleted server thread
    (:class:`~ariadne_lc.errors.ThreadNotFoundError`), and any type this package does not know, except the
    database drivers' ``OperationalError`` and psycopg's subclasses of it (the checkpointer's connection
    dropped or its server restarted: retryable). An audit that *raises* one of the final errors fails its job at
    once as well.
    """
    for result in results:
        if result.status == "failed" and retryable_type(result.error_type):
            return result.error or result.error_type
    return None


def retryable_type(error_type: str | None) -> bool:
    """Whether an error of the class named ``error_type`` may go away on a retry (see :func:`retryable_error`)."""
    cls = error_class(error_type)
    if cls is None:
        return _transient_database_error(error_type or "")
    if issubclass(cls, _FINAL):
        return False
    return issubclass(cls, _RETRYABLE)


def _transient_database_error(name: str) -> bool:
    """A checkpointer's database that failed for now: PEP 249's ``OperationalError`` (a dropped connection, a
    locked SQLite file, a server restarting) and psycopg's subclasses of it (``AdminShutdown`` after a restart,
    ``SerializationFailure``, ``DeadlockDetected``). A retry costs a few attempts at most where the cause is
    permanent (a missing table); failing at once would lose every audit of a database restart."""
    if name == "OperationalError":
        return True
    psycopg = sys.modules.get("psycopg")  # loaded where a PostgresSaver is used
    if psycopg is None:
        return False
    cls = getattr(psycopg.errors, name, None)
    return isinstance(cls, type) and issubclass(cls, psycopg.OperationalError)


def failed_result(
    trace: Trace, error: str, error_type: str | None = None, *, replay_mode: ReplayMode = "recorded"
) -> AuditResult:
    """A result that records why a trace could not be audited at all (``error_type``: the class name;
    ``replay_mode``: the auditor's)."""
    return AuditResult.unauditable(trace, error, error_type=error_type, replay_mode=replay_mode, units=units_of(trace))


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry number ``attempt`` (from 1): ``base * 2**(attempt-1)`` capped at ``cap``,
    with "equal jitter" (between half and all of it) so that failed jobs do not retry in lockstep."""
    full = min(cap, base * 2.0 ** max(0, attempt - 1))
    return full / 2 + rng.random() * full / 2
