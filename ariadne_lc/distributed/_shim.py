"""TEMPORARY (until branch online-pg lands): claim_job and add -> ids on the SQLite job store."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from ariadne_lc.errors import StoreError
from ariadne_lc.online._jobs import _COLUMNS, _PENDING, _RUNNING, Job, SQLiteJobStore
from ariadne_lc.trace import Trace


class ShimJobStore(SQLiteJobStore):
    def add_ids(self, traces: Sequence[Trace], *, sample_rate: float | None) -> list[str]:
        before = {j.job_id for j in self.list_jobs()}
        super().add(traces, sample_rate=sample_rate)
        return [t.trace_id for t in traces if t.trace_id not in before]

    def claim_job(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        now = time.time()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT seq FROM ariadne_online_jobs WHERE job_id = ? AND "
                f"((state = '{_PENDING}' AND next_attempt_at <= ?) OR (state = '{_RUNNING}' AND lease_until < ?))",
                (job_id, now, now),
            ).fetchone()
            if row is None:
                if conn.execute("SELECT 1 FROM ariadne_online_jobs WHERE job_id = ?", (job_id,)).fetchone() is None:
                    raise StoreError(f"no job {job_id!r}")
                return None
            conn.execute(
                f"UPDATE ariadne_online_jobs SET state = '{_RUNNING}', attempts = attempts + 1, owner = ?, "
                "claim = ?, lease_until = ?, updated_at = ? WHERE seq = ?",
                (owner, uuid.uuid4().hex, now + lease, now, row[0]),
            )
            claimed = conn.execute(f"SELECT {_COLUMNS} FROM ariadne_online_jobs WHERE seq = ?", row).fetchone()
        return self._job(claimed)
