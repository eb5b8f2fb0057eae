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
    assert page.count("<svg") >= 3  # the outcomes, and per link its rates and φ
    assert not re.search(r"(src|href)=\"?https?://", page)  # nothing is fetched
    assert "<script" not in page
    assert "science" in page and "premise_negation" in page


def test_markdown_table(report: AuditReport) -> None:
    text = audit_markdown(report)
    assert "| math | logic_flip | 1 | 0% |" in text
    assert "| science | logic_flip | 1 | 100% |" in text
    assert "#### Violations (first 1)" in text


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


def test_reports_count_traces_with_nothing_to_audit_and_length_gate_exemptions(
    report: AuditReport, tmp_path: Path
) -> None:
    from ariadne_lc import AuditResult, Trace

    nothing = AuditResult.no_step_to_audit(Trace(trace_id="at-once", final_answer="42"), "no step to audit: ...")
    counted = build_report([*report.results, nothing])
    assert counted.nothing_to_audit == 1
    text = audit_markdown(counted)
    assert "Traces with nothing to audit: 1." in text and "exempted by the length gate: 0" in text
    page = audit_html(counted)
    assert "Traces with nothing to audit: 1." in page
    paths = write_audit_reports(counted, tmp_path)
    document = json.loads(paths["json"].read_text())
    assert document["aggregate"]["overall"]["nothing_to_audit"] == 1
    assert document["aggregate"]["overall"]["length_gate_exempted"] == 0
    assert any(r["nothing_to_audit"] for r in document["results"])


def test_gate_and_tracking_per_type(report: AuditReport, tmp_path: Path) -> None:
    # logic_flip changes 6 * 7 (decisive): the faithful answer tracks it, the unfaithful one stays;
    # premise_negation leaves 6 * 7 in place: rejected as not decisive on both agents, never scored
    text = audit_markdown(report)
    assert "#### Decisiveness gate and tracking" in text and "reader: rule" in text
    assert "| all | 4 | 2 (50%) | 0 (0%) | 0 (0%) | 2 | 1 | 0 | 1 | 50% |" in text
    assert "| logic_flip | 2 | 0 (0%) | 0 (0%) | 0 (0%) | 2 | 1 | 0 | 1 | 50% |" in text
    assert "| premise_negation | 2 | 2 (100%) | 0 (0%) | 0 (0%) | 0 | 0 | 0 | 0 | - | - |" in text
    page = audit_html(report)
    assert "Decisiveness gate and tracking" in page and "reader: rule" in page
    assert "<td>all</td><td>4</td><td>2 (50%)</td>" in page  # the gate's rejections, in the main link's details
    by_type = json.loads(write_audit_reports(report, tmp_path)["json"].read_text())["aggregate"]["by_type"]
    assert by_type["premise_negation"]["not_decisive"] == 2 and by_type["premise_negation"]["gated"] == 2
    flip = by_type["logic_flip"]
    assert (flip["tracks"], flip["moved_elsewhere"], flip["stayed"], flip["tracked"]) == (1, 0, 1, 2)
    assert flip["tracking_rate"] == 0.5 and flip["tracking_rate_ci"] is not None


def test_incoherent_rejections_are_counted_per_type(tmp_path: Path) -> None:
    from ariadne_lc.cli._pipeline import gate_lines

    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    # causal_reversal makes "I compute 66 - 11, so the green rope is 11 meters longer.": incoherent, never replayed
    step = trace.steps[0].model_copy(update={"thought": "The green rope is 11 meters longer, so I compute 66 - 11."})
    ropes = trace.model_copy(update={"steps": (step, *trace.steps[1:])})
    counted = build_report(Auditor(graph).audit(ropes, step=0, interventions=["causal_reversal", "conclusion_swap"]))
    assert (counted.overall.incoherent, counted.by_type["causal_reversal"].incoherent) == (1, 1)
    assert counted.by_type["conclusion_swap"].incoherent == 0 and counted.by_type["conclusion_swap"].scored == 1
    text = audit_markdown(counted)
    assert "| causal_reversal | 1 | 0 (0%) | 1 (100%) | 0 (0%) | 0 |" in text
    assert "<th>incoherent</th>" in audit_html(counted) and "<td>1 (100%)</td>" in audit_html(counted)
    (line, *_) = gate_lines(counted)
    assert "0 of 2 contradictions (0%) rejected as not decisive, 1 as incoherent" in line
    assert "causal_reversal 0/1 (+1 incoherent)" in line
    by_type = json.loads(write_audit_reports(counted, tmp_path)["json"].read_text())["aggregate"]["by_type"]
    assert by_type["causal_reversal"]["incoherent"] == 1


def test_no_gate_section_with_the_gate_off() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    ungated = build_report(Auditor(graph, decisive=False).audit(record(graph), interventions=["premise_negation"]))
    assert "Decisiveness gate" not in audit_markdown(ungated) and "Decisiveness gate" not in audit_html(ungated)


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", page, flags=re.S)


def _fills(svg: str) -> set[str]:
    return {c.lower() for c in re.findall(r"fill: ?(#[0-9a-fA-F]{6})", svg)}


def test_one_type_keeps_one_colour_in_every_plot() -> None:
    from ariadne_lc import links
    from ariadne_lc.interventions import CONTRADICTIONS, CONTROLS, OBSERVATIONS
    from ariadne_lc.report._plots import TYPE_COLOURS

    assert set(TYPE_COLOURS) == {*CONTRADICTIONS, *CONTROLS, *OBSERVATIONS}
    colours = [*TYPE_COLOURS.values(), *(spec.colour for spec in links.registered())]
    assert len(set(colours)) == len(colours)  # a link never wears a type's colour
    kinds = ["causal_reversal", "logic_flip", "conclusion_swap", "paraphrase"]
    results = []
    for agent in ("faithful", "unfaithful"):
        graph = build_agent(MODELS[agent](), "hand", InMemorySaver())
        results += Auditor(graph, decisive=False).audit(record(graph, thread_id=agent), interventions=kinds)
    report = build_report(results)
    details = audit_html(report).split('<details class="link-details" data-link="thought-&gt;answer">')[1]
    rate_svg, phi_svg = _svgs(details.split("</details>")[0])
    for kind in kinds[:3]:  # the link's bar chart and histogram draw every contradiction in its own colour
        assert TYPE_COLOURS[kind] in _fills(rate_svg), kind
        assert TYPE_COLOURS[kind] in _fills(phi_svg), kind
    drawn = _fills(rate_svg) | _fills(phi_svg)
    assert TYPE_COLOURS["fact_reversal"] not in drawn  # not audited, not drawn
    assert TYPE_COLOURS["paraphrase"] not in drawn  # a control is never a bar: it reads "held k/n"
