"""``ariadne-lc audit --dry-run``: what the plan would audit and spend, per run length, before anything is spent."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ariadne_lc.audit import Auditor, StepSelector
from ariadne_lc.cli._common import console
from ariadne_lc.cli._pipeline import load_queries
from ariadne_lc.errors import SubgraphNotReplayableError, TraceError
from ariadne_lc.replay._own import own_graph_of
from ariadne_lc.store import SQLiteTraceStore
from ariadne_lc.trace import Trace

__all__ = ["cannot_run", "dry_run_audit", "plan_costs"]


def plan_costs(auditor: Auditor, trace: Trace, selector: StepSelector | None, kinds: Sequence[str]) -> tuple[int, int]:
    """(audits, model calls at most) ``auditor`` plans on ``trace``; (0, 0) when it cannot be planned (its audit
    records why)."""
    try:
        runs = auditor.planned(trace, selector, kinds)
    except TraceError:  # a step out of range, or the answer step
        return 0, 0
    return sum(len(s.audits) for _, s in runs), sum(s.units.planned_calls for _, s in runs)


def cannot_run(auditor: Auditor, trace: Trace) -> str | None:
    """Why ``trace``'s audits cannot run as planned, found before any model call (a sub-agent whose own graph the
    auditor cannot find), else ``None``."""
    try:
        own_graph_of(auditor.replayer, trace)
    except SubgraphNotReplayableError as exc:
        return str(exc)
    return None


def dry_run_audit(
    traces: Path | None,
    queries: Path | None,
    kinds: list[str],
    selector: StepSelector | None,
    limit: int | None,
    auditor: Auditor,
) -> None:
    """Print the plan's audits and model calls per trace, by the runs' length, with the budget and every unit."""
    budget = "every unit" if auditor.budget is None else f"budget {auditor.budget:g}x the run's own model calls"
    if queries is not None:
        n = len(load_queries(queries)[:limit])
        console.print(
            f"dry run: {n} queries -> {n} agent runs, then their audits ({budget}: see docs/method.md#the-budget)"
        )
        return
    assert traces is not None
    recorded = [t for t in SQLiteTraceStore(traces).list_traces(limit=limit) if t.final_answer is not None]
    every = auditor.with_budget(None)
    by_length: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for t in recorded:
        audits, calls = plan_costs(auditor, t, selector, kinds)
        by_length[len(t.steps)].append((audits, calls, plan_costs(every, t, selector, kinds)[1]))
    rows = [row for rows in by_length.values() for row in rows]
    audits, calls = sum(r[0] for r in rows), sum(r[1] for r in rows)
    own = sum(len(t.steps) for t in recorded)
    n = len(recorded)
    ratio = f" ({calls / own:.1f}x the runs' own {own} calls)" if own else ""
    console.print(
        f"dry run ({budget}): {n} traces -> {audits} audits, at most {calls} model calls{ratio}; a gate that refuses "
        "an edit saves its replay"
    )
    refused = [(t, why) for t in recorded if (why := cannot_run(auditor, t)) is not None]
    for t, why in refused[:3]:
        console.print(f"[yellow]warning: the audits of trace {t.trace_id} ({t.agent_name or 'agent'}) cannot run: "
                      f"{escape(why)}[/yellow]", highlight=False, soft_wrap=True)  # fmt: skip
    if len(refused) > 3:
        console.print(f"[yellow]warning: {len(refused) - 3} more traces cannot be audited as planned[/yellow]")
    if not rows:
        return
    table = Table("model calls per run", "runs", "audits per run", f"calls per run ({budget})", "every unit")
    for length in sorted(by_length):
        group = by_length[length]
        k = len(group)
        mean = [sum(r[i] for r in group) / k for i in range(3)]
        table.add_row(
            str(length), str(k), f"{mean[0]:.1f}", f"{mean[1]:.1f} ({mean[1] / length:.1f}x)",
            f"{mean[2]:.1f} ({mean[2] / length:.1f}x)",
        )  # fmt: skip
    console.print(table)
