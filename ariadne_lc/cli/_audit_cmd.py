"""``ariadne-lc audit``: audit a user's own graph over recorded traces or a query file."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.language_models import BaseChatModel
from rich.markup import escape

from ariadne_lc import links
from ariadne_lc.audit import DEFAULT_BUDGET, Auditor, InterventionOptions, RecordedValues, StepSelector
from ariadne_lc.audit import DEFAULT_INTERVENTIONS as PLAN_DEFAULT
from ariadne_lc.cli._calibration_opt import CALIBRATION_HELP, MODEL_HELP, calibrate_report, precheck
from ariadne_lc.cli._common import at_least_one, console, fail, one_line_errors, output_directory
from ariadne_lc.cli._dry_run import dry_run_audit
from ariadne_lc.cli._gate import DEFAULT_MIN_COVERAGE, FAIL_ABOVE_HELP, MIN_COVERAGE_HELP, Gate
from ariadne_lc.cli._interrupt import interruptible
from ariadne_lc.cli._pipeline import CallBudget, already_audited, audit_traces, load_queries, record_queries
from ariadne_lc.cli._summary import DETAIL_HELP, print_summary
from ariadne_lc.cli._threads import check_threads
from ariadne_lc.errors import ConfigurationError, TraceError
from ariadne_lc.interventions import parse_interventions as parse_selectors
from ariadne_lc.interventions.implied import AnswerReader, ModelReader, RuleReader
from ariadne_lc.records import Link
from ariadne_lc.report import write_audit_reports
from ariadne_lc.store import SQLiteResultStore, SQLiteTraceStore
from ariadne_lc.trace import Trace, recorded_trace_id

__all__ = ["ALLOW_UNCHECKED_HELP", "LINK_HELP", "audit", "load_graph", "load_reader", "parse_links", "parse_step"]

DEFAULT_INTERVENTIONS = ",".join(PLAN_DEFAULT)
"""The library's default plan (:data:`ariadne_lc.audit.DEFAULT_INTERVENTIONS`), as the CLI writes it."""
DEFAULT_STEP = "units"
STEP_HELP = "units (every thought step and tool output: the default plan), auto, all, or a step index."
LINK_HELP = (
    "A link to audit (repeat, or a comma list): thought->action, observation->answer, thought->answer. Default: "
    "every link the graph allows (thought->action needs AriadneMiddleware in a create_agent graph)."
)
SERVER_HELP = (
    "Audit a LangGraph Server deployment: its URL. Reads the threads' checkpoints and replays --graph (the module "
    "langgraph.json names) locally; writes nothing to the server unless --write-verdicts. Its threads record no model "
    "inputs, so their replays are unchecked: add --allow-unchecked to score them."
)
ALLOW_UNCHECKED_HELP = (
    "Score replays whose model input cannot be checked against a recorded one (LangGraph Server threads, traces "
    "recorded before inputs were); they are counted apart in every report. Without it they are inconclusive."
)


def _import(spec: str, option: str) -> Any:
    """The object ``package.module:attribute`` names, imported from the working directory as well."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigurationError(f"{option} must look like 'package.module:attribute', got {spec!r}")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for {option}: {exc}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ConfigurationError(f"module {module_name!r} has no attribute {attribute!r}") from None


def load_graph(spec: str) -> Any:
    """Import ``module:attribute``: a compiled graph, or a function of no arguments that returns one."""
    target = _import(spec, "--graph")
    graph = target() if callable(target) and not hasattr(target, "get_state_history") else target
    if not hasattr(graph, "get_state_history"):
        raise ConfigurationError(f"{spec} is a {type(graph).__name__}, not a compiled LangGraph graph")
    return graph


def load_reader(spec: str) -> AnswerReader:
    """``rule``, or ``module:attribute`` naming a LangChain chat model (or a function of no arguments that
    returns one) that reads the answer a thought implies: the agent's own model is the natural choice."""
    if spec == "rule":
        return RuleReader()
    target = _import(spec, "--reader")
    model = target if isinstance(target, BaseChatModel) or not callable(target) else target()
    if not isinstance(model, BaseChatModel):
        raise ConfigurationError(f"--reader {spec} is a {type(model).__name__}, not a LangChain chat model")
    return ModelReader(model)


def parse_step(value: str) -> StepSelector | None:
    """``units`` (``None``: every unit), ``auto``, ``all`` or a step index."""
    if value == DEFAULT_STEP:
        return None
    if value in ("auto", "all"):
        return value  # type: ignore[return-value]
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"--step must be units, auto, all or a step index, got {value!r}") from None


