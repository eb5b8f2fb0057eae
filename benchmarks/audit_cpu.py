"""The audit's own CPU per unit, before and after: this tree against a base commit, side by side in one run.

The agent is :func:`ariadne_lc.testing.lookup_model` under ``create_agent`` + ``AriadneMiddleware`` (K lookups, each
after a one-line thought, then the sum; see ``benchmarks/long_runs.py``): the scripted model answers at once, so the
CPU measured is the audit's own (plan, critics, gates, forks, replays through LangGraph, scoring). A measuring
process records ``--traces`` runs, audits one more out of the measure (imports, first compilations), then audits
each run with a fresh ``Auditor(graph, ...).audit(trace)`` per setting, ``--repeats`` times, and reports the least
process CPU time (``time.process_time``) of those calls over the repeats (the one other processes disturbed least)
and the units audited (a unit: a thought step on one link, or a tool output; the distinct ``(trace, unit, link)`` of
the results' plan keys). The settings: the default plan, and ``contradictions_per_step=3``, each with the default
budget and in every-unit mode (``budget=None``).

"Before" runs the same measuring code in a subprocess whose ``PYTHONPATH`` is a git worktree of ``--base`` (made
under ``/tmp`` on first use, then reused); "after" in this tree. The two alternate, ``--rounds`` times each (the
median is printed), so that a machine's drift falls on both. The measuring code uses only what both have:
``Auditor(graph, contradictions_per_step=..., budget=...)``, ``.audit(trace)``, ``AuditResult.plan_key``.

Run: ``python benchmarks/audit_cpu.py [--base f745132] [--rounds 3] [--traces 4] [--calls 8]`` (``--after DIR``:
another tree as "after", e.g. a second worktree, to compare two commits).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sides import ROOT, measure_side, worktree

DEFAULT_BASE = "f745132"


@dataclass(frozen=True)
class Setting:
    name: str
    contradictions_per_step: int
    every_unit: bool

    def options(self) -> dict[str, Any]:
        """The auditor's keywords (the budget only when every unit: each side keeps its own default)."""
        out: dict[str, Any] = {"contradictions_per_step": self.contradictions_per_step}
        if self.every_unit:
            out["budget"] = None
        return out


SETTINGS = (
    Setting("default plan", 1, False),
    Setting("contradictions_per_step=3", 3, False),
    Setting("default plan, every unit", 1, True),
    Setting("contradictions_per_step=3, every unit", 3, True),
)


def unit_of(trace_id: str, plan_key: str) -> tuple[str, str, str, str]:
    """The unit a plan key (``steps:unit:link:kind:variant``, the unit ``thought`` or ``output:<call>``) audits:
    trace, steps, unit and link."""
    steps, rest = plan_key.split(":", 1)
    unit, link, _kind, _variant = rest.rsplit(":", 3)
    return trace_id, steps, unit, link


def ms_per_unit(samples: Sequence[dict[str, float]]) -> tuple[float, float]:
    """The median over rounds of the CPU milliseconds per unit of one side and setting, and the rounds' spread: half
    their range, relative to the median."""
    values = [1000 * s["cpu_s"] / s["units"] for s in samples if s["units"]]
    middle = statistics.median(values)
    return middle, (max(values) - min(values)) / 2 / middle


def table(rows: Sequence[tuple[str, int, float, float, float]]) -> str:
    """``setting, units, before, after, ratio, spread`` rows, as printed (ratio: after / before, below 1 is faster;
    spread: the larger side's, a ratio within it of 1 is no difference)."""
    lines = [f"{'setting':40} {'units':>5} {'ms/unit before':>14} {'after':>8} {'after/before':>12} {'spread':>7}"]
    lines += [f"{name:40} {units:>5} {before:>14.2f} {after:>8.2f} {after / before:>11.2f}x {spread:>6.0%}"
              for name, units, before, after, spread in rows]  # fmt: skip
    return "\n".join(lines)


# -- the measuring process (runs against whichever ariadne_lc its PYTHONPATH holds) ---------------------------------


def measure(traces: int, calls: int, repeats: int) -> dict[str, Any]:
    """CPU seconds (the least of ``repeats`` audits of the runs) and units per setting, for ``traces`` recorded runs
    of ``calls`` lookups."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    import ariadne_lc
    from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
    from ariadne_lc.testing import lookup, lookup_model, lookup_question

    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(calls), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    for run in range(traces + 1):
        graph.invoke(
            {"messages": [("user", lookup_question(calls, run))]},
            {"configurable": {"thread_id": f"cpu-{run}"}, "recursion_limit": 4 * calls + 10},
        )
    warm, *recorded = store.list_traces()
    out: dict[str, Any] = {"ariadne_lc": str(Path(ariadne_lc.__file__).parent), "settings": {}}
    for setting in SETTINGS:
        Auditor(graph, **setting.options()).audit(warm)
        units: set[tuple[str, str, str, str]] = set()
        audits = 0
        cpus = []
        for _ in range(repeats):
            gc.collect()
            cpu = 0.0
            audits = 0
            for trace in recorded:
                auditor = Auditor(graph, **setting.options())
                started = time.process_time()
                results = auditor.audit(trace)
                cpu += time.process_time() - started
                audits += len(results)
                units.update(unit_of(r.trace_id, r.plan_key) for r in results if r.plan_key)
            cpus.append(cpu)
        out["settings"][setting.name] = {"cpu_s": min(cpus), "units": len(units), "audits": audits}
    return out


# -- the driver ----------------------------------------------------------------------------------------------------


def _counts(traces: int, calls: int, repeats: int) -> list[str]:
    return ["--traces", str(traces), "--calls", str(calls), "--repeats", str(repeats)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="the commit measured as 'before'")
    parser.add_argument("--rounds", type=int, default=3, help="measuring processes per side (the median is printed)")
    parser.add_argument("--traces", type=int, default=4, help="recorded runs audited per setting and process")
    parser.add_argument("--calls", type=int, default=8, help="lookups per run (K)")
    parser.add_argument("--repeats", type=int, default=3, help="audits of the runs per process (the least counts)")
    parser.add_argument("--after", type=Path, default=ROOT, help="the tree measured as 'after' (default: this one)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.traces, args.calls, args.repeats)))
        return
    sides = {"before": worktree(args.base), "after": args.after.resolve()}
    samples: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, root in sides.items():
            measured = measure_side(__file__, root, _counts(args.traces, args.calls, args.repeats))
            samples[side].append(measured["settings"])
    rows = []
    for setting in SETTINGS:
        units = {side: {s[setting.name]["units"] for s in runs} for side, runs in samples.items()}
        if len(units["before"] | units["after"]) > 1:
            print(f"{setting.name}: the sides audited different units ({units}): a per-unit ratio only")
        (before, spread_before), (after, spread_after) = (
            ms_per_unit([s[setting.name] for s in samples[side]]) for side in sides
        )
        rows.append((setting.name, max(units["after"]), before, after, max(spread_before, spread_after)))
    print(f"before: {args.base} ({sides['before']}), after: {sides['after']}; {args.traces} runs of K = {args.calls}")
    print(f"process CPU of Auditor.audit per unit: median of {args.rounds} rounds, each the least of {args.repeats}")
    print(table(rows))


if __name__ == "__main__":
    main()
