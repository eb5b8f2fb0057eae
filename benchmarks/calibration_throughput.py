"""Calibration throughput before and after, side by side in one run at equal load: audits per minute, scored
contradiction audits per minute, model calls and completion tokens per audit.

Each *variant* is a worker process with its own local llama.cpp server (SmolLM2-135M by default) and its own
:class:`~ariadne_lc.calibration.runner.CalibrationRunner` with the calibration CLI's defaults (rule critic and
paraphraser, answer-match scorer, tau 0.8, lambda 0, no reference method). The parent hands every worker the same
small batch of jobs in turn (the order of the workers rotating from batch to batch), so that each variant runs the
same questions under the same load; it stops after ``--minutes`` at a batch boundary.

- ``before``: the code at ``--before-rev`` (default 5ed29c2, exported with ``git archive`` into a temporary
  directory and put first on the worker's ``PYTHONPATH``): no decisiveness gate, the token cap sent only as
  ``max_completion_tokens`` (ignored by llama-cpp-python), llama.cpp's prompt-prefix reuse.
- ``today``: the code at ``--today-rev`` (default bd06504, 2026-11-23), exported the same way, with its calibration
  defaults: the gate on with the agents' own model as the reader and the gate-off record of each audit beside it.
- ``after``: the code of this checkout with its calibration defaults: the gate on with the agents' own model as the
  reader, the token cap reaching the server, the server's default aligned prefix reuse (replies independent of the
  request order; ``ariadne_lc/local/_serve.py``), the gate-off twin only when asked (``--ungated``).
- ``twin``: ``after`` with the gate-off record beside each audit (``--ungated``, today's default).
- ``whole``: ``after`` with ``ARIADNE_LLAMA_PREFIX_CACHE=0``: every prompt evaluated whole.
- ``x2``: ``after`` running two jobs at once (``CalibrationRunner.run(..., concurrency=2)``); the server still
  answers one request at a time, so only the Python side overlaps.
- ``rule``: ``after`` with the rule reader (``--reader rule``): no reader calls, other gate decisions.
- ``t1``: ``after`` with one llama.cpp thread instead of one per core.

Counted per variant: jobs; *audits*: records of the gated method (``ariadne``: one per job and intervention; the
old code has no other); *records*: everything written (``today`` and ``twin`` also store the gate-off
``ariadne_ungated`` record); scored contradictions (``ariadne``, not a control, status ``scored``: what FA and M
rest on); model calls (by what they ask: the agent's thought or answer, the gate's reader) and completion tokens at
the model's callbacks; the seconds spent inside model calls; the gate outcomes of the audits. The load average
(1 min) is sampled every 5 s. Variants of the current code are also compared record by record: the same job and
intervention should give the same intervened thought, answers and label in each; ``today`` is compared with
``after`` the same way (a difference there is a change of the decision logic since ``--today-rev``).

Run: ``python benchmarks/calibration_throughput.py [--minutes 4] [--n 20] [--batch 2]
[--variants today,after,twin,rule] [--ps 0.5] [--local-model smollm2] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VARIANTS: dict[str, dict[str, Any]] = {
    "before": {"code": "before"},
    "today": {"code": "today"},
    "after": {"code": "after"},
    "twin": {"code": "after", "runner": {"ungated": True}},
    "whole": {"code": "after", "env": {"ARIADNE_LLAMA_PREFIX_CACHE": "0"}},
    "x2": {"code": "after", "concurrency": 2},
    "rule": {"code": "after", "runner": {"reader": "rule"}},
    "t1": {"code": "after", "threads": 1},
}


_CALL_KINDS = (  # what a call asks for, by the start of its instructions (the same text in every revision)
    ("reader", "You read a thought"),
    ("think", "Reply with one line"),
    ("answer", "Reply with the final answer only"),
)

# -- the worker (runs against any checkout of ariadne_lc) ------------------------------------------------------


def _meter() -> Any:
    from langchain_core.callbacks import BaseCallbackHandler

    class Meter(BaseCallbackHandler):
        """Model calls, completion tokens and seconds inside calls, counted at the model's callbacks."""

        run_inline = True

        def __init__(self) -> None:
            self.lock = threading.Lock()
            self.calls = 0
            self.tokens = 0
            self.seconds = 0.0
            self.kinds: dict[str, int] = {}
            self.kind_seconds: dict[str, float] = {}
            self._began: dict[Any, tuple[float, str]] = {}

        def _start(self, run_id: Any, text: str) -> None:
            kind = next((k for k, marker in _CALL_KINDS if marker in text[:400]), "other")
            with self.lock:
                self.calls += 1
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
                self._began[run_id] = (time.perf_counter(), kind)

        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any, **kw: Any) -> None:
            first = messages[0][0].content if messages and messages[0] else ""
            self._start(run_id, first if isinstance(first, str) else str(first))

        def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: Any, **kw: Any) -> None:
            self._start(run_id, prompts[0] if prompts else "")

        def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
            usage = (response.llm_output or {}).get("token_usage") or {}
            tokens = usage.get("completion_tokens")
            if tokens is None:
                message = getattr(response.generations[0][0], "message", None) if response.generations else None
                tokens = ((getattr(message, "usage_metadata", None) or {}) or {}).get("output_tokens", 0)
            with self.lock:
                began = self._began.pop(run_id, None)
                if began is not None:
                    took = time.perf_counter() - began[0]
                    self.seconds += took
                    self.kind_seconds[began[1]] = self.kind_seconds.get(began[1], 0.0) + took
                self.tokens += int(tokens or 0)

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
            with self.lock:
                self._began.pop(run_id, None)

    return Meter()