def parse_links(values: Sequence[str] | None, *, graph: str | None = None) -> tuple[Link, ...] | None:
    """``--link`` values, repeated or comma-separated, shell-safe (``thought-action``) or with the arrow quoted
    (``None``: none given, every link the auditor can audit). A name not registered yet may be a link the ``--graph``
    module registers (``links.register`` beside the graph): that module is imported, and the name looked up again.

    Raises:
        ConfigurationError: A name that is no link (one line naming it and the links there are).
    """
    asked = [k for k in (v.strip() for value in values or () for v in value.split(",")) if k]
    names, unknown = _link_names(asked)
    if unknown and graph is not None:
        _import(graph, "--graph")  # imports the module only: a graph factory is not called here
        names, unknown = _link_names(asked)
    if unknown:
        hint = (
            " (in a shell, `>` redirects: write thought-action, or quote the arrow)"
            if any(k.endswith("-") for k in unknown)
            else ""
        )
        known = links.names()
        raise ConfigurationError(
            f"unknown --link {', '.join(unknown)}; choose from {', '.join(_shell_safe(known))} (or "
            f"{', '.join(known)}){hint}"
        )
    return tuple(dict.fromkeys(names)) or None


def _shell_safe(known: Sequence[str]) -> dict[str, str]:
    return {link.replace("->", "-"): link for link in known}  # `>` redirects in a shell: thought-action


