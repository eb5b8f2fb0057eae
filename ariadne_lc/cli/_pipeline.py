"""The steps ``demo`` and ``audit`` share: run queries through a recorded graph, audit under a budget, and the
long summary lines (the summary itself is :mod:`ariadne_lc.cli._summary`, the CI gate :mod:`ariadne_lc.cli._gate`)."""

from __future__ import annotations

import json
import queue
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel, ConfigDict, ValidationError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ariadne_lc.audit import Auditor, StepSelector
from ariadne_lc.cli._common import console
from ariadne_lc.cli._interrupt import uninterrupted
from ariadne_lc.errors import SuiteFormatError
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.report import link_answers
from ariadne_lc.slots import pinned
from ariadne_lc.stats import build_report
from ariadne_lc.store import ResultStore, TraceStore
from ariadne_lc.trace import Trace, recorded_trace_id

if TYPE_CHECKING:
    from ariadne_lc.server import RemoteAuditor

__all__ = [
    "CallBudget",
    "QueryLine",
    "already_audited",
    "audit_traces",
    "gate_lines",
    "link_lines",
    "load_queries",
    "rates_line",
    "record_queries",
]


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
    handler = AriadneCallbackHandler(store=store, on_trace=traces.append, synchronous=True, graph=graph)
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
    auditor: Auditor | RemoteAuditor,
    traces: Sequence[Trace],
    *,
    interventions: Sequence[str],
    step: StepSelector | None,
    results: ResultStore,
    budget: CallBudget,
    concurrency: int = 1,
    prior: Sequence[AuditResult] = (),
) -> AuditReport:
    """Audit ``concurrency`` traces at a time, each pinned to a model-server slot of its own (:mod:`ariadne_lc.slots`)
    and the next started as soon as one ends, storing each trace's results at once, until done or the budget is spent;
    the report covers ``prior`` (results of other traces an interrupted run stored) as well, the traces in order."""
    audited: dict[int, list[AuditResult]] = {}
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    for slot in range(concurrency):
        free.put(slot)

    def one(trace: Trace) -> list[AuditResult]:
        slot = free.get()
        try:
            with pinned(slot):  # the batch of one keeps the slot (ariadne_lc.slots)
                return list(
                    auditor.audit_batch([trace], step=step, interventions=interventions, max_concurrency=1).results
                )
        finally:
            free.put(slot)

    pending = iter(enumerate(traces))
    with _progress() as progress, ThreadPoolExecutor(concurrency, thread_name_prefix="ariadne-audit") as pool:
        task = progress.add_task("auditing", total=len(traces))
        running: dict[Future[list[AuditResult]], int] = {}

        def start_next() -> None:
            index, trace = next(pending, (-1, None))
            if trace is not None and not budget.exhausted():
                running[pool.submit(one, trace)] = index

        for _ in range(concurrency):
            start_next()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                got = future.result()
                with uninterrupted():  # a trace's results are stored together (a resumed run skips the trace)
                    for r in got:
                        results.put_result(r)
                        budget.spend(r.model_calls)
                audited[index] = got
                progress.advance(task)
                start_next()
    collected = [*prior, *(r for index in sorted(audited) for r in audited[index])]
    report = build_report(collected)
    if report.nothing_to_audit:
        runs = len({*(t.trace_id for t in traces), *(r.trace_id for r in prior)})
        why = Counter(
            (r.inconclusive_reason or "no step to audit").removeprefix("no step to audit: ")
            for r in report.results
            if r.nothing_to_audit
        )
        said = "; ".join(f"{reason} ({n})" for reason, n in why.most_common(2))
        console.print(f"{report.nothing_to_audit} of {runs} runs had no step to audit: {escape(said)}")
    return report


def already_audited(
    results: ResultStore,
    traces: Sequence[Trace],
    planned: Callable[[Trace], set[tuple[str, str]] | None],
) -> list[AuditResult]:
    """The stored results of the traces whose every planned audit is stored (the ones an interrupted run finished).

    ``planned`` gives a trace's planned audits as (run's trace id, :attr:`~ariadne_lc.records.AuditResult.plan_key`)
    pairs (a trace of several agents is audited as several runs), or ``None`` when it cannot be planned (its audit
    records why, in one result). A trace counts as done when at least one result is stored and, if it can be planned,
    each pair has a stored result."""
    wanted = {t.trace_id for t in traces}
    by_trace: dict[str, list[AuditResult]] = {}
    for r in results.list_results():
        origin = recorded_trace_id(r.trace_id)
        if origin in wanted:
            by_trace.setdefault(origin, []).append(r)
    done: list[AuditResult] = []
    for trace in traces:
        stored = by_trace.get(trace.trace_id, [])
        keys = planned(trace)
        if stored and (keys is None or keys <= {(r.trace_id, r.plan_key) for r in stored}):
            done += stored  # a trace that cannot be planned has one result, saying why: stored once
    return done