def worker(spec: dict[str, Any]) -> None:
    """Serve batches of job indices read as JSON lines on stdin; answer each with a JSON line of counts."""
    from ariadne_lc.calibration.records import CalibrationConfig
    from ariadne_lc.calibration.runner import DEFAULT_INTERVENTIONS, CalibrationRunner, plan_jobs
    from ariadne_lc.calibration.storage import RunManifest, open_run
    from ariadne_lc.demo import load_demo_queries
    from ariadne_lc.interventions import RuleCritic, RuleParaphraser
    from ariadne_lc.local import LOCAL_MODELS, LocalModelServer, local_model_path
    from ariadne_lc.scoring import AnswerMatchScorer

    local = LOCAL_MODELS[spec["local_model"]]
    env = {k: v for k, v in os.environ.items() if k != "ARIADNE_LLAMA_PREFIX_CACHE"}
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.update(spec.get("env", {}))
    threads = {"n_threads": spec["threads"]} if "threads" in spec else {}
    server = LocalModelServer(
        local_model_path(spec["local_model"]), model_alias=local.alias, env=env, **threads
    ).start()
    chat = (server.completion_model if local.base_model else server.chat_model)(max_tokens=96, timeout=900.0)
    meter = _meter()
    model = chat.model_copy(update={"callbacks": [meter]})
    ps = tuple(spec["ps"])
    jobs = plan_jobs(load_demo_queries(spec["n"], seed=0), ps=ps, natural=False)
    manifest = RunManifest(
        config=CalibrationConfig(model=local.label, critic="rule", scorer="answer", tau=0.8, lam=0),
        seed=0,
        n_per_domain=spec["n"],
        domains=("math", "science", "general"),
        ps=ps,
        interventions=DEFAULT_INTERVENTIONS,
        agents=("ground_truth",),
    )
    concurrency = spec.get("concurrency", 1)
    with tempfile.TemporaryDirectory() as tmp:
        log = open_run(Path(tmp), manifest)
        runner = CalibrationRunner(
            model, log, critic=RuleCritic(), paraphraser=RuleParaphraser(), scorer=AnswerMatchScorer(),
            tau=0.8, lam=0, seed=0, calls=lambda: meter.calls, **spec.get("runner", {}),
        )  # fmt: skip
        plan = [f"{j.agent}:{j.p}:{j.query.id}" for j in jobs]
        print(json.dumps({"ready": server.startup_seconds, "jobs": plan}), flush=True)
        for line in sys.stdin:
            wanted = [jobs[i] for i in json.loads(line)["jobs"]]
            first, calls, tokens, seconds = len(log), meter.calls, meter.tokens, meter.seconds
            kinds, kind_seconds = dict(meter.kinds), dict(meter.kind_seconds)
            began = time.perf_counter()
            if concurrency > 1:
                runner.run(wanted, concurrency=concurrency)
            else:
                runner.run(wanted)
            wall = time.perf_counter() - began
            made = log.audits()[first:]
            gated = [a for a in made if a.method == "ariadne"]
            outcome = {
                f"{a.method}|{a.agent}|{a.p}|{a.query_id}|{a.result.intervention_type}": [
                    a.result.intervened_thought, a.result.original_answer, a.result.counterfactual_answer,
                    a.result.label,
                ]
                for a in made
            }  # fmt: skip
            counts = {
                "jobs": len(wanted), "audits": len(gated), "records": len(made),
                "scored": sum(not a.result.control and a.result.status == "scored" for a in gated),
                "calls": meter.calls - calls, "tokens": meter.tokens - tokens,
                "model_s": meter.seconds - seconds, "wall": wall,
            }  # fmt: skip
            counts.update({f"calls_{k}": n - kinds.get(k, 0) for k, n in meter.kinds.items()})
            counts.update({f"seconds_{k}": t - kind_seconds.get(k, 0.0) for k, t in meter.kind_seconds.items()})
            for a in gated:
                gate = a.result.decisiveness
                key = f"gate_{gate.outcome if gate is not None else 'none'}"
                counts[key] = counts.get(key, 0) + 1
            print(json.dumps({**counts, "outcome": outcome}), flush=True)
    server.stop()


