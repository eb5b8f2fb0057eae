"""``ariadne-lc demo``: the main job. A real local model runs a ReAct agent on real benchmark questions,
every run is recorded, audited with the five contradictions and the placebo control, and reported.

The audit is the one a user gets by default, the decisiveness gate on, with the agent's own model as the gate's
reader (it reads its own thoughts best; the same few-shot reader the calibration runs). The committed calibration of
the model it runs corrects the violation rate (:mod:`ariadne_lc.cli._demo_calibration`): the summary prints the raw
and the corrected rate side by side, or "no information" / "no calibration" with the reason, and how many
contradictions the gate rejected as not decisive, per type."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ariadne_lc.audit import Auditor
from ariadne_lc.cli._audit_cmd import parse_interventions, parse_step
from ariadne_lc.cli._common import console, model_endpoint, one_line_errors, output_directory
from ariadne_lc.cli._demo_calibration import committed_calibration, demo_calibration
from ariadne_lc.cli._demo_tools import QWEN_DEMO_MODEL, TOOL_DEMO_INTERVENTIONS, qwen_available, run_tool_demo
from ariadne_lc.cli._gate import FAIL_ABOVE_HELP, Gate, check_fraction
from ariadne_lc.cli._interrupt import interruptible
from ariadne_lc.cli._pipeline import CallBudget, QueryLine, audit_traces, record_queries
from ariadne_lc.cli._summary import DETAIL_HELP, print_summary
from ariadne_lc.report import write_audit_reports
from ariadne_lc.store import SQLiteResultStore, SQLiteTraceStore

__all__ = ["demo"]

_LOCAL_MODEL = "smollm2"
"""The local model the demo runs without ``--base-url`` (``model_endpoint`` starts it)."""

DEMO_QUESTION_SEED = 1000
"""The tool demo's word problems are drawn with this seed plus ``--seed`` (the calibration's seed is 21)."""
TOOL_QUESTIONS_PER_DOMAIN = 4
"""The tool demo asks this many word problems per ``--n-per-domain`` (12 by default): about two in three leave a
thought step (docs/demo.md), so that each link gets at least 20 scored audits."""

DEMO_INTERVENTIONS = "logic_flip,fact_reversal,premise_negation,causal_reversal,conclusion_swap,paraphrase"


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
    interventions: Annotated[
        str | None,
        typer.Option(help="Comma-separated interventions and controls (default: the chosen agent's set)."),
    ] = None,
    step: Annotated[
        str | None, typer.Option(help="auto, all, or a step index (default: all for the tool agent, else auto).")
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            help="tools: create_agent on Qwen2.5-Coder-0.5B with native tool calls, audited on every link; react: the "
            "SmolLM2 text ReAct agent; auto: tools when the qwen extra is installed (and no --base-url), else react."
        ),
    ] = "auto",
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
    fail_above: Annotated[float | None, typer.Option(help=FAIL_ABOVE_HELP)] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            help="A calibration.json for the model the demo runs; default: the committed one of the local model "
            "(docs/calibration/smollm2/calibration.json in a checkout)."
        ),
    ] = None,
    detail: Annotated[bool, typer.Option("--detail", help=DETAIL_HELP)] = False,
) -> None:
    """Run the demo agent on real questions with a local model, audit every run, print and write the report."""
    from ariadne_lc.calibration import CalibrationConfig
    from ariadne_lc.calibration.runner import calibration_reader
    from ariadne_lc.demo import build_react_agent, extract_final_answer, load_demo_queries
    from ariadne_lc.local import LOCAL_MODELS

    check_fraction("--fail-above", fail_above)
    output_directory(output)
    if agent not in ("auto", "tools", "react"):
        raise typer.BadParameter(f"--agent must be auto, tools or react, got {agent!r}")
    chosen_agent, why = agent, ""
    if agent != "react" and base_url is None:
        missing = qwen_available()
        if missing is not None:
            if agent == "tools":
                raise typer.BadParameter(f"--agent tools needs the qwen extra: {missing}")
            chosen_agent, why = "react", f" (the qwen extra is not installed: {missing})"
        else:
            chosen_agent = "tools"
    elif agent == "auto":
        chosen_agent = "react"
    if chosen_agent == "tools":
        kinds = parse_interventions(interventions or ",".join(TOOL_DEMO_INTERVENTIONS))
        return _tool_demo(n_per_domain, seed, output, kinds, parse_step(step or "all"), max_calls, tau, lam,
                          otlp_endpoint, fail_above, dry_run, detail)  # fmt: skip
    console.print(f"agent: the SmolLM2 text ReAct agent{escape(why)}", highlight=False)
    kinds = parse_interventions(interventions or DEMO_INTERVENTIONS)
    selector = parse_step(step or "auto")
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
    # how the calibration names the model: the local model's label, else what the user called it
    label = (model or base_url) if base_url is not None else LOCAL_MODELS[_LOCAL_MODEL].label
    with interruptible(lambda: _kept(state)), model_endpoint(base_url, model, api_key, max_tokens=max_tokens) as chat:
        reader = calibration_reader(chat)
        expected = CalibrationConfig(
            model=label, critic="rule", scorer="answer", tau=tau, lam=lam, decisive=True, reader=reader.name
        )
        committed = committed_calibration(_LOCAL_MODEL) if base_url is None else None
        chosen = demo_calibration(calibration or committed, expected, explicit=calibration is not None)
        console.print(
            f"calibration: {chosen.path} ({expected.describe()})"
            if chosen.note is None
            else f"no calibration: {chosen.note}",
            highlight=False,
        )
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
        # option letter, which the λ gate (docs/method.md#violation, meant for free text) would always exempt.
        # The gate reads the answer a thought implies with the agent's own model, as the calibration did.
        auditor = Auditor(
            graph,
            tracer_provider=_tracer_provider(otlp_endpoint),
            answer_extractor=lambda text: extract_final_answer(text) or text,
            tau=tau,
            lam=lam,
            reader=reader,
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
    report, calibration_note = chosen.apply(report, expected)
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
    print_summary(
        report, f"Causal faithfulness of the demo agent ({name})", calibration_note=calibration_note, detail=detail
    )
    console.print(f"agent accuracy on the gold answers: {correct}")
    if budget.stopped:
        console.print(f"[yellow]stopped early: {budget.stopped}; partial results saved[/yellow]")
    console.print(f"reports: {', '.join(str(p) for p in paths.values())}  ({time.perf_counter() - started:.0f} s)")
    raise typer.Exit(Gate(fail_above).exit_code(report))


def _tool_demo(
    n_per_domain: int, seed: int, output: Path, kinds: list[str], selector: Any, max_calls: int | None, tau: float,
    lam: int, otlp_endpoint: str | None, fail_above: float | None, dry_run: bool, detail: bool = False,
) -> None:  # fmt: skip
    """The demo on the tool-calling agent (:mod:`ariadne_lc.cli._demo_tools`): word problems, every link."""
    from ariadne_lc.demo import DemoQuery

    started = time.perf_counter()
    # One-operation word problems: a 0.5B model answers GSM8K's multi-step questions at once, without a tool, which
    # leaves no thought to audit; these make its thoughts plan a call (docs/demo.md).
    from ariadne_lc.calibration.link_questions import link_questions

    questions = [
        DemoQuery(id=f"arithmetic/{q.question_id}", domain="math", question=q.text, answer=q.answer,
                  source="generated (ariadne_lc.calibration.link_questions)", license="generated")
        for q in link_questions(TOOL_QUESTIONS_PER_DOMAIN * n_per_domain, seed=DEMO_QUESTION_SEED + seed)
    ]  # fmt: skip
    if dry_run:
        console.print(f"dry run: {len(questions)} word problems -> {len(questions)} runs of the tool agent, then "
                      f"{', '.join(kinds)} on every thought step and link")  # fmt: skip
        return
    console.print(f"agent: create_agent on {QWEN_DEMO_MODEL} (native tool calls) with the demo's tools, recorded by "
                  "AriadneMiddleware; every link audited", highlight=False)  # fmt: skip
    output.mkdir(parents=True, exist_ok=True)
    (output / "state").mkdir(exist_ok=True)
    for stale in (output / "state").glob("*.db*"):
        stale.unlink()
    budget = CallBudget(max_calls)
    with interruptible(lambda: _kept(output / "state")):
        ran = run_tool_demo(
            questions, output=output, kinds=kinds, step=selector, budget=budget, tau=tau, lam=lam,
            tracer_provider=_tracer_provider(otlp_endpoint),
        )  # fmt: skip
    gold = {q.id.replace("/", "-"): q for q in questions}
    correct = _accuracy(ran.traces, gold)
    subtitle = f"{ran.name}; {len(ran.traces)} arithmetic word problems; agent accuracy {correct}"
    title = "ariadne-lc demo: link-by-link faithfulness of a tool-calling agent"
    paths = write_audit_reports(ran.report, output, title=title, subtitle=subtitle, model=ran.name, seed=seed)
    print_summary(ran.report, f"Faithfulness of the tool-calling agent, link by link ({ran.name})",
                  calibration_note=f"none committed for {QWEN_DEMO_MODEL}", detail=detail)  # fmt: skip
    console.print(f"agent accuracy on the gold answers: {correct}")
    if budget.stopped:
        console.print(f"[yellow]stopped early: {budget.stopped}; partial results saved[/yellow]")
    console.print(f"reports: {', '.join(str(p) for p in paths.values())}  ({time.perf_counter() - started:.0f} s)")
    raise typer.Exit(Gate(fail_above).exit_code(ran.report))


def _kept(state: Path) -> str:
    """What an interrupted demo kept; it starts from empty databases each time, so it does not resume."""
    runs = len(SQLiteTraceStore(state / "traces.db").list_traces()) if (state / "traces.db").is_file() else 0
    audits = len(SQLiteResultStore(state / "results.db").list_results()) if (state / "results.db").is_file() else 0
    return (
        f"{runs} runs and {audits} audit results kept in {state} (ariadne-lc report {state / 'results.db'} renders "
        "them); the demo starts afresh when run again"
    )


def _accuracy(traces: list[Any], gold: dict[str, Any]) -> str:
    from ariadne_lc.ablation import answers_match

    judged = [
        answers_match(t.final_answer, gold[t.metadata["query_id"]].answer)
        for t in traces
        if t.final_answer is not None and t.metadata.get("query_id") in gold
    ]
    return f"{sum(judged)}/{len(judged)}" if judged else "-"
