"""Audit reports: a versioned JSON document, Markdown (:mod:`._markdown`), and a self-contained HTML page with
plots (:mod:`._html_page`), written together by :func:`write_audit_reports`.

The JSON document is the stored form: ``ariadne-lc report`` re-renders Markdown and HTML from it (or
from a result store) without running anything again. Its ``aggregate.verdict_by_link`` holds the first table of
both pages (:mod:`._verdict`), so the numbers a reader sees are the ones stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ariadne_lc._files import write_json, write_text
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import Aggregate, AuditReport, AuditResult, CorrectedRate
from ariadne_lc.report._html_page import audit_html
from ariadne_lc.report._markdown import audit_markdown
from ariadne_lc.report._verdict import link_answers, verdict_rule
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_SEED, UNSPECIFIED_DOMAIN, aggregate, build_report

__all__ = [
    "AUDIT_SCHEMA",
    "AUDIT_SCHEMA_VERSION",
    "audit_document",
    "audit_html",
    "audit_markdown",
    "domain_group",
    "load_report",
    "load_results",
    "write_audit_reports",
]

AUDIT_SCHEMA = "ariadne-lc/audit-report"
AUDIT_SCHEMA_VERSION = 1


def domain_group(result: AuditResult) -> str:
    """The group of ``result`` in a by-domain breakdown: its trace's domain, else ``unspecified``."""
    return result.domain or UNSPECIFIED_DOMAIN


def _by_cell(results: Iterable[AuditResult]) -> dict[str, dict[str, list[AuditResult]]]:
    """Per link, per ``domain/type``: never pooled across links."""
    out: dict[str, dict[str, list[AuditResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.step_index >= 0:
            out[r.link][f"{domain_group(r)}/{r.intervention_type}"].append(r)
    return {link: dict(sorted(cells.items())) for link, cells in out.items()}


def _agg_json(agg: Aggregate) -> dict[str, Any]:
    return agg.model_dump(mode="json")


def audit_document(report: AuditReport, **meta: Any) -> dict[str, Any]:
    """The JSON document: versioned envelope, every aggregate of the report, the domain × type table of each link,
    the verdict of each link (with the rule that gave it), and every result (from which ``ariadne-lc report`` can
    rebuild everything)."""
    aggregates = report.model_dump(mode="json", exclude={"results"})
    aggregates["by_link_domain_type"] = {
        link: {cell: _agg_json(aggregate(v, report.confidence, seed=report.seed)) for cell, v in cells.items()}
        for link, cells in _by_cell(report.results).items()
    }
    aggregates["verdict_by_link"] = {a.link: a.document() for a in link_answers(report)}
    aggregates["verdict_rule"] = verdict_rule(report.confidence)
    return {
        "schema": AUDIT_SCHEMA,
        "schema_version": AUDIT_SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "meta": meta,
        "aggregate": aggregates,
        "results": [r.model_dump(mode="json") for r in report.results],
    }


def _document(path: Path) -> dict[str, Any]:
    import json

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not a JSON report ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(document, dict) or document.get("schema") != AUDIT_SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else type(document).__name__
        raise ConfigurationError(f"{path}: not an ariadne-lc audit report (schema {found!r})")
    version = document.get("schema_version")
    if version != AUDIT_SCHEMA_VERSION:
        raise ConfigurationError(f"{path}: audit report schema version {version} is not supported (expected 1)")
    return document


def _is_store(path: Path) -> bool:
    return path.suffix in (".db", ".sqlite", ".sqlite3")


def load_results(path: Path) -> list[AuditResult]:
    """Results from a JSON report of any supported version, or from a SQLite result store."""
    if _is_store(path):
        from ariadne_lc.store import SQLiteResultStore

        return SQLiteResultStore(path).list_results()
    return [AuditResult.model_validate(r) for r in _document(path)["results"]]


def load_report(path: Path) -> AuditReport:
    """The report stored in a ``report.json`` (rebuilt from its results with its confidence and seed, and carrying
    the corrected rates it was written with, so no calibration file is needed again), or built from a result
    store (no corrected rates: a store keeps results only)."""
    if _is_store(path):
        return build_report(load_results(path))
    document = _document(path)
    stored = document.get("aggregate") or {}
    report = build_report(
        [AuditResult.model_validate(r) for r in document["results"]],
        confidence=stored.get("confidence", DEFAULT_CONFIDENCE),
        seed=stored.get("seed", DEFAULT_SEED),
    )
    corrected = stored.get("corrected")
    if corrected is None:
        return report
    by_type = {k: CorrectedRate.model_validate(v) for k, v in (stored.get("corrected_by_type") or {}).items()}
    return report.model_copy(
        update={"corrected": CorrectedRate.model_validate(corrected), "corrected_by_type": by_type}
    )


def write_audit_reports(
    report: AuditReport, directory: Path, *, title: str = "Causal faithfulness audit", subtitle: str = "", **meta: Any
) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` into ``directory``; return their paths."""
    paths = {"json": directory / "report.json", "markdown": directory / "report.md", "html": directory / "report.html"}
    write_json(paths["json"], audit_document(report, **meta))
    write_text(paths["markdown"], audit_markdown(report, title=title))
    write_text(paths["html"], audit_html(report, title=title, subtitle=subtitle))
    return paths
