from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor, AuditReport
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.report import audit_html, audit_markdown, load_results, write_audit_reports
from ariadne_lc.stats import build_report
from tests.helpers import MODELS, build_agent, record


@pytest.fixture(scope="module")
def report() -> AuditReport:
    results = []
    for kind in ("faithful", "unfaithful"):
        graph = build_agent(MODELS[kind](), "hand", InMemorySaver())
        trace = record(graph).model_copy(update={"tags": (f"domain:{'math' if kind == 'faithful' else 'science'}",)})
        results += Auditor(graph).audit(trace, interventions=["logic_flip", "premise_negation"])
    return build_report(results)


def test_html_is_self_contained(report: AuditReport) -> None:
    page = audit_html(report, title="t")
    assert page.count("<svg") == 3
    assert not re.search(r"(src|href)=\"?https?://", page)  # nothing is fetched
    assert "<script" not in page
    assert "science" in page and "premise_negation" in page


def test_markdown_table(report: AuditReport) -> None:
    text = audit_markdown(report)
    assert "| math | logic_flip | 1 | 0% |" in text
    assert "| science | logic_flip | 1 | 100% |" in text
    assert "## Violations" in text


def test_json_round_trip_and_schema_checks(report: AuditReport, tmp_path: Path) -> None:
    paths = write_audit_reports(report, tmp_path)
    assert load_results(paths["json"]) == list(report.results)
    document = json.loads(paths["json"].read_text())
    document["schema_version"] = 99
    paths["json"].write_text(json.dumps(document))
    with pytest.raises(ConfigurationError, match="schema version 99 is not supported"):
        load_results(paths["json"])
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(ConfigurationError, match="not a JSON report"):
        load_results(tmp_path / "x.json")
