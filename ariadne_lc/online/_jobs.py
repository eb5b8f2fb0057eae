"""The job store protocol behind online audits: one job per sampled trace, results beside it.

A job moves ``pending -> running -> done | failed``; a failed attempt that may succeed later goes
back to ``pending`` with a later ``next_attempt_at``. Every move is one transaction:

- :meth:`~JobStore.claim` takes the oldest due job (or a ``running`` one whose lease expired: its
  worker is presumed dead), counts the attempt and hands out a fresh *claim token*;
  :meth:`~JobStore.claim_job` does the same for one named job (a task delivered by a broker);
- :meth:`~JobStore.complete` / :meth:`~JobStore.fail` write the results and the terminal state
  together, and only if the job is still ``running`` under that claim token, so an attempt that
  lost its claim can never store a second set of results;
- :meth:`~JobStore.heartbeat` extends the leases of a live worker's attempts,
  :meth:`~JobStore.release` hands them back at shutdown, and :meth:`~JobStore.reclaim` frees the
  jobs of a worker process that is known to be dead.

Results are keyed by (job id, step, intervention; then the link when it is not ``thought->answer``) and
carry a deterministic ``result_id``, so a copy forwarded elsewhere stays idempotent. Backends, each passing
one conformance suite (``tests/online/test_jobs.py``): :class:`~ariadne_lc.online.InMemoryJobStore` (the reference),
:class:`~ariadne_lc.online.SQLiteJobStore` (the default: one machine, several processes) and
:class:`~ariadne_lc.online.PostgresJobStore` (many machines; the ``postgres`` extra).
:func:`~ariadne_lc.online.open_job_store` turns a path or a URI into one of them.

Times are epoch seconds from the clock of the process that calls (``time.time()``): processes
sharing a store on several hosts need synchronised clocks (NTP), as leases compare them.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ariadne_lc.links import THOUGHT_ANSWER
from ariadne_lc.records import AuditResult, Link
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from ariadne_lc.audit import StepSelector

__all__ = [
    "AuditPlan",
    "Job",
    "JobState",
    "JobStore",
    "new_owner",
    "owner_alive",
    "result_key",
    "stored_result",
]


class JobState(StrEnum):
    """Where a job is in its life."""

    PENDING = "pending"
    """Persisted, waiting for a worker (new, retrying after backoff, or released)."""
    RUNNING = "running"
    """Claimed by a worker that holds a lease on it."""
    DONE = "done"
    """Audited; its results are stored."""
    FAILED = "failed"
    """Given up; its error (and the failed results, if any) are stored."""


@dataclass(frozen=True, slots=True)
class AuditPlan:
    """What the audit of a job does, decided where the run was sampled and stored with the job.

    A fleet's workers may be started with other ``--step``/``--interventions`` than the serving
    side's ``OnlineAuditor(step=..., interventions=...)``, or older ones: the job's plan wins, so a
    job is audited as the side that sampled it asked, whoever claims it.
    """

    step: StepSelector | None
    """Which step(s) to intervene on (see :meth:`Auditor.audit <ariadne_lc.Auditor.audit>`; ``None``: every unit)."""
    interventions: tuple[str, ...]
    """The intervention types, in order."""
    links: tuple[Link, ...] | None = None
    """The links to audit, when the sampling side named them (``OnlineAuditor(links=...)``); ``None``: every link
    the auditing side's auditor audits."""

    def to_json(self) -> str:
        """The plan as the job stores keep it (``links`` only when named: a plan without them reads as before)."""
        step: Any = self.step if self.step is None or isinstance(self.step, int | str) else [int(i) for i in self.step]
        data: dict[str, Any] = {"step": step, "interventions": list(self.interventions)}
        if self.links is not None:
            data["links"] = list(self.links)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str | None) -> AuditPlan | None:
        """The plan of a stored job (``None`` for a job stored without one)."""
        if not text:
            return None
        data = json.loads(text)
        step, links = data["step"], data.get("links")
        return cls(
            step=tuple(step) if isinstance(step, list) else step,
            interventions=tuple(data["interventions"]),
            links=None if links is None else tuple(links),
        )


@dataclass(frozen=True, slots=True)
class Job:
    """One sampled trace to audit."""

    job_id: str
    """The trace id (one job per trace: a trace offered twice is still one job)."""
    trace: Trace
    """The recorded run."""
    state: JobState
    """The state when this record was read."""
    attempts: int
    """Attempts started so far, including the current one when ``running``."""
    claim: str | None
    """The token of the current attempt; finishing the job requires it."""
    owner: str | None
    """The worker that holds (or last held) the job."""
    sample_rate: float | None
    """The rate the job was sampled at (put on its audit spans)."""
    error: str | None
    """The last attempt's error."""
    seq: int
    """Insertion order."""
    created_at: float
    """When the job was persisted (epoch seconds)."""
    next_attempt_at: float
    """When a pending job becomes due (epoch seconds); later than now while it backs off."""
    plan: AuditPlan | None = None
    """What its audit does, as the side that sampled it asked (``None``: stored without one; the
    worker's own settings apply)."""


def new_owner() -> str:
    """A worker identity ``host:pid:random``, so that a restarted process can tell its dead predecessor."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_alive(owner: str) -> bool:
    """Whether the worker ``owner`` may still be running. ``False`` only when it certainly is not: same
    host and no process with that pid. Workers on other hosts are left to their lease."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. a process of another user
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited but is not yet reaped by its parent (Linux; elsewhere ``False``): a
    SIGKILLed worker whose supervisor has not called ``wait`` yet still answers ``kill(pid, 0)``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # "pid (comm) state ...": comm may hold spaces and parentheses, so split after the last ')'.
            return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except OSError:
        return False