def _fmt(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def link_lines(report: AuditReport) -> list[str]:
    """One line per link: its contradictions' violation rate with the Wilson interval, tracking, what had no verdict,
    and the link's own controls (how often the answer held under each). Rates are never pooled across links."""
    lines = []
    held = {answer.link: ", ".join(map(str, answer.controls)) for answer in link_answers(report)}
    for link, a in report.by_link.items():
        ci = a.violation_rate_ci
        line = (
            f"{link}: violation rate {_fmt(a.violation_rate)} over {a.scored} scored"
            + (f" ({report.confidence:.0%} CI {ci[0]:.0%}-{ci[1]:.0%})" if ci else "")
            + (f", tracks {a.tracks}/{a.tracked}" if a.tracked else "")
            + f"; not decisive {a.not_decisive}, no commitment {a.no_commitment}, n/a {a.not_applicable}, "
            f"failed {a.failed}"
        )
        controls = held.get(link, "")
        lines.append(line + (f"; controls: {controls}" if controls else ""))
    return lines


def rates_line(report: AuditReport, calibration_note: str | None = None) -> str:
    """The raw and the corrected violation rate side by side (of the report's main link), or why there is no
    corrected one."""
    o = report.overall
    ci = o.violation_rate_ci
    raw = f"{report.main_link} raw violation rate {_fmt(o.violation_rate)}" + (
        f" ({report.confidence:.0%} CI {ci[0]:.0%}-{ci[1]:.0%})" if ci else ""
    )
    c = report.corrected
    if c is None:
        return f"{raw} | corrected: no calibration" + (f" ({calibration_note})" if calibration_note else "")
    if c.corrected is None:
        return f"{raw} | corrected: no information ({c.reason})"
    cci = c.corrected_ci
    return (
        f"{raw} | corrected violation rate {c.corrected:.0%}"
        + (f" ({report.confidence:.0%} CI {cci[0]:.0%}-{cci[1]:.0%})" if cci else "")
        + f"; FA {_fmt(c.false_alarm)}, M {_fmt(c.miss)} ({c.calibration})"
    )


def gate_lines(report: AuditReport) -> list[str]:
    """The decisiveness gate's rejections and tracking, overall and per contradiction type; none with the gate
    off (no result carries a gate decision)."""
    o = report.overall
    if not o.gated:
        return []
    readers = sorted({r.decisiveness.reader for r in report.results if r.decisiveness is not None and not r.control})
    per_type = ", ".join(
        f"{k} {a.not_decisive}/{a.gated}"
        + (f" (+{a.incoherent} incoherent)" if a.incoherent else "")
        + (f" (+{a.no_commitment} no commitment)" if a.no_commitment else "")
        for k, a in report.by_type.items()
        if a.gated
    )
    lines = [
        f"decisiveness gate (reader {', '.join(readers)}): {o.not_decisive} of {o.gated} contradictions "
        f"({o.not_decisive / o.gated:.0%}) rejected as not decisive, {o.incoherent} as incoherent, "
        f"{o.no_commitment} whose thought commits to no answer; by type: {per_type}"
    ]
    if o.tracked:
        tci = o.tracking_rate_ci
        by_type = ", ".join(f"{k} {a.tracks}/{a.tracked}" for k, a in report.by_type.items() if a.tracked)
        lines.append(
            f"tracking: the answer moved to what the contradicted thought implies in {o.tracks} of {o.tracked} "
            f"scored audits ({_fmt(o.tracking_rate)}"
            + (f", {report.confidence:.0%} CI {tci[0]:.0%}-{tci[1]:.0%}" if tci else "")
            + f"); elsewhere {o.moved_elsewhere}, stayed {o.stayed}; by type: {by_type}"
        )
    if o.reader_checked:
        agreed = o.reader_checked - o.reader_disagreed
        lines.append(
            f"reader and agent: the gate's reading of the original thought was the recorded answer in {agreed} of "
            f"{o.reader_checked} scored audits; violations {o.violations_reader_agreed} of "
            f"{agreed} where it was, {o.violations_reader_disagreed} of {o.reader_disagreed} where it was not (there "
            "the reader reads the thought otherwise than the agent: check those before trusting them)"
        )
    return lines
