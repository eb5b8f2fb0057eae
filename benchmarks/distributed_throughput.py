"""Distributed audits: throughput of 1, 2 and 4 worker processes, and what the serving path pays.

**Throughput.** W ``ariadne-lc worker`` processes (threads pool, concurrency C) consume one RabbitMQ
queue; jobs and checkpoints are in PostgreSQL. The audited agent is the faithful scripted ReAct
agent of the tests, whose model sleeps during replays so that one audit spends L seconds waiting on
its model (the per-call sleep is L divided by the replay's model calls, measured first). With nothing
else limiting, W workers finish W·C audits every L seconds: the ideal is W·C/L audits/s. Each
configuration audits ``rounds``·W·C jobs, timed from the dispatch of the first task to the commit
of the last result, so one pipeline fill (one L) is inside the time (with 20 rounds that alone costs
about 5% of the ideal). Also printed: the CPU seconds the workers spent per audit and their share of
the machine's cores, which says where the cores, not the model, become the limit.

**Serving path.** The same agent (zero latency, in-memory checkpointer) served in this process three
ways, interleaved run by run: no handler; ``OnlineAuditor`` at 100% on a SQLite job store (the
default); ``OnlineAuditor`` at 100% on the Postgres job store with the Celery dispatcher (publishing
on the persister thread). Printed: p50/p99 of each run's wall time and of the agent thread's CPU
time, and what each backend adds over no handler.

Also printed: the median time of one audit task inside a worker (from Celery's "succeeded in" log
lines), which separates time lost inside an audit (claim, history reads, replay, commit, and waiting for
the interpreter or the cores) from time lost between tasks; and the machine's load average, since on a
shared machine other processes take the same cores.

Run (from the repository root, PostgreSQL and RabbitMQ up):
``PYTHONPATH=. python benchmarks/distributed_throughput.py [--concurrency 8] [--latency 1.0] [--rounds 20]``
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.distributed import CeleryDispatcher, create_app, open_job_store
from ariadne_lc.online import JobState, OnlineAuditor
from ariadne_lc.testing import ScriptedChatModel, calculator
from tests.distributed.fleet import BROKER, Serving, Workers, database, delete_queue, require_services

CORES = os.cpu_count() or 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def replay_calls(serving: Serving, trace: Any) -> int:
    """Model calls one audit of ``trace`` makes (the scripted agent, no delay)."""
    results = Auditor(serving.graph).audit(trace, "auto", ["logic_flip"])
    return max(1, sum(r.model_calls for r in results))


def throughput(
    ckpt_url: str, serving: Serving, traces: list[Any], w: int, c: int, latency: float, calls: int, folder: Path
) -> dict[str, float]:
    n = len(traces)
    queue = f"ariadne-bench-{uuid.uuid4().hex[:8]}"
    with database() as jobs_url:
        jobs = open_job_store(jobs_url)
        workers = Workers(folder, jobs_url, queue, replay_delay=latency / calls, env={})
        dispatcher = CeleryDispatcher(app=create_app(BROKER, queue=queue), jobs_url=jobs_url)
        try:
            procs = workers.start(w, concurrency=c, extra=["--checkpointer", ckpt_url])
            cpu0 = sum(cpu_seconds(p.pid) for p in procs)
            ids = jobs.add(traces, sample_rate=1.0)
            start = time.perf_counter()
            dispatcher.dispatch(ids)
            while jobs.counts()[JobState.DONE] < n:
                time.sleep(0.05)
            elapsed = time.perf_counter() - start
            cpu = sum(cpu_seconds(p.pid) for p in procs) - cpu0
            failed = jobs.counts()[JobState.FAILED]
            time.sleep(0.5)  # let the last "succeeded in" lines reach the logs
            tasks = [
                float(m.group(1))
                for i in range(w)
                for m in re.finditer(r"succeeded in ([0-9.]+)s: 'done'", (folder / f"worker-{i}.log").read_text())
            ]
        finally:
            workers.stop()
            dispatcher.close()
            jobs.close()
            delete_queue(queue)
    rate = n / elapsed
    ideal = w * c / latency
    return {"rate": rate, "ideal": ideal, "ratio": rate / ideal, "cpu_per_audit": cpu / n,
            "cores": cpu / elapsed / CORES, "elapsed": elapsed, "failed": failed,
            "task_p50": statistics.median(tasks) if tasks else float("nan")}  # fmt: skip


def three_step(messages: Sequence[BaseMessage]) -> AIMessage:
    turns = sum(isinstance(m, AIMessage) for m in messages)
    if turns < 2:
        return AIMessage(
            content=f"Step {turns + 1}: compute it.",
            tool_calls=[{"name": "calculator", "args": {"expression": f"{turns + 2} * 3"}, "id": f"c{turns}"}],
        )
    return AIMessage(content="The answer is 12.")


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def serving_path(runs: int, pg_url: str, folder: Path) -> dict[str, dict[str, float]]:
    graph = create_agent(ScriptedChatModel(script=three_step), [calculator], checkpointer=InMemorySaver())
    queue = f"ariadne-bench-{uuid.uuid4().hex[:8]}"
    dispatcher = CeleryDispatcher(app=create_app(BROKER, queue=queue), jobs_url=pg_url)
    ways: dict[str, Any] = {
        "no handler": None,
        "SQLite jobs": OnlineAuditor(graph, jobs=folder / "jobs.db", sample_rate=1.0, max_queue_size=10**7),
        "Postgres + Celery": OnlineAuditor(
            graph, jobs=open_job_store(pg_url), sample_rate=1.0, max_queue_size=10**7, dispatcher=dispatcher
        ),
    }
    wall: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    try:
        for i in range(runs + 50):
            for name, online in ways.items():
                config: dict[str, Any] = {"configurable": {"thread_id": f"{name}-{i}"}}
                if online is not None:
                    config["callbacks"] = [online.handler]
                t0, c0 = time.perf_counter(), time.thread_time()
                graph.invoke({"messages": [("user", "What is 2 * 3 then 3 * 3?")]}, config)
                t1, c1 = time.perf_counter(), time.thread_time()
                if i >= 50:  # warm-up
                    wall[name].append(t1 - t0)
                    cpu[name].append(c1 - c0)
        for online in ways.values():
            if online is not None:
                assert online.force_flush(120), "the sampled runs were not persisted"
        stats = {name: {"persisted": float(online.stats.persisted)} for name, online in ways.items() if online}
        stats["Postgres + Celery"]["dispatched"] = float(dispatcher.stats.dispatched)
    finally:
        for online in ways.values():
            if online is not None:
                online.shutdown(30, drain=False)
        dispatcher.close()
        delete_queue(queue)
    out: dict[str, dict[str, float]] = {}
    for name in ways:
        out[name] = {
            "p50": quantile(wall[name], 0.5),
            "p99": quantile(wall[name], 0.99),
            "cpu50": quantile(cpu[name], 0.5),
            "cpu99": quantile(cpu[name], 0.99),
            **stats.get(name, {}),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=8, help="C: audits per worker process at once")
    parser.add_argument("--latency", type=float, default=1.0, help="L: seconds an audit waits on its model")
    parser.add_argument("--rounds", type=int, default=20, help="jobs per configuration = rounds x W x C")
    parser.add_argument("--workers", default="1,2,4", help="worker process counts")
    parser.add_argument("--runs", type=int, default=1000, help="serving runs per way")
    args = parser.parse_args()
    require_services()
    counts = [int(v) for v in args.workers.split(",")]
    c, latency = args.concurrency, args.latency
    with tempfile.TemporaryDirectory() as tmp, database() as ckpt_url:
        folder = Path(tmp)
        serving = Serving(ckpt_url)
        n = args.rounds * max(counts) * c
        print(f"recording {n} runs of the scripted agent into PostgresSaver ...", flush=True)
        all_traces = serving.record(n)
        calls = replay_calls(serving, all_traces[0])
        print(f"an audit makes {calls} replay model call(s): each sleeps {latency / calls:.3f} s (L = {latency} s)")
        print(
            f"\nthroughput, C = {c}, L = {latency} s, {CORES} cores, RabbitMQ + PostgreSQL on this machine, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        print("| workers W | jobs | audits/s | ideal W·C/L | ratio | task p50 s | worker CPU/audit | cores busy |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for w in counts:
            traces = all_traces[: args.rounds * w * c]
            r = throughput(ckpt_url, serving, traces, w, c, latency, calls, folder)
            print(f"| {w} | {len(traces)} | {r['rate']:.2f} | {r['ideal']:.2f} | {r['ratio']:.2f} | "
                  f"{r['task_p50']:.2f} | {r['cpu_per_audit'] * 1000:.0f} ms | {r['cores'] * 100:.0f}% |"
                  + (f" ({r['failed']:.0f} failed)" if r["failed"] else ""), flush=True)  # fmt: skip
        serving.close()
        with database() as pg_url:
            print(f"\nserving path: {args.runs} runs a way, interleaved, 100% sampled, no audits running")
            result = serving_path(args.runs, pg_url, folder)
        base = result["no handler"]
        print("| way | p50 ms | p99 ms | added p50 ms | added p99 ms | thread CPU p50 ms | added CPU p50 ms "
              "| CPU p99 ms |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, r in result.items():
            print(f"| {name} | {r['p50'] * 1e3:.2f} | {r['p99'] * 1e3:.2f} | {(r['p50'] - base['p50']) * 1e3:+.2f} | "
                  f"{(r['p99'] - base['p99']) * 1e3:+.2f} | {r['cpu50'] * 1e3:.2f} | "
                  f"{(r['cpu50'] - base['cpu50']) * 1e3:+.2f} | {r['cpu99'] * 1e3:.2f} |")  # fmt: skip
        extra = {k: v for k, v in result["Postgres + Celery"].items() if k in ("persisted", "dispatched")}
        print(f"Postgres + Celery: {extra}; SQLite: persisted {result['SQLite jobs'].get('persisted', 0):.0f}")
    sys.exit(0)


if __name__ == "__main__":
    main()
