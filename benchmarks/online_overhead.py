"""What sampled online auditing costs a live agent run, measured side by side in one process.

Five ways to run the same 3-step ``create_agent`` agent (a zero-latency scripted model, a SQLite
checkpointer), interleaved run by run so that machine noise hits all alike:

- ``no callbacks``;
- ``do-nothing handler``: a handler that receives every callback and does nothing, the floor that
  LangChain's callback machinery costs;
- ``online 0%``, ``online 10%``, ``online 100%``: :class:`~ariadne_lc.online.OnlineAuditor` handlers
  sampling that share of runs into their own SQLite job stores.

Audits run where ``--audits`` says: ``process`` (default: a worker process on the same checkpointer
and job stores, the deployment the docs recommend at high sample rates), ``thread`` (in this process,
``OnlineAuditor.start()``; the audits then share the interpreter with every way measured, so the
ratios still isolate the request path but all absolute numbers rise), or ``off``.

Prints per way the p50 and p99 of a run's wall-clock latency, of the process's CPU time during the
run, and of the CPU time of the thread that ran it (neither is inflated by other processes on a
shared machine; the last leaves out background threads, so it is the request path's own cost), what
each adds over ``no callbacks``, and the ratios of what online auditing adds to what the do-nothing
handler adds (target at 100%: added p99 under 1 ms and at most 1.5 times the do-nothing handler's).
Then the time spent inside ariadne's own callbacks per run (measured directly, so free of machine
noise), the persister's background CPU per sampled run, and the memory of this process after every
1,000 runs (live pymalloc blocks after a collection, and RSS).

Run: ``python benchmarks/online_overhead.py [--runs 2000] [--audits process|thread|off]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc.online import OnlineAuditor
from ariadne_lc.testing import ScriptedChatModel, calculator

RATES = {"online 0%": 0.0, "online 10%": 0.1, "online 100%": 1.0}
MAX_QUEUE = 256


def three_step_script(messages: list[BaseMessage]) -> AIMessage:
    turns = sum(isinstance(m, AIMessage) for m in messages)
    if turns < 2:
        return AIMessage(
            content=f"Step {turns}: to get the total I need to multiply {turns + 2} by 7 with the calculator.",
            tool_calls=[{"name": "calculator", "args": {"expression": f"{turns + 2} * 7"}, "id": f"c{turns}"}],
        )
    return AIMessage(content="The total is 42.")


class NoOpHandler(BaseCallbackHandler):
    """Receives every callback and does nothing: LangChain's floor."""


