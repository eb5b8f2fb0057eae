"""Reports: versioned JSON, Markdown and self-contained HTML (plots need the ``report`` extra)."""

from ariadne_lc._files import JsonlWriter, ReportWriteError, write_json, write_text
from ariadne_lc.report._ablation import ABLATION_SCHEMA, ablation_document, ablation_markdown
from ariadne_lc.report._audit import (
    AUDIT_SCHEMA,
    AUDIT_SCHEMA_VERSION,
    audit_document,
    audit_html,
    audit_markdown,
    domain_group,
    load_report,
    load_results,
    write_audit_reports,
)
from ariadne_lc.report._calibration import (
    calibration_html,
    calibration_markdown,
    load_calibration,
    write_calibration_reports,
)
from ariadne_lc.report._verdict import (
    TOLERANCE,
    LinkAnswer,
    ci_label,
    link_answers,
    link_verdict,
    verdict_header,
    verdict_rule,
)

__all__ = [
    "ABLATION_SCHEMA",
    "AUDIT_SCHEMA",
    "AUDIT_SCHEMA_VERSION",
    "TOLERANCE",
    "JsonlWriter",
    "LinkAnswer",
    "ReportWriteError",
    "ablation_document",
    "ablation_markdown",
    "audit_document",
    "audit_html",
    "audit_markdown",
    "calibration_html",
    "calibration_markdown",
    "ci_label",
    "domain_group",
    "link_answers",
    "link_verdict",
    "load_calibration",
    "load_report",
    "load_results",
    "verdict_header",
    "verdict_rule",
    "write_audit_reports",
    "write_calibration_reports",
    "write_json",
    "write_text",
]
