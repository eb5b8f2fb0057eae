"""The replay engine's own time per replayed model call, against the agent's own step: a base commit and this tree,
side by side in one run, at K = 4, 16, 48 and 100 calls.

The agent is :func:`ariadne_lc.testing.lookup_model` under ``create_agent`` + ``AriadneMiddleware`` (K lookups, each
after a one-line thought, then the sum; see ``benchmarks/long_runs.py``). The scripted model answers at once, so
every millisecond measured is LangGraph's, LangChain's and ariadne_lc's. Per K, a measuring process records
``--runs`` runs (the agent's own wall time per model call: **own ms/step**), audits one more run out of the measure
(imports, first compilations), then audits the recorded runs with every default (``Auditor(graph).audit_batch``)
and reports:

* **replay ms/call**: the CPU time of the threads inside the replayer's calls (replays, the ``thought->action``
  re-runs; the thread's own time, so that the batch's threads waiting on each other do not count twice), over the
  model calls the audit made: the engine's own cost per replayed call,
* **audit ms/call**: the whole ``audit_batch`` wall time (plan, critics, gates, replays, scoring) over every model
  call the audit made,
* each over own ms/step (target: replay <= 1.0x, audit <= 1.5x),
* the ``thought->action`` re-runs (one model turn each, resumed from the checkpoint before the step and stopped before
  its tools), their CPU per call, and **LangGraph's floor** for one: the agent's own graph resumed from such a
  checkpoint by LangGraph's time travel, stopped before its tools, nothing of ariadne_lc in between; **x floor**: the
  replayer's whole time over what its calls would cost at the floor (re-runs at LangGraph's floor, replayed turns at the
  agent's own step),
* whether the two sides' results are the same field by field (ids, times and the replay's own thread and
  checkpoint ids aside: they are fresh on every run).

"Before" runs the measuring code in a subprocess whose ``PYTHONPATH`` is a git worktree of ``--base`` (made under
``/tmp`` on first use, then reused), "after" in this tree; the sides alternate ``--rounds`` times each and the
median is printed with the rounds' spread (half their range over the median).

Run: ``python benchmarks/replay_speed.py [--base 03b4616] [--rounds 3] [--runs 2] [--sizes 4,16,48,100]``
(``--profile K``: this tree only, a cProfile of the audit at K, its top functions by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pstats
import re
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sides import ROOT, measure_side, worktree

DEFAULT_BASE = "03b4616"
SIZES = (4, 16, 48, 100)
REPLAY_TARGET = 1.0
AUDIT_TARGET = 1.5
_VOLATILE = frozenset(
    {"result_id", "trace_id", "created_at", "duration_s", "audit_span", "replay_thread_id", "replay_checkpoint_id"}
)
"""Result fields fresh on every run (and the message ids inside steps: the scripted model's are random)."""
_FRESH_ID = re.compile(r"(ariadne-rederived-)[0-9a-f]{12}")
"""The id of a tool call re-derived in a replay (fresh on every replay)."""


# -- the measuring process (runs against whichever ariadne_lc its PYTHONPATH holds) ---------------------------------


def _stable(value: Any) -> Any:
    """``value`` (a result's dump) without what is fresh on every run."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in sorted(value.items()) if k not in _VOLATILE and k != "message_id"}
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    if isinstance(value, str):
        return _FRESH_ID.sub(r"\1*", value)
    return value


@dataclass
class Spent:
    """CPU seconds of the replayer's calls of one kind and the model calls they made."""

    seconds: float = 0.0
    model_calls: int = 0


_KINDS = {
    "derive_action": "rerun", "derive_next_action": "rerun",  # one model turn, re-run and stopped before its tools
    "replay_steps": "replay", "replay_early_answer": "replay",  # the run from the step to its end
}  # fmt: skip


def _timed_replays() -> dict[str, Spent]:
    """Wrap the replayer's public calls so that the CPU time their threads spend in them (the thread's own time: the
    batch's threads waiting on each other do not count twice) and the model calls they make are added up by kind."""
    from ariadne_lc.replay import Replayer

    spent = {kind: Spent() for kind in set(_KINDS.values())}
    lock = threading.Lock()

    def timed(method: Any, kind: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            result = method(*args, **kwargs)
            with lock:
                spent[kind].seconds += time.thread_time() - started
                spent[kind].model_calls += result.model_calls
            return result

        return call

    for name, kind in _KINDS.items():
        setattr(Replayer, name, timed(getattr(Replayer, name), kind))
    return spent


def _floor(graph: Any, traces: Sequence[Any], count: int) -> float:
    """LangGraph's own seconds to re-run one model turn from a checkpoint (the least any re-run costs): the agent's
    graph resumed in its own thread from the checkpoint before a step (LangGraph's time travel), stopped before its
    tools; the median over ``count`` steps spread over the runs."""
    from ariadne_lc.semconv import ARIADNE_REPLAY

    steps = [(t, s) for t in traces for s in t.steps[:-1]]
    chosen = steps[:: max(1, len(steps) // count)][:count]
    times = []
    for trace, step in chosen:
        thread = {"configurable": {"thread_id": trace.thread_id}}
        before = next(s for s in graph.get_state_history(thread) if step.checkpoint.task_id in {t.id for t in s.tasks})
        started = time.perf_counter()  # as a replay's (the recorder, seeing it, keeps out)
        graph.invoke(None, {**before.config, "metadata": {ARIADNE_REPLAY: True}}, interrupt_before=["tools"])
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(calls: int, runs: int, *, profiler: cProfile.Profile | None = None) -> dict[str, Any]:
    """The agent's and the audit's times at ``calls``; with ``profiler``, the audit runs trace by trace on this thread
    (a profiler sees one thread), profiled."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    import ariadne_lc
    from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
    from ariadne_lc.testing import lookup, lookup_model, lookup_question

    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(calls), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    config = {"recursion_limit": 4 * calls + 10}
    graph.invoke({"messages": [("user", lookup_question(calls, runs))]}, {**config, "configurable": {"thread_id": "w"}})
    (warm,) = store.list_traces()
    started = time.perf_counter()
    for run in range(runs):
        graph.invoke(
            {"messages": [("user", lookup_question(calls, run))]}, {**config, "configurable": {"thread_id": f"r{run}"}}
        )
    own = time.perf_counter() - started
    recorded = sorted((t for t in store.list_traces() if t.trace_id != warm.trace_id), key=lambda t: t.thread_id or "")
    # the budget's sample is seeded by the trace id, fresh at each recording: named after the run, both sides audit
    # the same units
    traces = [t.model_copy(update={"trace_id": f"k{calls}-{t.thread_id}"}) for t in recorded]
    steps = sum(len(t.steps) for t in traces)
    Auditor(graph).audit_batch([warm])
    spent = _timed_replays()
    started = time.perf_counter()
    if profiler is None:
        results = Auditor(graph).audit_batch(traces).results
    else:
        auditor = Auditor(graph)
        profiler.enable()
        results = [r for t in traces for r in auditor.audit(t)]
        profiler.disable()
    wall = time.perf_counter() - started
    floor = _floor(graph, [warm], 8)  # after the audit: its time-travel forks add checkpoints to the warm-up thread
    model_calls = sum(r.model_calls for r in results)
    replayed = sum(s.model_calls for s in spent.values())
    expected = spent["rerun"].model_calls * floor + spent["replay"].model_calls * own / steps
    dumps = sorted(
        json.dumps(_stable(r.model_dump(mode="json")), sort_keys=True)
        for r in sorted(results, key=lambda r: (r.thread_id or "", r.plan_key or ""))
    )
    return {
        "ariadne_lc": str(Path(ariadne_lc.__file__).parent),
        "own_ms": 1000 * own / steps,
        "floor_ms": 1000 * floor,
        "replay_ms": 1000 * sum(s.seconds for s in spent.values()) / replayed,
        "over_floor": sum(s.seconds for s in spent.values()) / expected,
        "rerun_ms": 1000 * spent["rerun"].seconds / max(1, spent["rerun"].model_calls),
        "audit_ms": 1000 * wall / model_calls,
        "model_calls": model_calls,
        "reruns": spent["rerun"].model_calls,
        "results": len(results),
        "digest": hashlib.sha256("\n".join(dumps).encode()).hexdigest()[:16],
        "dumps": dumps,
    }


def profile(calls: int, runs: int) -> None:
    """This tree's audit at ``calls``, profiled: the top functions by own time, then by cumulative time."""
    profiler = cProfile.Profile()
    measured = measure(calls, runs, profiler=profiler)
    print({k: v for k, v in measured.items() if k != "dumps"})
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


# -- the driver ----------------------------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> float:
    return (max(values) - min(values)) / 2 / statistics.median(values)


def _reruns(runs: Sequence[dict[str, Any]]) -> str:
    """Re-runs, their CPU per call, LangGraph's own floor for one, and the replayer's time over its floor."""
    rerun = statistics.median(r["rerun_ms"] for r in runs)
    floor = statistics.median(r["floor_ms"] for r in runs)
    over = statistics.median(r["over_floor"] for r in runs)
    return f"{runs[0]['reruns']:>7} {rerun:>9.2f} {floor:>8.2f} {over:>6.2f}x"


def report(sizes: Sequence[int], samples: dict[str, dict[int, list[dict[str, Any]]]]) -> list[str]:
    """Print the table; returns the targets missed and the sizes whose results differ."""
    print(
        f"{'K':>4} {'side':6} {'own ms/step':>11} {'replay ms/call':>14} {'x step':>7} {'audit ms/call':>13} "
        f"{'x step':>7} {'spread':>7} {'calls':>5} {'results':>7} {'re-runs':>7} {'re-run ms':>9} {'floor ms':>8} "
        f"{'x floor':>7}"
    )
    failed = []
    for k in sizes:
        for side, runs in samples.items():
            own = statistics.median(r["own_ms"] for r in runs[k])
            replay = statistics.median(r["replay_ms"] / r["own_ms"] for r in runs[k])
            audit = statistics.median(r["audit_ms"] / r["own_ms"] for r in runs[k])
            noise = max(spread([r["replay_ms"] for r in runs[k]]), spread([r["audit_ms"] for r in runs[k]]))
            print(
                f"{k:>4} {side:6} {own:>11.2f} {statistics.median(r['replay_ms'] for r in runs[k]):>14.2f} "
                f"{replay:>6.2f}x {statistics.median(r['audit_ms'] for r in runs[k]):>13.2f} {audit:>6.2f}x "
                f"{noise:>6.0%} {runs[k][0]['model_calls']:>5} {runs[k][0]['results']:>7} {_reruns(runs[k])}"
            )
            if side == "after" and replay > REPLAY_TARGET:
                failed.append(f"K={k}: replay {replay:.2f}x the agent's step (target <= {REPLAY_TARGET}x)")
            if side == "after" and audit > AUDIT_TARGET:
                failed.append(f"K={k}: audit {audit:.2f}x the agent's step (target <= {AUDIT_TARGET}x)")
        digests = {r["digest"] for runs in samples.values() for r in runs[k]}
        if len(digests) > 1:
            before, after = (samples[side][k][0]["dumps"] for side in samples)
            first = next((b, a) for b, a in zip(before, after, strict=False) if b != a) if before != after else None
            failed.append(f"K={k}: the results differ between the sides ({len(digests)} digests); first: {first}")
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="the commit measured as 'before'")
    parser.add_argument("--rounds", type=int, default=3, help="measuring processes per side and K (median printed)")
    parser.add_argument("--runs", type=int, default=2, help="recorded runs audited per K and process")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="the K measured, comma-separated")
    parser.add_argument("--after", type=Path, default=ROOT, help="the tree measured as 'after' (default: this one)")
    parser.add_argument("--profile", type=int, default=0, help="profile this tree's audit at this K, and stop")
    parser.add_argument("--measure", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.runs)))
        return
    if args.profile:
        profile(args.profile, args.runs)
        return
    sizes = [int(k) for k in args.sizes.split(",")]
    sides = {"before": worktree(args.base), "after": args.after.resolve()}
    samples: dict[str, dict[int, list[dict[str, Any]]]] = {side: {k: [] for k in sizes} for side in sides}
    for _ in range(args.rounds):
        for k in sizes:
            for side, root in sides.items():
                samples[side][k].append(measure_side(__file__, root, [str(k), "--runs", str(args.runs)]))
    print(f"before: {args.base} ({sides['before']}), after: {sides['after']}")
    print(f"{args.runs} runs audited per K and process, {args.rounds} rounds per side: medians, spread half the range")
    failed = report(sizes, samples)
    print("\n".join(failed) if failed else "every target met; the results are the same on both sides")


if __name__ == "__main__":
    main()
