"""What ``ariadne-lc calibrate`` writes and prints once the audits are stored, and the reference method it runs.

The analysis (error rates with intervals, the correction, ``calibration.json``) lives in
:mod:`ariadne_lc.calibration`, the reports in :mod:`ariadne_lc.report`; this module hands them the stored audits and
prints the raw counts first, so that a run whose analysis fails still shows what it measured.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ariadne_lc.cli._common import console

if TYPE_CHECKING:
    from ariadne_lc.calibration.records import CalibrationConfig
    from ariadne_lc.calibration.storage import AuditLog

__all__ = ["raw_counts", "reference_factory", "write_outputs"]


def reference_factory() -> Any:
    """``model -> ReferenceMethod``: the reference method, run on one thought with both judges."""
    from ariadne_lc.calibration.reference_run import reference_method

    return reference_method


def raw_counts(log: AuditLog) -> dict[str, dict[str, int]]:
    """Per agent (and p), how many contradiction audits were scored, flagged, not applicable, inconclusive, failed."""
    out: dict[str, Counter[str]] = {}
    for audit in log.audits():
        r = audit.result
        label = audit.agent if audit.p is None else f"mixture p={audit.p:g}"
        label = label if audit.method == "ariadne" else f"{label} ({audit.method})"
        counts = out.setdefault(label, Counter())
        if r.control:
            counts[f"{r.intervention_type} scored"] += r.status == "scored"
            counts[f"{r.intervention_type} held"] += r.status == "scored" and r.violation
            continue
        counts[r.status] += 1
        counts["violation"] += r.status == "scored" and r.violation
    return {k: dict(v) for k, v in sorted(out.items())}


def write_outputs(log: AuditLog, output: Path, *, model: str, config: CalibrationConfig, seed: int) -> None:
    """calibration.json and the reports through the analysis when it is available; the raw counts always."""
    from rich.table import Table

    table = Table(title=f"calibration audits ({model})")
    for column in (
        "agent",
        "scored",
        "violations",
        "rate",
        "n/a",
        "inconclusive",
        "failed",
        "rerun held",
        "placebo held",
    ):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for label, c in raw_counts(log).items():
        scored = c.get("scored", 0)
        table.add_row(
            label,
            str(scored),
            str(c.get("violation", 0)),
            f"{c.get('violation', 0) / scored:.0%}" if scored else "-",
            str(c.get("not_applicable", 0)),
            str(c.get("inconclusive", 0)),
            str(c.get("failed", 0)),
            f"{c.get('rerun held', 0)}/{c.get('rerun scored', 0)}",
            f"{c.get('paraphrase held', 0)}/{c.get('paraphrase scored', 0)}",
        )
    console.print(table)
    from ariadne_lc.calibration import analyze
    from ariadne_lc.report import write_calibration_reports

    audits = log.audits()
    if not audits:
        console.print("[yellow]no audits yet: nothing to analyse[/yellow]")
        return
    paths = write_calibration_reports(
        analyze(audits, config, seed=seed), output, title=f"Calibration of the causal audit: {model}"
    )
    console.print(f"written: {', '.join(str(p) for p in paths)}")