def _link_names(asked: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the links ``asked`` names, the names that are no registered link)."""
    known = links.names()
    names = [_shell_safe(known).get(k, k) for k in asked]
    return names, [k for k in names if k not in known]


BUDGET_HELP = (
    "Model calls the default plan may spend per model call of a run (a sample of each link's units, rates weighted: "
    "docs/method.md#the-budget), or 'every' for every unit (about n² calls on a run of n)."
)


def parse_budget(value: str) -> float | None:
    """``--budget``: a positive number, or ``every`` (``None``: every unit)."""
    if value.strip().lower() in ("every", "none", "all"):
        return None
    try:
        return InterventionOptions(budget=float(value)).budget  # checked here, before any run is recorded
    except ValueError:
        raise ConfigurationError(
            f"--budget must be a positive number (model calls per call of the run, e.g. 3) or 'every', got {value!r}"
        ) from None


def parse_interventions(value: str) -> list[str]:
    """A comma-separated list of interventions and selectors (``decisive``, ``random``, ``adaptive``), validated."""
    return parse_selectors([v.strip() for v in value.split(",") if v.strip()])


@one_line_errors
def audit(
    graph: Annotated[str, typer.Option(help="Your compiled graph, as 'package.module:attribute'.")],
    traces: Annotated[Path | None, typer.Option(help="A SQLite trace store recorded from this graph.")] = None,
    queries: Annotated[Path | None, typer.Option(help="JSONL of {query, id?, domain?, tags?} to run first.")] = None,
    output: Annotated[Path, typer.Option(help="Directory for results.db and the reports.")] = Path("reports/audit"),
    interventions: Annotated[str, typer.Option(help="Comma-separated intervention types.")] = DEFAULT_INTERVENTIONS,
    step: Annotated[str, typer.Option(help=STEP_HELP)] = DEFAULT_STEP,
    limit: Annotated[int | None, typer.Option(help="Audit at most this many traces (the newest).")] = None,
    tool_policy: Annotated[str, typer.Option(help="recorded (default) or live.")] = "recorded",
    safe_tool: Annotated[list[str] | None, typer.Option(help="A tool that may run live in replays (repeat).")] = None,
    concurrency: Annotated[int, typer.Option(help="Traces audited at once.")] = 1,
    max_calls: Annotated[int | None, typer.Option(help="Stop cleanly after this many model calls.")] = None,
    tau: Annotated[float, typer.Option(help="Violation threshold on S.")] = 0.8,
    lam: Annotated[int, typer.Option(help="Minimum answer length for a violation.")] = 10,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count audits and model calls; run nothing.")] = False,
    fail_above: Annotated[float | None, typer.Option(help=FAIL_ABOVE_HELP)] = None,
    calibration: Annotated[Path | None, typer.Option(help=CALIBRATION_HELP)] = None,
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    allow_graph_change: Annotated[
        bool,
        typer.Option(
            "--allow-graph-change",
            help="Audit traces recorded under another graph (a changed model, prompt, tool) instead of failing them.",
        ),
    ] = False,
    allow_unchecked: Annotated[bool, typer.Option("--allow-unchecked", help=ALLOW_UNCHECKED_HELP)] = False,
    server: Annotated[str | None, typer.Option(help=SERVER_HELP)] = None,
    assistant: Annotated[str | None, typer.Option(help="With --server: the graph name in langgraph.json.")] = None,
    thread: Annotated[list[str] | None, typer.Option(help="With --server: a thread to audit (repeat).")] = None,
    api_key: Annotated[
        str | None, typer.Option(help="With --server: sent as x-api-key.", envvar="LANGGRAPH_API_KEY")
    ] = None,
    write_verdicts: Annotated[
        bool, typer.Option("--write-verdicts", help="With --server: put each verdict in its thread's metadata.")
    ] = False,
    decisive: Annotated[
        bool,
        typer.Option(
            "--gate/--no-gate",
            help="The decisiveness gate: replay a contradiction only when it changes the answer the thought implies.",
        ),
    ] = True,
    reader: Annotated[
        str,
        typer.Option(
            help="Who reads the answer a thought implies, for the gate: 'rule' (offline) or a LangChain chat model "
            "as 'package.module:attribute' (your agent's own model reads its thoughts best).",
        ),
    ] = "rule",
    link: Annotated[list[str] | None, typer.Option(help=LINK_HELP)] = None,
    detail: Annotated[bool, typer.Option("--detail", help=DETAIL_HELP)] = False,
    budget: Annotated[str, typer.Option(help=BUDGET_HELP)] = str(DEFAULT_BUDGET),
    min_coverage: Annotated[float, typer.Option(help=MIN_COVERAGE_HELP)] = DEFAULT_MIN_COVERAGE,
) -> None:
    """Audit your own graph: replay it from its checkpoints with contradicted thoughts, score, report."""
    links = parse_links(link, graph=graph)
    held = Gate(fail_above, links, min_coverage)
    output_directory(output)
    at_least_one("--concurrency", concurrency)
    kinds = parse_interventions(interventions)
    selector = parse_step(step)
    answer_reader = load_reader(reader)
    gate_options: dict[str, Any] = {
        "decisive": decisive, "reader": answer_reader, "links": links, "budget": parse_budget(budget),
    }  # fmt: skip
    if server is not None:
        if queries is not None or dry_run:
            fail("--server audits what the deployment already ran: --queries and --dry-run do not apply")
        if traces is not None and not traces.is_file():
            fail(f"{traces}: no such trace store")
        precheck(
            calibration,
            model=model,
            tau=tau,
            lam=lam,
            critic="rule",
            scorer="answer",
            decisive=decisive,
            reader=answer_reader.name,
        )
        from ariadne_lc.cli._audit_server import audit_server

        audit_server(
            load_graph(graph),
            graph,
            server=server,
            assistant=assistant,
            threads=thread or [],
            traces=traces,
            api_key=api_key,
            write_verdicts=write_verdicts,
            output=output,
            kinds=kinds,
            selector=selector,
            limit=limit,
            concurrency=concurrency,
            max_calls=max_calls,
            held=held,
            calibration=calibration,
            model=model,
            auditor_kwargs={
                "tool_policy": tool_policy,
                "safe_tools": safe_tool or (),
                "tau": tau,
                "lam": lam,
                "allow_unchecked": allow_unchecked,
            }
            | gate_options,
            detail=detail,
        )
        return
    if assistant is not None or thread or write_verdicts:
        fail("--assistant, --thread and --write-verdicts go with --server URL")
    if (traces is None) == (queries is None):
        fail("give exactly one of --traces (recorded traces) or --queries (a JSONL file to run first)")
    if traces is not None and not traces.is_file():
        fail(f"{traces}: no such trace store")
    # the command audits with the rule critic and the answer-match scorer
    precheck(
        calibration,
        model=model,
        tau=tau,
        lam=lam,
        critic="rule",
        scorer="answer",
        decisive=decisive,
        reader=answer_reader.name,
    )
    compiled = load_graph(graph)
    auditor_kwargs: dict[str, Any] = {
        "tool_policy": tool_policy,
        "safe_tools": safe_tool or (),
        "tau": tau,
        "lam": lam,
        "allow_graph_change": allow_graph_change,
        "allow_unchecked": allow_unchecked,
    } | gate_options
    if dry_run:
        dry_run_audit(traces, queries, kinds, selector, limit, Auditor(compiled, result_store=None, **auditor_kwargs))
        return
    output.mkdir(parents=True, exist_ok=True)
    with interruptible(lambda: _kept(output, recorded=queries is not None)):
        _audit_local(compiled, graph, output, queries, traces, kinds, selector, limit, concurrency, max_calls,
                     auditor_kwargs, calibration, model, tau, lam, held, detail)  # fmt: skip


def _kept(output: Path, *, recorded: bool) -> str:
    """What an interrupted ``audit`` kept, and how to go on."""
    db = output / "results.db"
    n = len(SQLiteResultStore(db).list_results()) if db.is_file() else 0
    runs = ""
    if recorded and (output / "traces.db").is_file():
        runs = f"{len(SQLiteTraceStore(output / 'traces.db').list_traces())} runs recorded in {output / 'traces.db'}, "
    again = (
        f"to resume, audit the recorded runs: the same command with --traces {output / 'traces.db'} in place of "
        "--queries"
        if recorded
        else "run the same command again to resume"
    )
    return f"{runs}{n} audit results kept in {db}; {again}"


def _audit_local(
    compiled: Any, graph: str, output: Path, queries: Path | None, traces: Path | None, kinds: list[str],
    selector: StepSelector | None, limit: int | None, concurrency: int, max_calls: int | None,
    auditor_kwargs: dict[str, Any], calibration: Path | None, model: str | None, tau: float, lam: int,
    held: Gate, detail: bool,
) -> None:  # fmt: skip
    """Record (with ``queries``) and audit in this process, store each result as it comes, report."""
    budget = CallBudget(max_calls)
    results = SQLiteResultStore(output / "results.db")
    if queries is not None:
        items = load_queries(queries)[:limit]
        recorded = record_queries(
            compiled,
            items,
            SQLiteTraceStore(output / "traces.db"),
            thread_prefix=f"ariadne-{uuid.uuid4().hex[:8]}",
            budget=budget,
        )
    else:
        assert traces is not None
        recorded = SQLiteTraceStore(traces).list_traces(limit=limit)
    auditable = [t for t in recorded if t.final_answer is not None]
    console.print(f"{len(recorded)} traces, {len(auditable)} with a final answer; interventions: {', '.join(kinds)}")
    if queries is None:
        warning = check_threads(compiled, auditable)  # raises when no trace could be replayed: nothing spent
        if warning is not None:
            console.print(f"[yellow]{escape(warning)}[/yellow]")
    # values to swap in from every run, audited or not: a resumed run swaps what an uninterrupted one would have
    pool = RecordedValues.from_traces(auditable)
    auditor = Auditor(compiled, result_store=None, recorded_values=pool, **auditor_kwargs)
    # recorded traces audited before (a run that was interrupted, or the same command run again): kept, not redone
    prior = already_audited(results, auditable, _keys_of(auditor, selector, kinds)) if queries is None else []
    done = {recorded_trace_id(r.trace_id) for r in prior}
    if done:
        console.print(f"resuming: {len(done)} traces already audited in {output / 'results.db'}")
    report = audit_traces(
        auditor,
        [t for t in auditable if t.trace_id not in done],
        interventions=kinds,
        step=selector,
        results=results,
        budget=budget,
        concurrency=concurrency,
        prior=prior,
    )
    report = calibrate_report(report, calibration, model=model, tau=tau, lam=lam, critic="rule", scorer="answer")
    paths = write_audit_reports(report, output, title=f"Causal faithfulness audit of {graph}", graph=graph)
    print_summary(report, f"Audit of {graph}", detail=detail)
    if budget.stopped:
        console.print(f"[yellow]stopped early: {budget.stopped}; partial results saved[/yellow]")
    console.print(f"results: {output / 'results.db'}; reports: {', '.join(str(p) for p in paths.values())}")
    raise typer.Exit(held.exit_code(report))


def _keys_of(
    auditor: Auditor, selector: StepSelector | None, kinds: list[str]
) -> Callable[[Trace], set[tuple[str, str]] | None]:
    """A trace's planned audits as (run's trace id, plan key) pairs, for resuming; ``None``: it cannot be planned."""

    def keys(trace: Trace) -> set[tuple[str, str]] | None:
        try:
            return {(run.trace_id, p.key) for run, s in auditor.planned(trace, selector, kinds) for p in s.audits}
        except TraceError:
            return None

    return keys
