"""The reference job store: the protocol's semantics in plain Python, one lock, nothing durable.

Every backend passes the conformance suite this one defines by example; read it to see what a
method means without SQL in the way. It serves tests and single-process experiments; a crash
loses everything in it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ariadne_lc.errors import JobNotFoundError
from ariadne_lc.online._jobs import AuditPlan, Job, JobState, result_key, stored_result
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["InMemoryJobStore"]


@dataclass(slots=True)
class _Row:
    job: Job
    lease_until: float | None = None
    model_calls: int = 0
    attempt_ended_at: float | None = None


class InMemoryJobStore:
    """The reference :class:`~ariadne_lc.online.JobStore`, in memory (lost when the process ends).

    Examples:
        >>> jobs = InMemoryJobStore()
        >>> jobs.unfinished()
        0
    """

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._results: dict[tuple[str, str], AuditResult] = {}
        self._seq = 0
        self._lock = threading.Lock()
        self._cursors: dict[str, str] = {}

    def add(self, traces: Sequence[Trace], *, sample_rate: float | None, plan: AuditPlan | None = None) -> list[str]:
        now = time.time()
        added: list[str] = []
        with self._lock:
            for trace in traces:
                if trace.trace_id in self._rows:
                    continue
                self._seq += 1
                job = Job(
                    trace.trace_id, trace, JobState.PENDING, 0, None, None, sample_rate, None, self._seq, now, now, plan
                )
                self._rows[trace.trace_id] = _Row(job)
                added.append(trace.trace_id)
        return added

    def _take(self, row: _Row, owner: str, lease: float, now: float) -> Job:
        job = row.job
        error = job.error
        if job.state is JobState.RUNNING:
            error = f"the lease of {job.owner} expired during attempt {job.attempts}"
        row.job = replace(
            job, state=JobState.RUNNING, attempts=job.attempts + 1, owner=owner, claim=uuid.uuid4().hex, error=error
        )
        row.lease_until = now + lease
        return row.job

    @staticmethod
    def _claimable(row: _Row, now: float) -> bool:
        job = row.job
        if job.state is JobState.PENDING:
            return job.next_attempt_at <= now
        return job.state is JobState.RUNNING and row.lease_until is not None and row.lease_until < now

    def claim(self, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._lock:
            rows = sorted(self._rows.values(), key=lambda r: r.job.seq)
            due = [r for r in rows if r.job.state is JobState.PENDING and self._claimable(r, now)]
            due = due or [r for r in rows if r.job.state is JobState.RUNNING and self._claimable(r, now)]
            return self._take(due[0], owner, lease, now) if due else None

    def claim_job(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                raise JobNotFoundError(f"no job {job_id!r} in this store", job_id=job_id)
            return self._take(row, owner, lease, now) if self._claimable(row, now) else None

    def _held(self, job: Job) -> _Row | None:
        row = self._rows.get(job.job_id)
        if row is None or row.job.state is not JobState.RUNNING or row.job.claim != job.claim:
            return None
        return row

    def _end(self, row: _Row, state: JobState, error: str | None, model_calls: int, due: float | None) -> None:
        now = time.time()
        row.job = replace(
            row.job,
            state=state,
            error=error,
            claim=None,
            next_attempt_at=row.job.next_attempt_at if due is None else due,
        )
        row.lease_until = None
        row.model_calls += model_calls
        row.attempt_ended_at = now

    def _finish(
        self, job: Job, state: JobState, error: str | None, results: Sequence[AuditResult], model_calls: int
    ) -> bool:
        with self._lock:
            row = self._held(job)
            if row is None:
                return False
            self._end(row, state, error, model_calls, None)
            for r in results:
                self._results.setdefault((job.job_id, result_key(r)), stored_result(job.job_id, r))
        return True

    def complete(self, job: Job, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.DONE, None, results, model_calls)

    def fail(self, job: Job, error: str, results: Sequence[AuditResult], *, model_calls: int) -> bool:
        return self._finish(job, JobState.FAILED, error, results, model_calls)

    def retry(self, job: Job, error: str, *, delay: float, model_calls: int) -> bool:
        with self._lock:
            row = self._held(job)
            if row is None:
                return False
            self._end(row, JobState.PENDING, error, model_calls, time.time() + max(0.0, delay))
        return True

    def release(self, claims: Sequence[str]) -> int:
        wanted, now, count = set(claims), time.time(), 0
        with self._lock:
            for row in self._rows.values():
                job = row.job
                if job.state is JobState.RUNNING and job.claim in wanted:
                    row.job = replace(
                        job, state=JobState.PENDING, attempts=max(job.attempts - 1, 0), claim=None, next_attempt_at=now
                    )
                    row.lease_until = None
                    count += 1
        return count

    def heartbeat(self, claims: Sequence[str], *, lease: float) -> int:
        wanted, until, count = set(claims), time.time() + lease, 0
        with self._lock:
            for row in self._rows.values():
                if row.job.state is JobState.RUNNING and row.job.claim in wanted:
                    row.lease_until = until
                    count += 1
        return count

    def reclaim(self, alive: Callable[[str], bool]) -> int:
        now, count = time.time(), 0
        with self._lock:
            for row in self._rows.values():
                job = row.job
                if job.state is JobState.RUNNING and job.owner is not None and not alive(job.owner):
                    error = f"the worker {job.owner} died during attempt {job.attempts}"
                    row.job = replace(job, state=JobState.PENDING, claim=None, next_attempt_at=now, error=error)
                    row.lease_until = None
                    count += 1
        return count

    def get(self, job_id: str) -> Job:
        with self._lock:
            row = self._rows.get(job_id)
        if row is None:
            raise JobNotFoundError(f"no job {job_id!r} in this store", job_id=job_id)
        return row.job

    def list_jobs(self, *, state: JobState | None = None) -> list[Job]:
        with self._lock:
            jobs = sorted((r.job for r in self._rows.values()), key=lambda j: j.seq)
        return [j for j in jobs if state is None or j.state is JobState(state)]

    def list_results(self, *, trace_id: str | None = None) -> list[AuditResult]:
        with self._lock:
            results = list(self._results.values())
        return [r for r in results if trace_id is None or r.trace_id == trace_id]

    def counts(self) -> dict[JobState, int]:
        with self._lock:
            states = [r.job.state for r in self._rows.values()]
        return {s: states.count(s) for s in JobState}

    def unfinished(self, *, up_to_seq: int | None = None) -> int:
        with self._lock:
            return sum(
                1
                for r in self._rows.values()
                if r.job.state in (JobState.PENDING, JobState.RUNNING) and (up_to_seq is None or r.job.seq <= up_to_seq)
            )

    def unfinished_ids(self) -> dict[str, float]:
        with self._lock:
            jobs = sorted((r.job for r in self._rows.values()), key=lambda j: j.seq)
        return {j.job_id: j.created_at for j in jobs if j.state in (JobState.PENDING, JobState.RUNNING)}

    def max_seq(self) -> int:
        with self._lock:
            return self._seq

    def next_due(self) -> float | None:
        with self._lock:
            due = [r.job.next_attempt_at for r in self._rows.values() if r.job.state is JobState.PENDING]
        return min(due) if due else None

    def model_calls_since(self, since: float) -> int:
        with self._lock:
            return sum(
                r.model_calls
                for r in self._rows.values()
                if r.attempt_ended_at is not None and r.attempt_ended_at > since
            )

    def added_since(self, since: float) -> int:
        with self._lock:
            return sum(1 for r in self._rows.values() if r.job.created_at > since)

    def cursor(self, name: str) -> str | None:
        with self._lock:
            return self._cursors.get(name)

    def set_cursor(self, name: str, value: str) -> None:
        with self._lock:
            self._cursors[name] = value

    def close(self) -> None:
        """Nothing to release."""
