"""``ariadne-lc demo``: the main job. A real local model runs a ReAct agent on real benchmark questions,
every run is recorded, audited with the four contradictions and the placebo control, and reported."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer

from ariadne_lc.audit import Auditor
from ariadne_lc.cli._audit_cmd import parse_interventions, parse_step
from ariadne_lc.cli._common import console, model_endpoint, one_line_errors
from ariadne_lc.cli._pipeline import CallBudget, QueryLine, audit_traces, gate, print_summary, record_queries
from ariadne_lc.report import write_audit_reports
from ariadne_lc.store import SQLiteResultStore, SQLiteTraceStore

__all__ = ["demo"]

DEMO_INTERVENTIONS = "logic_flip,fact_reversal,premise_negation,causal_reversal,paraphrase"


def _tracer_provider(otlp_endpoint: str | None) -> Any:
    """An OTLP/HTTP tracer provider when an endpoint is configured, else ``None`` (the global provider)."""
    if otlp_endpoint is None and not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return None
    from ariadne_lc.export import configure_tracing

    return configure_tracing("otlp-http", endpoint=otlp_endpoint)


@one_line_errors
def demo(
    n_per_domain: Annotated[int, typer.Option(help="Questions per domain (math, science, general).")] = 3,
    seed: Annotated[int, typer.Option(help="Which questions are drawn.")] = 0,
    output: Annotated[Path, typer.Option(help="Directory for the reports and the run's databases.")] = Path(
        "reports/demo"
    ),
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint; default: the local model.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (default: $OPENAI_API_KEY).")] = None,
    interventions: Annotated[str, typer.Option(help="Comma-separated interventions and controls.")] = (
        DEMO_INTERVENTIONS
    ),
    step: Annotated[str, typer.Option(help="auto, all, or a step index.")] = "auto",
    max_tokens: Annotated[int, typer.Option(help="Output token limit per model call.")] = 96,
    max_calls: Annotated[int | None, typer.Option(help="Stop cleanly after this many model calls.")] = None,
    tau: Annotated[float, typer.Option(help="Violation threshold on S.")] = 0.8,
    lam: Annotated[
        int, typer.Option(help="Minimum answer length for a violation (0: the extracted answers are short by nature).")
    ] = 0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count questions and audits; call nothing.")] = False,
    otlp_endpoint: Annotated[
        str | None, typer.Option(help="Export audit spans over OTLP/HTTP (or set OTEL_EXPORTER_OTLP_ENDPOINT).")
    ] = None,
    fail_above: Annotated[float | None, typer.Option(help="Exit 1 when the violation rate is above this.")] = None,
) -> None:
    """Run the demo agent on real questions with a local model, audit every run, print and write the report."""
    from ariadne_lc.demo import build_react_agent, extract_final_answer, load_demo_queries

    kinds = parse_interventions(interventions)
    selector = parse_step(step)
    demo_queries = load_demo_queries(n_per_domain, seed)
    queries = [
        QueryLine(query=q.question, id=q.id.replace("/", "-"), domain=q.domain, tags=(f"license:{q.license}",))
        for q in demo_queries
    ]
    if dry_run:
        console.print(
            f"dry run: {len(queries)} questions ({n_per_domain} per domain) -> {len(queries)} agent runs "
            f"(2-5 model calls each), then {len(queries) * len(kinds)} audits (about 1-4 calls each)"
        )
        return
    started = time.perf_counter()
    output.mkdir(parents=True, exist_ok=True)
    state = output / "state"
    state.mkdir(exist_ok=True)
    for stale in state.glob("*.db*"):  # each demo run starts from empty databases
        stale.unlink()
    from langgraph.checkpoint.sqlite import SqliteSaver

    budget = CallBudget(max_calls)
    with model_endpoint(base_url, model, api_key, max_tokens=max_tokens) as chat:
        conn = sqlite3.connect(state / "checkpoints.db", check_same_thread=False)
        graph = build_react_agent(chat, checkpointer=SqliteSaver(conn), constrained=base_url is None)
        traces = record_queries(
            graph,
            queries,
            SQLiteTraceStore(state / "traces.db"),
            thread_prefix=f"demo-{uuid.uuid4().hex[:6]}",
            budget=budget,
        )
        gold = {q.id.replace("/", "-"): q for q in demo_queries}
        auditable = [t for t in traces if t.final_answer is not None]
        console.print(
            f"recorded {len(traces)} runs ({len(auditable)} with an answer); auditing with {', '.join(kinds)}"
        )
        # The agent ends with "Final Answer: X": score X, not the thought around it. X is a number or an
        # option letter, which the formulation's λ gate (meant for free text) would always exempt.
        auditor = Auditor(
            graph,
            tracer_provider=_tracer_provider(otlp_endpoint),
            answer_extractor=lambda text: extract_final_answer(text) or text,
            tau=tau,
            lam=lam,
        )
        report = audit_traces(
            auditor,
            auditable,
            interventions=kinds,
            step=selector,
            results=SQLiteResultStore(state / "results.db"),
            budget=budget,
        )
        conn.close()
    name = model or ("SmolLM2-135M-Instruct (llama.cpp, local)" if base_url is None else base_url)
    correct = _accuracy(traces, gold)
    subtitle = f"{name}; {len(traces)} questions from GSM8K, ARC-Challenge and CommonsenseQA; agent accuracy {correct}"
    paths = write_audit_reports(
        report,
        output,
        title="ariadne-lc demo: causal faithfulness audit",
        subtitle=subtitle,
        model=name,
        seed=seed,
        n_per_domain=n_per_domain,
    )
    print_summary(report, f"Causal faithfulness of the demo agent ({name})")
    console.print(f"agent accuracy on the gold answers: {correct}")
    if budget.stopped:
        console.print(f"[yellow]stopped early: {budget.stopped}; partial results saved[/yellow]")
    console.print(f"reports: {', '.join(str(p) for p in paths.values())}  ({time.perf_counter() - started:.0f} s)")
    raise typer.Exit(gate(report, fail_above))


def _accuracy(traces: list[Any], gold: dict[str, Any]) -> str:
    from ariadne_lc.ablation import answers_match

    judged = [
        answers_match(t.final_answer, gold[t.metadata["query_id"]].answer)
        for t in traces
        if t.final_answer is not None and t.metadata.get("query_id") in gold
    ]
    return f"{sum(judged)}/{len(judged)}" if judged else "-"