def make_graph(folder: Path) -> tuple[Any, sqlite3.Connection]:
    conn = sqlite3.connect(folder / "checkpoints.db", check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    graph = create_agent(ScriptedChatModel(script=three_step_script), [calculator], checkpointer=SqliteSaver(conn))
    return graph, conn


def auditor(graph: Any, folder: Path, name: str, rate: float) -> OnlineAuditor:
    slug = name.split()[-1].rstrip("%")
    return OnlineAuditor(graph, jobs=folder / f"jobs-{slug}.db", sample_rate=rate, max_queue_size=MAX_QUEUE, name=name)


def worker(folder: Path) -> None:
    """The audit worker process: audits the job stores of the sampling ways until stdin closes."""
    graph, _ = make_graph(folder)
    online = [auditor(graph, folder, name, rate) for name, rate in RATES.items() if rate > 0]
    for o in online:
        o.start()
    print("ready", flush=True)
    sys.stdin.read()
    for o in online:
        o.shutdown(timeout=5, drain=False)
    print(json.dumps({o.name: {"audited": o.stats.audited, "failed": o.stats.failed} for o in online}), flush=True)


def timed(
    method: Callable[..., Any], total: list[float], clock: Callable[[], float] = time.perf_counter
) -> Callable[..., Any]:
    """``method``, adding the time spent in it (by ``clock``) to ``total[0]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return method(*args, **kwargs)
        finally:
            total[0] += clock() - started

    return wrapper


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def added_ci(
    way: Sequence[float], base: Sequence[float], rng: random.Random, resamples: int = 300
) -> tuple[tuple[float, float], tuple[float, float]]:
    """95% intervals (ms) of what ``way`` adds to ``base`` at p50 and p99: a bootstrap over rounds,
    keeping each round's runs together, since a noisy moment of the machine hits every way of it."""
    n = len(base)
    diffs: tuple[list[float], list[float]] = ([], [])
    for _ in range(resamples):
        rounds = rng.choices(range(n), k=n)
        ours, theirs = sorted(way[i] for i in rounds), sorted(base[i] for i in rounds)
        for k, q in enumerate((0.5, 0.99)):
            at = min(n - 1, round(q * (n - 1)))
            diffs[k].append((ours[at] - theirs[at]) * 1e3)
    bounds = []
    for values in diffs:
        values.sort()
        bounds.append((values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]))
    return bounds[0], bounds[1]


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per way (5 ways, interleaved)")
    parser.add_argument("--audits", choices=["process", "thread", "off"], default="process")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker)
        return

    folder = Path(tempfile.mkdtemp(prefix="ariadne-online-bench-"))
    graph, _ = make_graph(folder)
    online = {name: auditor(graph, folder, name, rate) for name, rate in RATES.items()}
    ways: dict[str, list[Any]] = {"no callbacks": [], "do-nothing handler": [NoOpHandler()]}
    ways |= {name: [o.handler] for name, o in online.items()}
    inside = [0.0]  # seconds spent inside ariadne's callbacks during the current run
    background = {name: [0.0] for name in online}  # CPU seconds of each persister: building + committing
    for name, o in online.items():
        for event in ("on_chain_start", "on_chain_end", "on_chain_error"):
            setattr(o.handler, event, timed(getattr(o.handler, event), inside))
        o._persister._drain = timed(o._persister._drain, background[name], clock=time.thread_time)  # type: ignore[method-assign]
    proc = None
    if args.audits == "process":
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    elif args.audits == "thread":
        for o in online.values():
            if o.sampler.rate > 0:
                o.start()

    def invoke(i: int, name: str) -> tuple[float, float, float]:
        config: dict[str, Any] = {"configurable": {"thread_id": f"{name}-{i}"}}
        if ways[name]:
            config["callbacks"] = ways[name]
        inside[0] = 0.0
        own, cpu, wall = time.thread_time(), time.process_time(), time.perf_counter()
        graph.invoke({"messages": [("user", "What is 6 times 7?")]}, config)
        return time.perf_counter() - wall, time.process_time() - cpu, time.thread_time() - own

    names = list(ways)
    for i in range(30):  # warm-up
        for name in names:
            invoke(-1 - i, name)
    # Samples go to arrays of raw doubles: a list of floats would itself grow by a block a sample.
    latency = {name: array("d") for name in names}
    cpu = {name: array("d") for name in names}
    thread_cpu = {name: array("d") for name in names}
    hook = {name: array("d") for name in online}
    memory: list[tuple[int, int, float]] = []
    done = 0
    gc.collect()
    for i in range(args.runs):
        for name in names[i % len(names) :] + names[: i % len(names)]:  # rotate: nobody always goes first
            wall, used, own = invoke(i, name)
            latency[name].append(wall)
            cpu[name].append(used)
            thread_cpu[name].append(own)
            if name in online:
                hook[name].append(inside[0])
            done += 1
            if done % 1000 == 0:
                gc.collect()
                memory.append((done, sys.getallocatedblocks(), rss_mb()))
    flushed = {name: o.force_flush(60) if args.audits == "thread" else True for name, o in online.items()}
    reports = {name: o.shutdown(timeout=10, drain=False) for name, o in online.items()}
    worker_stats: dict[str, Any] = {}
    if proc is not None:
        out, _ = proc.communicate("", timeout=120)
        worker_stats = json.loads(out.strip().splitlines()[-1])

    base, floor = "no callbacks", "do-nothing handler"
    print(
        f"online_overhead: 3-step create_agent, zero-latency scripted model, SqliteSaver; audits: {args.audits}\n"
        f"{args.runs:,} runs per way, interleaved run by run ({done:,} runs in this process)"
    )
    verdicts = []
    measures = (
        ("wall-clock latency", latency),
        ("CPU time of the process", cpu),
        ("CPU time of the agent's thread", thread_cpu),
    )
    rng = random.Random(0)
    for title, samples in measures:
        p50 = {n: statistics.median(v) * 1e3 for n, v in samples.items()}
        p99 = {n: quantile(v, 0.99) * 1e3 for n, v in samples.items()}
        ci = {n: added_ci(samples[n], samples[base], rng) for n in names if n != base}
        print(f"\n{title} per run, ms; added over no callbacks with a 95% paired-bootstrap interval")
        print(f"{'way':<20}{'p50':>8}{'p99':>8}   {'added p50':<26}{'added p99':<26}")
        for n in names:
            line = f"{n:<20}{p50[n]:8.3f}{p99[n]:8.3f}"
            if n != base:
                (lo50, hi50), (lo99, hi99) = ci[n]
                line += f"   {p50[n] - p50[base]:+.3f} [{lo50:+.3f}, {hi50:+.3f}]    "
                line += f"{p99[n] - p99[base]:+.3f} [{lo99:+.3f}, {hi99:+.3f}]"
            print(line)
        print("added by the way / added by the do-nothing handler (n/a: the latter's interval includes 0):")
        for n in RATES:
            ratios = []
            for k, stat in enumerate((p50, p99)):
                resolved = ci[floor][k][0] > 0
                ratio = (stat[n] - stat[base]) / (stat[floor] - stat[base]) if resolved else None
                ratios.append("  n/a" if ratio is None else f"{ratio:5.2f}")
            print(f"  {n:<14} p50 {ratios[0]}   p99 {ratios[1]}")
        added99, (lo99, hi99) = p99["online 100%"] - p99[base], ci["online 100%"][1]
        under = "yes" if hi99 < 1 else ("NO" if lo99 >= 1 else "not resolved at this noise")
        verdicts.append(f"{title}: added p99 at 100% {added99:+.3f} ms [{lo99:+.3f}, {hi99:+.3f}]: under 1 ms: {under}")
    print("\ntarget " + "\ntarget ".join(verdicts))
    print("\ntime inside ariadne's callbacks per run, on the agent's thread (recorder + sampling), ms")
    for n, v in hook.items():
        print(f"  {n:<14} p50 {statistics.median(v) * 1e3:7.3f}   p99 {quantile(v, 0.99) * 1e3:7.3f}")
    print("background CPU of the persister thread (building traces, committing jobs), per sampled run, ms")
    for n, o in online.items():
        if o.stats.persisted:
            print(f"  {n:<14} {background[n][0] / o.stats.persisted * 1e3:7.3f}")
    print()
    for n, o in online.items():
        s, r = o.stats, reports[n]
        audited = worker_stats.get(n, {}).get("audited", s.audited)
        print(
            f"{n:<12} recorded {s.recorded}, sampled {s.sampled}, persisted {s.persisted}, dropped {s.dropped}, "
            f"audited {audited}, left pending {r.unfinished}, unpersisted {r.unpersisted}, "
            f"max queue depth {s.max_queue_depth}/{MAX_QUEUE}, flushed {flushed[n]}, errors {s.errors}"
        )
    print("\nmemory of this process (after a collection): runs, live pymalloc blocks, RSS MB")
    for runs, blocks, rss in memory:
        print(f"  {runs:>6,} {blocks:>10,} {rss:8.1f}")
    if len(memory) >= 3:
        (r0, b0, m0), (r1, b1, m1) = memory[1], memory[-1]
        print(
            f"growth from {r0:,} to {r1:,} runs: {(b1 - b0) / (r1 - r0):+.2f} blocks a run, "
            f"{(m1 - m0) * 1024 / (r1 - r0):+.2f} KiB RSS a run"
        )


if __name__ == "__main__":
    main()
