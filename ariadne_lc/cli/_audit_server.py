"""``ariadne-lc audit --server URL``: audit a LangGraph Server deployment's threads (see docs/deploy.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ariadne_lc.audit import StepSelector
from ariadne_lc.cli._calibration_opt import calibrate_report
from ariadne_lc.cli._common import console, fail
from ariadne_lc.cli._gate import Gate
from ariadne_lc.cli._pipeline import CallBudget, audit_traces
from ariadne_lc.cli._summary import print_summary
from ariadne_lc.report import write_audit_reports
from ariadne_lc.store import SQLiteResultStore, SQLiteTraceStore
from ariadne_lc.trace import Trace

__all__ = ["audit_server"]


def _server_traces(
    remote: Any, assistant: str | None, threads: list[str], traces: Path | None, limit: int | None
) -> list[Trace]:
    """The traces to audit: recorded ones (``--traces``), else read off the threads' checkpoints."""
    if traces is not None:
        recorded = SQLiteTraceStore(traces).list_traces()
        if threads:
            recorded = [t for t in recorded if t.thread_id in threads]
        return recorded[-limit:] if limit else recorded
    if not threads:
        if assistant is None:
            fail("with --server, name the --assistant (the graph in langgraph.json) or the --thread(s) to audit")
        graph_id = remote.server.assistant_graph_id(assistant)
        found = remote.server.threads(metadata={"graph_id": graph_id}, limit=limit or 100)
        threads = [str(t["thread_id"]) for t in found]
    out: list[Trace] = []
    for thread_id in threads:
        out.extend(remote.traces(thread_id))
    return out[-limit:] if limit else out


def audit_server(
    compiled: Any,
    spec: str,
    *,
    server: str,
    assistant: str | None,
    threads: list[str],
    traces: Path | None,
    api_key: str | None,
    write_verdicts: bool,
    output: Path,
    kinds: list[str],
    selector: StepSelector | None,
    limit: int | None,
    concurrency: int,
    max_calls: int | None,
    held: Gate,
    calibration: Path | None,
    model: str | None,
    auditor_kwargs: dict[str, Any],
    detail: bool = False,
) -> None:
    """Read the turns (recorded, or off the checkpoints), audit them by local replay, report; exit like ``audit``."""
    from ariadne_lc.server import RemoteAuditor

    tau, lam = auditor_kwargs["tau"], auditor_kwargs["lam"]
    with RemoteAuditor(compiled, server, api_key=api_key, write_verdicts=write_verdicts, **auditor_kwargs) as remote:
        remote.server.check()
        found = _server_traces(remote, assistant, threads, traces, limit)
        auditable = [t for t in found if t.final_answer is not None]
        console.print(
            f"{server}: {len(found)} turns, {len(auditable)} finished with an answer; interventions: {', '.join(kinds)}"
        )
        output.mkdir(parents=True, exist_ok=True)
        budget = CallBudget(max_calls)
        report = audit_traces(
            remote,
            auditable,
            interventions=kinds,
            step=selector,
            results=SQLiteResultStore(output / "results.db"),
            budget=budget,
            concurrency=concurrency,
        )
    report = calibrate_report(report, calibration, model=model, tau=tau, lam=lam, critic="rule", scorer="answer")
    title = f"Causal faithfulness audit of {spec} on {server}"
    paths = write_audit_reports(report, output, title=title, graph=spec)
    print_summary(report, title, detail=detail)
    if budget.stopped:
        console.print(f"[yellow]stopped early: {budget.stopped}; partial results saved[/yellow]")
    written = " (verdicts written to thread metadata)" if write_verdicts else " (nothing written to the server)"
    console.print(f"results: {output / 'results.db'}; reports: {', '.join(str(p) for p in paths.values())}{written}")
    raise typer.Exit(held.exit_code(report))
