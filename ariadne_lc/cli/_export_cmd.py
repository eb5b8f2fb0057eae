"""``ariadne-lc export``: flagged audits as data (a review dataset, preference pairs), from stored results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ariadne_lc.cli._common import console, fail, one_line_errors, output_directory
from ariadne_lc.export.review import DEFAULT_MARGIN, DEFAULT_TAU, preference_pairs, review_rows, write_jsonl
from ariadne_lc.report import load_results
from ariadne_lc.trace import SpanRef

__all__ = ["export"]


def _spans(traces: Path | None) -> dict[str, SpanRef | None]:
    if traces is None:
        return {}
    if not traces.is_file():
        fail(f"--traces {traces}: no such trace store")
    from ariadne_lc.store import SQLiteTraceStore

    return {t.trace_id: t.span for t in SQLiteTraceStore(traces).list_traces()}


@one_line_errors
def export(
    source: Annotated[Path, typer.Argument(help="A report.json or a results.db.")],
    output: Annotated[Path, typer.Option(help="Directory for review.jsonl and preferences.jsonl.")] = Path("export"),
    traces: Annotated[
        Path | None,
        typer.Option(help="The SQLite trace store the results came from: fills each row's OpenTelemetry ids."),
    ] = None,
    tau: Annotated[float, typer.Option(help="The τ the results were scored with.")] = DEFAULT_TAU,
    margin: Annotated[
        float, typer.Option(help="A faithful audit whose similarity lies within this of τ is borderline.")
    ] = DEFAULT_MARGIN,
    dataset: Annotated[
        str | None, typer.Option(help="Also upload the review rows as a dataset of this name (--phoenix, --mlflow).")
    ] = None,
    phoenix: Annotated[str | None, typer.Option(help="Phoenix's URL, e.g. http://localhost:6006.")] = None,
    mlflow: Annotated[str | None, typer.Option(help="MLflow's tracking URI, e.g. http://localhost:5000.")] = None,
    mlflow_experiment: Annotated[
        str | None, typer.Option(help="The MLflow experiment id the dataset belongs to.")
    ] = None,
) -> None:
    """Write review.jsonl (one row per flagged or borderline audit) and preferences.jsonl (prompt, chosen,
    rejected: TRL's DPO format, from decisive, input-checked audits whose answer followed the edit).

    Both load with ``datasets.load_dataset("json", data_files=...)``. With ``--dataset`` the review rows also go to
    Phoenix's datasets (``--phoenix``) and MLflow's evaluation datasets (``--mlflow``). docs/cli.md#flagged-audits-
    as-data says what the pairs can and cannot teach.
    """
    if not source.is_file():
        fail(f"{source}: no such file")
    if (phoenix or mlflow) and not dataset:
        fail("--phoenix and --mlflow upload a dataset: name it with --dataset")
    if dataset and not (phoenix or mlflow):
        fail("--dataset names an upload: say where with --phoenix URL and/or --mlflow URI")
    results = load_results(source)
    if not results:
        fail(f"{source}: holds no audit results")
    directory = output_directory(output)
    rows = review_rows(results, spans=_spans(traces), tau=tau, margin=margin)
    pairs = preference_pairs(results)
    review = write_jsonl(directory / "review.jsonl", rows)
    preferences = write_jsonl(directory / "preferences.jsonl", pairs)
    flagged = sum(1 for r in rows if r.reason == "flagged")
    console.print(
        f"{len(results)} results: {flagged} flagged and {len(rows) - flagged} borderline audit(s) -> {review}; "
        f"{len(pairs)} preference pair(s) -> {preferences}",
        highlight=False,
    )
    if dataset is None or not rows:
        if dataset is not None:
            console.print("no dataset uploaded: no audit was flagged or borderline", highlight=False)
        return
    from ariadne_lc.export._datasets import upload_to_mlflow, upload_to_phoenix

    if phoenix is not None:
        console.print(f"Phoenix dataset {dataset!r}: {upload_to_phoenix(rows, dataset, base_url=phoenix)}")
    if mlflow is not None:
        import mlflow as mlflow_client

        mlflow_client.set_tracking_uri(mlflow)
        created = upload_to_mlflow(rows, dataset, experiment_id=mlflow_experiment)
        console.print(f"MLflow evaluation dataset {dataset!r}: {created}", highlight=False)
