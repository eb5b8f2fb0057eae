"""A claiming process for the multi-process job store tests (run it as a module from the repo root).

``python -m tests.online.claim_worker STORE OWNER OUT GO [--die-after N | --peers N]``: open the job store
STORE (a SQLite path or a PostgreSQL URI), create OUT.ready, wait until the file GO exists (so that every process
starts claiming at once), then claim and complete jobs until none is left, appending each completed job
id to OUT. With ``--peers N`` it holds its first claim (creating OUT.first) until N such files exist next
to OUT, so every one of the N processes is guaranteed some of the work whatever the scheduling: no process
can drain the queue before the others get their first job. With ``--die-after N`` it claims N jobs on a
short lease and SIGKILLs itself while holding them, as a worker dying mid-audit would.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from ariadne_lc import AuditResult
from ariadne_lc.online import Job, JobStore, open_job_store

DYING_LEASE = 0.5
BARRIER_TIMEOUT = 120.0


def _results(trace_id: str) -> list[AuditResult]:
    return [
        AuditResult(
            trace_id=trace_id,
            step_index=0,
            intervention_type=kind,
            status="scored",
            label="faithful",
            original_thought="t",
            model_calls=1,
        )
        for kind in ("logic_flip", "premise_negation")
    ]


def _first_claim(jobs: JobStore, owner: str, out: Path, peers: int) -> Job:
    """Claim one job, then wait until all ``peers`` processes hold one (a barrier through marker files)."""
    deadline = time.monotonic() + BARRIER_TIMEOUT
    job = jobs.claim(owner, lease=60)
    while job is None:  # there are more jobs than processes: only contention can make a claim come back empty
        if time.monotonic() > deadline:
            raise SystemExit(f"{owner} could not claim a first job")
        time.sleep(0.01)
        job = jobs.claim(owner, lease=60)
    out.with_suffix(".first").touch()
    while len(list(out.parent.glob("*.first"))) < peers:
        if time.monotonic() > deadline:
            raise SystemExit(f"{owner} waited in vain for its {peers - 1} peers to hold a first job")
        time.sleep(0.01)
    return job


def main(store: str, owner: str, out: Path, go: Path, die_after: int | None, peers: int) -> int:
    jobs = open_job_store(store)
    out.with_suffix(".ready").touch()
    while not go.exists():
        time.sleep(0.01)
    if die_after is not None:
        held = [jobs.claim(owner, lease=DYING_LEASE) for _ in range(die_after)]
        out.write_text("\n".join(j.job_id for j in held if j is not None) + "\n")
        os.kill(os.getpid(), signal.SIGKILL)
    with out.open("a") as log:
        pending: Job | None = _first_claim(jobs, owner, out, peers) if peers else None
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 2 * DYING_LEASE + 1.0:  # outwait the dead worker's leases
            job, pending = pending or jobs.claim(owner, lease=60), None
            if job is None:
                time.sleep(0.05)
                continue
            idle_since = time.monotonic()
            if jobs.complete(job, _results(job.job_id), model_calls=2):
                log.write(job.job_id + "\n")
                log.flush()
    jobs.close()
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    die = int(args[args.index("--die-after") + 1]) if "--die-after" in args else None
    peers = int(args[args.index("--peers") + 1]) if "--peers" in args else 0
    sys.exit(main(args[0], args[1], Path(args[2]), Path(args[3]), die, peers))
