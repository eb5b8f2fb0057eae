"""The steps ``demo`` and ``audit`` share: run queries through a recorded graph, audit under a budget,
print the table, and gate CI on the violation rate."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel, ConfigDict, ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ariadne_lc.audit import Auditor, StepSelector
from ariadne_lc.cli._common import EXIT_GATE, console
from ariadne_lc.errors import SuiteFormatError
from ariadne_lc.interventions import is_control
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.report import domain_group
from ariadne_lc.stats import aggregate, build_report
from ariadne_lc.store import ResultStore, TraceStore
from ariadne_lc.trace import Trace

__all__ = ["CallBudget", "QueryLine", "audit_traces", "gate", "load_queries", "print_summary", "record_queries"]


class QueryLine(BaseModel):
    """One line of a query file: ``{"query": "...", "id": "...", "domain": "...", "tags": [...]}``."""

    model_config = ConfigDict(frozen=True, extra="allow")

    query: str
    id: str | None = None
    domain: str | None = None
    tags: tuple[str, ...] = ()


def load_queries(path: Path) -> list[QueryLine]:
    """Queries from a JSONL file; a malformed line is a one-line error naming it."""
    if not path.is_file():
        raise SuiteFormatError(f"{path}: no such query file")
    out: list[QueryLine] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            out.append(QueryLine.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise SuiteFormatError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise SuiteFormatError(f"{path}:{number}: {problems}") from None
    if not out:
        raise SuiteFormatError(f"{path}: no queries")
    return out


@dataclass
class CallBudget:
    """Model-call budget shared by recording and auditing; ``None`` means unlimited."""

    max_calls: int | None
    used: int = 0
    stopped: str | None = field(default=None)

    def spend(self, calls: int) -> None:
        self.used += calls

    def exhausted(self) -> bool:
        if self.max_calls is not None and self.used >= self.max_calls:
            self.stopped = f"--max-calls={self.max_calls} reached after {self.used} model calls"
            return True
        return False


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )


class _CallCounter(BaseCallbackHandler):
    """Counts model calls of the recorded runs, for the budget."""

    run_inline = True

    def __init__(self) -> None:
        self.calls = 0

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1


def record_queries(
    graph: Any, queries: Sequence[QueryLine], store: TraceStore, *, thread_prefix: str, budget: CallBudget
) -> list[Trace]:
    """Run each query once through ``graph`` with a recorder; a failed run is recorded with its error."""
    traces: list[Trace] = []
    handler = AriadneCallbackHandler(store=store, on_trace=traces.append)
    counter = _CallCounter()
    with _progress() as progress:
        task = progress.add_task("running the agent", total=len(queries))
        for i, q in enumerate(queries):
            if budget.exhausted():
                break
            tags = [*q.tags, *([f"domain:{q.domain}"] if q.domain else [])]
            metadata = {"query_id": q.id or str(i), **({"domain": q.domain} if q.domain else {})}
            before = counter.calls
            try:
                graph.invoke(
                    {"messages": [("user", q.query)]},
                    {
                        "configurable": {"thread_id": f"{thread_prefix}-{q.id or i}"},
                        "callbacks": [handler, counter],
                        "tags": tags,
                        "metadata": metadata,
                    },
                )
            except Exception as exc:  # the trace records the error; the batch goes on
                console.print(f"[yellow]query {q.id or i} failed: {type(exc).__name__}: {exc}[/yellow]")
            budget.spend(counter.calls - before)
            progress.advance(task)
    return traces


def audit_traces(
    auditor: Auditor,
    traces: Sequence[Trace],
    *,
    interventions: Sequence[str],
    step: StepSelector,
    results: ResultStore,
    budget: CallBudget,
    concurrency: int = 1,
) -> AuditReport:
    """Audit ``concurrency`` traces at a time, storing each result at once, until done or the budget is spent."""
    collected: list[AuditResult] = []
    nothing_to_audit = 0
    with _progress() as progress:
        task = progress.add_task("auditing", total=len(traces))
        for start in range(0, len(traces), concurrency):
            if budget.exhausted():
                break
            chunk = traces[start : start + concurrency]
            batch = auditor.audit_batch(chunk, step=step, interventions=interventions, max_concurrency=concurrency)
            for r in batch.results:
                results.put_result(r)
                budget.spend(r.model_calls)
            audited = {r.trace_id for r in batch.results}
            nothing_to_audit += sum(t.trace_id not in audited for t in chunk)
            collected.extend(batch.results)
            progress.advance(task, len(chunk))
    if nothing_to_audit:
        console.print(
            f"{nothing_to_audit} of {len(traces)} runs had no step to audit (the agent answered in its first turn, "
            "so no reasoning step precedes the answer)"
        )
    return build_report(collected)


def _fmt(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def print_summary(report: AuditReport, title: str) -> None:
    """The table by domain and intervention type, with Wilson intervals; controls shown beside."""
    table = Table(title=title)
    for column in ("domain", "intervention", "scored", "violation rate", "95% CI", "mean φ", "n/a", "failed"):
        table.add_column(column, justify="left" if column in ("domain", "intervention") else "right")
    groups: dict[tuple[str, str], list[AuditResult]] = {}
    for r in report.results:
        groups.setdefault((domain_group(r), r.intervention_type), []).append(r)
    last_domain = None
    for (domain, kind), items in sorted(groups.items()):
        if last_domain is not None and domain != last_domain:
            table.add_section()
        last_domain = domain
        agg = aggregate(items)
        ci = agg.violation_rate_ci
        table.add_row(
            domain,
            f"{kind} [dim](control)[/dim]" if is_control(kind) else kind,
            str(agg.scored),
            _fmt(agg.violation_rate),
            f"[{ci[0]:.0%}, {ci[1]:.0%}]" if ci else "-",
            _fmt(agg.mean_phi, pct=False),
            str(agg.not_applicable),
            str(agg.failed),
        )
    console.print(table)
    o = report.overall
    ci = o.violation_rate_ci
    console.print(
        f"contradictions: violation rate {_fmt(o.violation_rate)} over {o.scored} scored audits"
        + (f" (95% CI {ci[0]:.0%}-{ci[1]:.0%})" if ci else "")
        + (f", mean φ {o.mean_phi:.2f}" if o.mean_phi is not None else "")
    )
    p = report.placebo
    if p is not None and p.queries:
        console.print(
            f"placebo (paraphrase): answer held in {_fmt(p.placebo_rate)} vs {_fmt(p.violation_rate)} under "
            f"contradictions over {p.queries} paired queries; placebo-corrected violation rate "
            f"{_fmt(p.corrected_violation_rate)} (paired test p = {_fmt(p.p_value, pct=False)})"
        )


def gate(report: AuditReport, fail_above: float | None) -> int:
    """0, or :data:`EXIT_GATE` when the contradiction violation rate is above ``fail_above``."""
    if fail_above is None:
        return 0
    rate = report.overall.violation_rate
    if rate is not None and rate > fail_above:
        console.print(f"[red]violation rate {rate:.1%} is above --fail-above {fail_above:.1%}[/red]")
        return EXIT_GATE
    return 0
