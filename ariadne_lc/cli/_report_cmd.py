"""``ariadne-lc report``: re-render reports from stored results, without running anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ariadne_lc.cli._calibration_opt import CALIBRATION_HELP, MODEL_HELP, calibrate_report
from ariadne_lc.cli._common import console, fail, one_line_errors
from ariadne_lc.cli._gate import DEFAULT_MIN_COVERAGE, FAIL_ABOVE_HELP, MIN_COVERAGE_HELP, Gate
from ariadne_lc.cli._summary import DETAIL_HELP, print_summary
from ariadne_lc.report import load_report, write_audit_reports

__all__ = ["report"]


@one_line_errors
def report(
    source: Annotated[Path, typer.Argument(help="A report.json or a results.db.")],
    output: Annotated[Path | None, typer.Option(help="Directory for the re-rendered reports.")] = None,
    title: Annotated[str, typer.Option(help="Report title.")] = "Causal faithfulness audit",
    fail_above: Annotated[float | None, typer.Option(help=FAIL_ABOVE_HELP)] = None,
    calibration: Annotated[Path | None, typer.Option(help=CALIBRATION_HELP)] = None,
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    tau: Annotated[
        float, typer.Option(help="The τ the results were scored with (checked against the calibration).")
    ] = 0.8,
    lam: Annotated[
        int, typer.Option(help="The λ the results were scored with (checked against the calibration).")
    ] = 10,
    detail: Annotated[bool, typer.Option("--detail", help=DETAIL_HELP)] = False,
    min_coverage: Annotated[float, typer.Option(help=MIN_COVERAGE_HELP)] = DEFAULT_MIN_COVERAGE,
) -> None:
    """Re-render JSON, Markdown and HTML reports from stored results.

    A ``report.json`` carries the corrected rates it was written with: they are kept (and ``--fail-above`` gates on
    them) without ``--calibration``; a ``results.db`` holds results only.
    """
    held = Gate(fail_above, None, min_coverage)
    if not source.is_file():
        fail(f"{source}: no such file")
    stored = load_report(source)
    if not stored.results:
        fail(f"{source}: holds no audit results")
    # a report.json keeps the corrected rates it was written with; --calibration corrects again (and replaces them)
    rebuilt = calibrate_report(
        stored.model_copy(update={"corrected": None, "corrected_by_type": {}}) if calibration else stored,
        calibration,
        model=model,
        tau=tau,
        lam=lam,
    )
    directory = output or source.parent
    paths = write_audit_reports(rebuilt, directory, title=title, source=str(source))
    print_summary(rebuilt, title, detail=detail)
    console.print("reports: " + ", ".join(str(p) for p in paths.values()))
    raise typer.Exit(held.exit_code(rebuilt))