# -- the parent ------------------------------------------------------------------------------------------------


REVS = ("before", "today")
"""The variants' codes that are an exported git revision (``--before-rev``, ``--today-rev``)."""


def _export(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "ariadne_lc"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


class _Worker:
    def __init__(self, name: str, spec: dict[str, Any], pythonpath: Path) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", json.dumps(spec)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, cwd=tempfile.gettempdir(),
        )  # fmt: skip
        hello = self._read()
        self.startup = hello["ready"]
        self.plan: list[str] = hello["jobs"]
        self.totals: dict[str, float] = {}
        self.outcome: dict[str, Any] = {}

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.name} stopped (exit code {self.process.wait()})")
        result: dict[str, Any] = json.loads(line)
        return result

    def run(self, jobs: Sequence[int]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jobs": list(jobs)}) + "\n")
        self.process.stdin.flush()
        counts = self._read()
        self.outcome.update(counts.pop("outcome"))
        for key, value in counts.items():
            self.totals[key] = self.totals.get(key, 0) + value

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def _sample_load(samples: list[float], stop: threading.Event) -> None:
    while not stop.is_set():
        samples.append(os.getloadavg()[0])
        stop.wait(5.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--local-model", default="smollm2")
    parser.add_argument("--n", type=int, default=20, help="questions per domain to plan from (only a prefix runs)")
    parser.add_argument("--ps", default="", help="mixture rates (default none: the coupled and bypass agents)")
    parser.add_argument("--batch", type=int, default=2, help="jobs a worker runs before the next one's turn")
    parser.add_argument("--minutes", type=float, default=4.0, help="stop at the first batch boundary after this")
    parser.add_argument("--variants", default="today,after,twin,rule")
    parser.add_argument("--before-rev", default="5ed29c2", help="the code before the gate")
    parser.add_argument("--today-rev", default="bd06504", help="today's code (main on 2026-11-23)")
    parser.add_argument("--json", type=Path, help="also write the counts per variant here")
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    ps = [float(p) for p in args.ps.split(",") if p.strip()]
    samples: list[float] = []
    stop = threading.Event()
    with tempfile.TemporaryDirectory() as exported:
        paths = {"after": ROOT}
        for code, rev in zip(REVS, (args.before_rev, args.today_rev), strict=True):
            if any(VARIANTS[n]["code"] == code for n in names):
                paths[code] = Path(exported) / code
                paths[code].mkdir()
                _export(rev, paths[code])
        workers = []
        for name in names:
            spec = {**VARIANTS[name], "local_model": args.local_model, "n": args.n, "ps": ps}
            workers.append(_Worker(name, spec, paths[spec["code"]]))
        plans = {tuple(w.plan) for w in workers}
        if len(plans) != 1:
            raise SystemExit("the variants plan different jobs; compare them on the same jobs")
        n_jobs = len(workers[0].plan)
        threading.Thread(target=_sample_load, args=(samples, stop), daemon=True).start()
        began = time.perf_counter()
        start = 0
        round_ = 0
        while start < n_jobs and time.perf_counter() - began < args.minutes * 60:
            batch = list(range(start, min(n_jobs, start + args.batch)))
            k = round_ % len(workers)
            for w in workers[k:] + workers[:k]:
                w.run(batch)
            start += len(batch)
            round_ += 1
        stop.set()
        for w in workers:
            w.close()
    _report(workers, samples, args, time.perf_counter() - began)


def _report(workers: Sequence[_Worker], load: Sequence[float], args: argparse.Namespace, elapsed: float) -> None:
    print(
        f"calibration throughput on {args.local_model}: {workers[0].totals.get('jobs', 0):.0f} jobs per variant "
        f"(coupled and bypass{', mixtures ' + args.ps if args.ps else ''}), batches of {args.batch}, "
        f"{elapsed / 60:.1f} min in all; load average {statistics.mean(load):.1f} "
        f"(min {min(load):.1f}, max {max(load):.1f}) on {os.cpu_count()} cores"
    )
    head = ("variant", "audits", "records", "scored", "calls", "wall s", "model s", "audits/min", "scored/min",
            "calls/audit", "tokens/audit", "x audits", "x scored")  # fmt: skip
    print("".join(f"{h:>13}" for h in head))
    base = workers[0].totals
    base_rate = base["audits"] / base["wall"] if base.get("wall") else 0.0
    base_scored = base["scored"] / base["wall"] if base.get("wall") else 0.0
    for w in workers:
        t = w.totals
        wall = t.get("wall", 0.0) or 1e-9
        audits = t.get("audits", 0) or 1e-9
        row = [
            w.name, f"{t.get('audits', 0):.0f}", f"{t.get('records', 0):.0f}", f"{t.get('scored', 0):.0f}",
            f"{t.get('calls', 0):.0f}", f"{wall:.0f}", f"{t.get('model_s', 0):.0f}",
            f"{t.get('audits', 0) / wall * 60:.2f}", f"{t.get('scored', 0) / wall * 60:.2f}",
            f"{t.get('calls', 0) / audits:.2f}", f"{t.get('tokens', 0) / audits:.1f}",
            f"{(t.get('audits', 0) / wall) / base_rate:.2f}" if base_rate else "-",
            f"{(t.get('scored', 0) / wall) / base_scored:.2f}" if base_scored else "-",
        ]  # fmt: skip
        print("".join(f"{c:>13}" for c in row))
    for w in workers:
        t = w.totals
        calls = ", ".join(
            f"{k[6:]} {v:.0f} ({t.get('seconds_' + k[6:], 0.0):.0f} s)"
            for k, v in sorted(t.items())
            if k.startswith("calls_")
        )
        gate = ", ".join(f"{k[5:]} {v:.0f}" for k, v in sorted(t.items()) if k.startswith("gate_"))
        print(f"{w.name}: calls by kind: {calls}; gate outcomes of the audits: {gate}")
    reference = next((w for w in workers if w.name == "after"), None)
    compared: dict[str, Any] = {}
    for w in workers:
        if reference is None or w is reference or VARIANTS[w.name]["code"] == "before":
            continue
        shared = set(w.outcome) & set(reference.outcome)
        differ = sorted(k for k in shared if w.outcome[k] != reference.outcome[k])
        labels = sorted(k for k in shared if w.outcome[k][3] != reference.outcome[k][3])
        compared[w.name] = {"shared": len(shared), "differ": len(differ), "labels_differ": len(labels)}
        print(
            f"{w.name} vs after: {len(differ)} of {len(shared)} records differ (thought', a, a*, label), "
            f"{len(labels)} in their label"
        )
        for key in differ[:5]:
            print(f"  {key}: {reference.outcome[key]} -> {w.outcome[key]}")
    if args.json is not None:
        document = {
            "local_model": args.local_model, "batch": args.batch, "minutes": args.minutes, "n": args.n,
            "revs": {"before": args.before_rev, "today": args.today_rev}, "elapsed_s": elapsed,
            "load": {"mean": statistics.mean(load), "min": min(load), "max": max(load), "cores": os.cpu_count()},
            "variants": {w.name: w.totals for w in workers}, "compared_with_after": compared,
        }  # fmt: skip
        args.json.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
