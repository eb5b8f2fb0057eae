"""``ariadne-lc ablate``: FaithCheck step ablation over a JSONL task suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ariadne_lc.ablation import AblationRunner, CcsMetric, ItemResult, estimate_ablation, load_suite
from ariadne_lc.cli._common import (
    EXIT_GATE,
    at_least_one,
    console,
    fail,
    model_endpoint,
    one_line_errors,
    output_directory,
)
from ariadne_lc.cli._gate import check_fraction
from ariadne_lc.cli._interrupt import interruptible
from ariadne_lc.report import JsonlWriter, ablation_document, ablation_markdown, write_json, write_text

__all__ = ["ablate"]


@one_line_errors
def ablate(
    suite: Annotated[Path, typer.Option("--suite", help="FaithCheck JSONL task suite.")],
    output: Annotated[Path, typer.Option(help="Directory for ablation.json, ablation.md, items.jsonl.")] = Path(
        "reports/ablation"
    ),
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint; default: the local model.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (default: $OPENAI_API_KEY).")] = None,
    metric: Annotated[str, typer.Option(help="CCS metric: accuracy_delta, answer_delta or token_delta.")] = (
        "accuracy_delta"
    ),
    threshold: Annotated[float, typer.Option(help="A step with CCS below this is redundant.")] = 0.1,
    concurrency: Annotated[int, typer.Option(help="Model calls in flight.")] = 2,
    max_tokens: Annotated[int, typer.Option(help="Output token limit per call.")] = 48,
    max_calls: Annotated[int | None, typer.Option(help="Stop cleanly before exceeding this many calls.")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Stop before the estimated cost exceeds this.")] = None,
    price_per_1k_tokens: Annotated[float | None, typer.Option(help="Price used for cost estimates.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count calls and tokens; call nothing.")] = False,
    fail_above: Annotated[float | None, typer.Option(help="Exit 1 when RRR exceeds this rate (CI gate).")] = None,
) -> None:
    """Remove each reference step in turn and measure how much the answer depends on it (CCS, RRR)."""
    output_directory(output)
    at_least_one("--concurrency", concurrency)
    check_fraction("--fail-above", fail_above)
    if metric not in ("accuracy_delta", "answer_delta", "token_delta"):
        fail(f"unknown --metric {metric!r}; use accuracy_delta, answer_delta or token_delta")
    items = load_suite(suite)
    if dry_run:
        plan = estimate_ablation(items, max_output_tokens=max_tokens, price_per_1k_tokens=price_per_1k_tokens)
        console.print(
            f"dry run: {plan.items} items, {plan.steps} steps -> {plan.model_calls} model calls, "
            f"~{plan.prompt_tokens} prompt tokens + up to {plan.max_output_tokens} output tokens"
            + (f", estimated cost {plan.estimated_cost:.4f}" if plan.estimated_cost is not None else "")
        )
        return
    partial_path = output / "items.jsonl"
    with (
        interruptible(lambda: _kept(partial_path)),
        model_endpoint(base_url, model, api_key, max_tokens=max_tokens) as chat,
    ):
        runner = AblationRunner(
            chat,
            metric=_metric(metric),
            threshold=threshold,
            max_concurrency=concurrency,
            max_calls=max_calls,
            max_cost=max_cost,
            price_per_1k_tokens=price_per_1k_tokens,
            max_output_tokens=max_tokens,
        )
        with (
            JsonlWriter(partial_path) as sink,
            Progress(
                TextColumn("ablating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
            ) as progress,
        ):
            task = progress.add_task("items", total=len(items))

            def done(item: ItemResult) -> None:
                sink.write(item)
                progress.advance(task)

            report = runner.run(items, on_item=done)
    name = model or ("local SmolLM2-135M-Instruct" if base_url is None else base_url)
    write_json(output / "ablation.json", ablation_document(report, model=name, suite=str(suite)))
    write_text(output / "ablation.md", ablation_markdown(report, model=name))
    table = Table(title=f"Step ablation: {suite.name} ({report.metric})")
    for column in ("item", "baseline", "CCS by step", "redundant steps"):
        table.add_column(column)
    for item in report.items:
        ccs = " ".join("-" if s.ccs is None else f"{s.ccs:.2f}" for s in item.steps)
        redundant = sum(s.ccs is not None and s.ccs < threshold for s in item.steps)
        verdict = "correct" if item.baseline_correct else "wrong" if item.baseline_correct is not None else "failed"
        table.add_row(item.item_id, f"{item.baseline_answer} ({verdict})", ccs, f"{redundant}/{len(item.steps)}")
    console.print(table)
    ci = report.rrr_ci
    console.print(
        f"RRR = {report.rrr:.1%}" if report.rrr is not None else "RRR = -",
        f"(95% CI {ci[0]:.1%}-{ci[1]:.1%})" if ci else "",
        f"over {len(report.scored_steps)} steps; baseline accuracy {report.baseline_accuracy or 0:.0%}; "
        f"{report.model_calls} model calls; reports in {output}/",
    )
    if report.partial:
        console.print(f"[yellow]partial run: {report.stopped_reason}[/yellow]")
    if fail_above is not None and report.rrr is not None and report.rrr > fail_above:
        console.print(f"[red]RRR {report.rrr:.1%} is above --fail-above {fail_above:.1%}[/red]")
        raise typer.Exit(EXIT_GATE)


def _kept(partial: Path) -> str:
    """What an interrupted ablation kept (one line per item finished)."""
    text = partial.read_text(encoding="utf-8") if partial.is_file() else ""
    lines = sum(1 for line in text.splitlines() if line.strip())
    return f"{lines} items kept in {partial}; the same command again ablates every item anew"


def _metric(name: str) -> CcsMetric:
    if name == "answer_delta":
        return "answer_delta"
    if name == "token_delta":
        return "token_delta"
    return "accuracy_delta"
