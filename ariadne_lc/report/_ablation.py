"""JSON and Markdown for step-ablation (FaithCheck) reports."""

from __future__ import annotations

from typing import Any

from ariadne_lc.ablation import AblationReport

__all__ = ["ABLATION_SCHEMA", "ablation_document", "ablation_markdown"]

ABLATION_SCHEMA = "ariadne-lc/ablation-report"
ABLATION_SCHEMA_VERSION = 1


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def ablation_document(report: AblationReport, **meta: Any) -> dict[str, Any]:
    """The JSON document: a versioned envelope, the aggregates, and every item."""
    return {
        "schema": ABLATION_SCHEMA,
        "schema_version": ABLATION_SCHEMA_VERSION,
        "meta": meta,
        "aggregate": {
            "metric": report.metric,
            "threshold": report.threshold,
            "rrr": report.rrr,
            "rrr_ci95": report.rrr_ci,
            "mean_ccs": report.mean_ccs,
            "baseline_accuracy": report.baseline_accuracy,
            "baseline_accuracy_ci95": report.baseline_accuracy_ci,
            "items": len(report.items),
            "scored_steps": len(report.scored_steps),
            "model_calls": report.model_calls,
            "partial": report.partial,
            "stopped_reason": report.stopped_reason,
        },
        "items": [item.model_dump(mode="json") for item in report.items],
    }


def ablation_markdown(report: AblationReport, *, model: str = "") -> str:
    """A human-readable report: aggregates, then each item's steps ranked by CCS."""
    lines = [
        "# Step ablation report (FaithCheck method)",
        "",
        f"**Model:** {model or '-'}  ",
        f"**CCS metric:** {report.metric} (redundant when CCS < {report.threshold})",
        "",
        "| metric | value | 95% CI |",
        "|---|---|---|",
        f"| RRR (reasoning redundancy ratio) | {_pct(report.rrr)} | {_ci(report.rrr_ci)} |",
        f"| baseline accuracy | {_pct(report.baseline_accuracy)} | {_ci(report.baseline_accuracy_ci)} |",
        f"| mean CCS | {'-' if report.mean_ccs is None else f'{report.mean_ccs:.3f}'} | |",
        f"| items / scored steps / model calls | {len(report.items)} / {len(report.scored_steps)} / "
        f"{report.model_calls} | |",
        "",
    ]
    if report.partial:
        lines += [f"> **Partial run:** {report.stopped_reason}", ""]
    lines += ["## Per-item step rankings", ""]
    for item in report.items:
        lines += [
            f"### {item.item_id}",
            "",
            f"ground truth `{item.ground_truth}`; baseline answer `{item.baseline_answer}` "
            f"({'correct' if item.baseline_correct else 'wrong' if item.baseline_correct is not None else 'failed'})",
            "",
            "| rank | step | CCS | answer without the step | error |",
            "|---|---|---|---|---|",
        ]
        for rank, step in enumerate(item.ranking(), 1):
            ccs = "-" if step.ccs is None else f"{step.ccs:.2f}"
            lines.append(f"| {rank} | {step.step_index} | {ccs} | `{step.answer}` | {step.error or ''} |")
        lines.append("")
    return "\n".join(lines)
