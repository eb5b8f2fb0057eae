"""What an audit of a long run costs, against the run itself: the default plan's budget at K = 4, 16, 48 and 100 calls.

The agent is :func:`ariadne_lc.testing.lookup_model` under ``create_agent`` + ``AriadneMiddleware``: K lookups, each
after a one-line thought, then the sum; faithful on every link by construction, so every scored verdict must say
``faithful``. Per K, a few runs are recorded and audited with every default (``Auditor(graph).audit_batch``), and
printed side by side in one run:

* the agent's own model calls per run and the audit's (default plan; target at most 4x at every K), their ratio,
* the dry run's prediction of the audit's calls (:meth:`~ariadne_lc.Auditor.planned`; target within 10%),
* model calls per scored verdict, and the scored verdicts per link per run (the fewest over the runs; target >= 1),
* the audit's wall time per replayed model call against the agent's own time per step (the framework's overhead:
  the scripted model answers at once, so this is all LangGraph, LangChain and ariadne_lc),
* every wrong verdict (target none), and with ``--every`` the every-unit mode (``budget=None``) beside it.

Run: ``python benchmarks/long_runs.py [--runs 3] [--every 16]`` (``--every K``: every-unit mode up to that K).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.records import LINKS, AuditResult
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import Trace

SIZES = (4, 16, 48, 100)
MAX_RATIO = 4.0
MAX_PREDICTION_ERROR = 0.10


def record(calls: int, runs: int) -> tuple[Any, list[Trace], float]:
    """The graph, ``runs`` recorded runs of ``calls`` lookups, and the agent's own wall time per model call."""
    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(calls), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    started = time.perf_counter()
    for run in range(runs):
        graph.invoke(
            {"messages": [("user", lookup_question(calls, run))]},
            {"configurable": {"thread_id": f"k{calls}-{run}"}, "recursion_limit": 4 * calls + 10},
        )
    own = time.perf_counter() - started
    traces = store.list_traces()
    return graph, traces, own / sum(len(t.steps) for t in traces)


def row(calls: int, runs: int, budget: float | None) -> dict[str, Any]:
    graph, traces, own_per_call = record(calls, runs)
    auditor = Auditor(graph, budget=budget)
    predicted = sum(s.units.planned_calls for t in traces for _, s in auditor.planned(t))
    started = time.perf_counter()
    results: list[AuditResult] = auditor.audit_batch(traces).results
    wall = time.perf_counter() - started
    own_calls = sum(len(t.steps) for t in traces) / len(traces)
    spent = sum(r.model_calls for r in results)
    verdicts = [r for r in results if r.status == "scored" and not r.control]
    per_link = {
        link: min(Counter(r.trace_id for r in verdicts if r.link == link).get(t.trace_id, 0) for t in traces)
        for link in LINKS
    }
    return {
        "K": calls,
        "mode": "every unit" if budget is None else f"budget {budget:g}x",
        "own": own_calls,
        "audit": spent / len(traces),
        "ratio": spent / len(traces) / own_calls,
        "predicted": predicted / len(traces),
        "per_verdict": spent / len(verdicts) if verdicts else float("nan"),
        "per_link": per_link,
        "wrong": sum(r.violation for r in verdicts),
        "cut": sum(r.error_type == "ReplayDidNotFinishError" for r in results),
        "overhead": (wall / spent) / own_per_call if spent else float("nan"),
        "ms_replayed": 1000 * wall / spent if spent else float("nan"),
        "ms_own": 1000 * own_per_call,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs recorded and audited per K")
    parser.add_argument("--every", type=int, default=16, help="also audit every unit, up to this K")
    args = parser.parse_args()
    record(2, 1)  # imports and first compilations out of the measured runs
    rows = [row(k, args.runs, 3.0) for k in SIZES]
    rows += [row(k, args.runs, None) for k in SIZES if k <= args.every]
    print(
        f"{'K':>4} {'mode':11} {'own calls':>9} {'audit calls':>11} {'ratio':>6} {'dry run':>8} {'calls/verdict':>13} "
        f"{'verdicts/run t->act obs->ans t->ans':>36} {'wrong':>5} {'cut':>3} {'ms/replayed':>11} {'ms/own':>6} "
        f"{'overhead':>8}"
    )
    failed = []
    for r in rows:
        links = " ".join(f"{r['per_link'][link]:>6}" for link in LINKS)
        print(
            f"{r['K']:>4} {r['mode']:11} {r['own']:>9.0f} {r['audit']:>11.1f} {r['ratio']:>5.2f}x "
            f"{r['predicted']:>8.1f} {r['per_verdict']:>13.2f} {links:>36} {r['wrong']:>5} {r['cut']:>3} "
            f"{r['ms_replayed']:>11.1f} {r['ms_own']:>6.1f} {r['overhead']:>7.1f}x"
        )
        if r["mode"] != "every unit":
            if r["ratio"] > MAX_RATIO:
                failed.append(f"K={r['K']}: the audit cost {r['ratio']:.2f}x the run (target <= {MAX_RATIO}x)")
            if abs(r["predicted"] - r["audit"]) > MAX_PREDICTION_ERROR * r["audit"]:
                failed.append(f"K={r['K']}: the dry run predicted {r['predicted']:.1f} calls, {r['audit']:.1f} ran")
            if min(r["per_link"].values()) < 1:
                failed.append(f"K={r['K']}: a link had no scored verdict on some run")
        if r["wrong"] or r["cut"]:
            failed.append(f"K={r['K']} ({r['mode']}): {r['wrong']} wrong verdicts, {r['cut']} replays cut short")
    print("\n".join(failed) if failed else "every target met")


if __name__ == "__main__":
    main()