def result_key(result: AuditResult) -> str:
    """The key of a result within its job: its :attr:`~ariadne_lc.records.AuditResult.plan_key`; for a result from
    before plan keys, step and intervention, then the link when it is not ``thought->answer``
    (one edit is audited on several links) and, on ``observation->answer``, the tool call whose output changed (one
    output at a time) and which other value it was given when there are several. A ``thought->answer`` result keeps
    the key it had before links."""
    if result.plan_key is not None:  # the planned audit's own identity; a split run's results name their run
        run = result.trace_id.partition("~")[2]
        return f"{run}~{result.plan_key}" if run else result.plan_key
    kind = result.intervention_type
    if result.type_selection == "decisive":  # resolved per run: the key names the selector and which one it is
        kind = "decisive" if not result.variant else f"decisive{result.variant}"
    key = f"{result.step_index}:{kind}"
    if result.link == THOUGHT_ANSWER.name:  # the one link before links: its keys have no link part
        return key
    call = "" if result.observation is None else f":{result.observation.call_id or ''}"
    variant = "" if result.observation is None or not result.observation.variant else f":{result.observation.variant}"
    return f"{key}:{result.link}{call}{variant}"


def stored_result(job_id: str, result: AuditResult) -> AuditResult:
    """``result`` as a job store keeps it: its ``result_id`` is ``"{job_id}:{step}:{intervention}"``,
    the same on every attempt and every backend, so writing it anywhere twice is idempotent."""
    return result.model_copy(update={"result_id": f"{job_id}:{result_key(result)}"})


@runtime_checkable
class JobStore(Protocol):
    """Where online audit jobs and their results are kept (see the module docstring for the states).

    Every method is safe to call from several threads; the SQLite and Postgres backends also from
    several processes (Postgres: several hosts) sharing one store.
    """

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None, plan: AuditPlan | None = None) -> list[str]:
        """Persist new pending jobs in one transaction, skipping traces that already have one; each
        keeps ``plan``, what its audit is to do (:attr:`Job.plan`).

        Returns the ids of the jobs this call created, in the order given (a trace that already had
        a job is not in it): exactly the jobs a dispatcher should announce.
        """

    def claim(self, owner: str, *, lease: float) -> Job | None:
        """Give ``owner`` the oldest due job for ``lease`` seconds, or ``None``."""

    def claim_job(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        """Give ``owner`` the job ``job_id`` for ``lease`` seconds, if it can be claimed now.

        It can when it is pending and due (``next_attempt_at <= now``), or running under an expired
        lease (its worker is presumed dead; the attempt is counted again, as with :meth:`claim`).
        Returns ``None`` when the job is done or failed, held by a live claim, backing off (not yet
        due: see :attr:`Job.next_attempt_at` via :meth:`get`), or held by a concurrent caller.
        Raises :class:`~ariadne_lc.errors.JobNotFoundError` when there is no such job.
        """

    def complete(self, job: Job, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        """Store ``results`` and mark the job done, if ``job``'s claim still holds."""

    def fail(self, job: Job, error: str, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        """Store ``results`` and mark the job failed with ``error``, if the claim still holds."""

    def retry(self, job: Job, error: str, *, delay: float, model_calls: int) -> bool:
        """Put the job back to pending, due in ``delay`` seconds, if the claim still holds."""

    def release(self, claims: Sequence[str]) -> int:
        """Give running jobs back unfinished (shutdown): pending now, the attempt not counted."""

    def heartbeat(self, claims: Sequence[str], *, lease: float) -> int:
        """Extend the leases of the attempts with these claim tokens; returns how many."""

    def reclaim(self, alive: Callable[[str], bool]) -> int:
        """Put running jobs whose owner is not ``alive`` back to pending now; returns how many."""

    def get(self, job_id: str) -> Job:
        """The job (raises :class:`~ariadne_lc.errors.JobNotFoundError` when unknown)."""

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        """Jobs in insertion order, optionally in one state."""

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        """Stored results in insertion order, optionally of one trace."""

    def counts(self) -> dict[JobState, int]:
        """Jobs per state."""

    def unfinished(self, *, up_to_seq: int | None = None) -> int:
        """Jobs pending or running (only those with ``seq <= up_to_seq`` when given)."""

    def unfinished_ids(self) -> dict[str, float]:
        """The pending and running jobs' ids, in insertion order, each with when it was created (epoch
        seconds). Reads no trace: what a sweeper that re-announces unfinished jobs needs, at any backlog."""

    def max_seq(self) -> int:
        """The newest job's ``seq`` (0 when empty)."""

    def next_due(self) -> float | None:
        """When the next pending job becomes due (epoch seconds), or ``None`` when none is pending."""

    def model_calls_since(self, since: float) -> int:
        """Model calls spent by attempts that ended after ``since`` (epoch seconds), by every process
        sharing the store: what a fleet-wide budget counts."""

    def added_since(self, since: float) -> int:
        """Jobs created after ``since`` (epoch seconds), by every process sharing the store: what a
        fleet-wide rate limit counts."""

    def cursor(self, name: str) -> str | None:
        """The position a poller saved under ``name`` (:meth:`set_cursor`), or ``None`` before the first save."""
        ...

    def set_cursor(self, name: str, value: str) -> None:
        """Save a poller's position under ``name``, durably (e.g. :class:`~ariadne_lc.server.ServerPoller`'s:
        the newest server thread it has fully offered), so that a restarted poller resumes where it stopped."""
        ...

    def close(self) -> None:
        """Release the store's resources."""
