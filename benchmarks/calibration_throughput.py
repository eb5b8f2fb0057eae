"""How fast a calibration runs on a local model: audits per minute and model calls per audit, per agent kind.

Starts the local llama.cpp server (SmolLM2-135M by default, ``--local-model gemma3-270m`` for Gemma 3 270M through
the completion endpoint), runs a small calibration (``--n`` questions per domain, every agent kind, the rule critic
and the answer-match scorer, the reference method on logic flips) into a temporary directory, and prints, per
agent kind: jobs, audits, model calls, wall time, audits per minute and model calls per audit. Wall time on a
shared machine includes other processes' load: run it alone to size a long run.

Model calls are counted at the model's callbacks, so the reference method's shared re-prompt counts twice (the
second time is a cache hit, not a request to the server).

Run: ``python benchmarks/calibration_throughput.py [--local-model smollm2] [--n 2] [--ps 0.5]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from ariadne_lc.calibration.records import CalibrationConfig
from ariadne_lc.calibration.reference_run import reference_method
from ariadne_lc.calibration.runner import DEFAULT_INTERVENTIONS, CalibrationJob, CalibrationRunner, counted, plan_jobs
from ariadne_lc.calibration.storage import RunManifest, open_run
from ariadne_lc.demo import load_demo_queries
from ariadne_lc.local import LOCAL_MODELS, LocalModelServer, local_model_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--local-model", default="smollm2", choices=sorted(LOCAL_MODELS))
    parser.add_argument("--n", type=int, default=2, help="questions per domain")
    parser.add_argument("--ps", default="0.5", help="mixture rates")
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    spec = LOCAL_MODELS[args.local_model]
    queries = load_demo_queries(args.n, seed=1)
    jobs = plan_jobs(queries, ps=tuple(float(p) for p in args.ps.split(",")), natural=True)
    with LocalModelServer(local_model_path(args.local_model), model_alias=spec.alias) as server:
        chat = server.completion_model(max_tokens=96) if spec.base_model else server.chat_model(max_tokens=96)
        model, calls = counted(chat)
        manifest = RunManifest(
            config=CalibrationConfig(model=spec.label, critic="rule", scorer="answer", tau=0.8, lam=0),
            seed=1,
            n_per_domain=args.n,
            domains=("math", "science", "general"),
            ps=tuple(float(p) for p in args.ps.split(",")),
            interventions=DEFAULT_INTERVENTIONS,
            agents=("ground_truth", "natural", "reference"),
        )
        with tempfile.TemporaryDirectory() as tmp:
            log = open_run(Path(tmp), manifest)
            reference = None if args.no_reference else reference_method(model, tau=0.8, lam=0)
            runner = CalibrationRunner(model, log, calls=calls, reference=reference)
            stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
            for job in jobs:
                label = _label(job)
                before_calls, before = calls(), time.perf_counter()
                written = runner.run_job(job)
                row = stats[label]
                row[0] += 1
                row[1] += written
                row[2] += calls() - before_calls
                row[3] += time.perf_counter() - before
    print(f"calibration throughput on {spec.label} (server start {server.startup_seconds or 0:.1f} s)")
    print(f"{'agent':<16}{'jobs':>6}{'audits':>8}{'calls':>7}{'wall s':>9}{'audits/min':>12}{'calls/audit':>13}")
    total = [0.0, 0.0, 0.0, 0.0]
    for label, (n_jobs, audits, n_calls, wall) in stats.items():
        total = [a + b for a, b in zip(total, (n_jobs, audits, n_calls, wall), strict=True)]
        _row(label, n_jobs, audits, n_calls, wall)
    _row("all", *total)


def _label(job: CalibrationJob) -> str:
    return job.agent if job.p is None else f"mixture {job.p:g}"


def _row(label: str, jobs: float, audits: float, calls: float, wall: float) -> None:
    rate = audits / wall * 60 if wall else 0.0
    per = calls / audits if audits else 0.0
    print(f"{label:<16}{jobs:>6.0f}{audits:>8.0f}{calls:>7.0f}{wall:>9.1f}{rate:>12.1f}{per:>13.2f}")


if __name__ == "__main__":
    main()
