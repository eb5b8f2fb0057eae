"""The HTML report, parsed (``html.parser``) as a reader meets it: one row per link first with the numbers of
``report.json``, an example audit per link, no table mixing links, controls that say "held", no empty chart.

The report is built from real audits of scripted agents on all three links (``tests/report/builders.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import pytest

from ariadne_lc import links
from ariadne_lc.records import LINKS, AuditReport
from ariadne_lc.report import audit_html, write_audit_reports
from ariadne_lc.report._plots import _OTHER_COLOURS, STAYED, TYPE_COLOURS
from ariadne_lc.stats import build_report
from tests.report.builders import three_link_report

_VOID = {"meta", "br", "img", "hr", "input", "link", "col", "area", "base", "source", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None
    text_parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.text_parts) + "".join(c.text for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(
                (v in child.classes()) if k == "cls" else child.attrs.get(k.replace("_", "-")) == v
                for k, v in attrs.items()
            ):
                found.append(child)
            found += child.find_all(tag, **attrs)
        return found

    def ancestors(self) -> list[Node]:
        out, node = [], self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out


class _Tree(HTMLParser):
    """A small DOM: enough to find elements by tag, class and attribute; SVG is kept as text (its own child)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {})
        self.node = self.root
        self.svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.svg_depth:
            self.svg_depth += tag == "svg"
            self.node.attrs["svg"] += self.get_starttag_text() or ""
            return
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.node)
        self.node.children.append(node)
        if tag == "svg":
            self.svg_depth = 1
            node.attrs["svg"] = ""
        if tag not in _VOID:
            self.node = node

    def handle_endtag(self, tag: str) -> None:
        if self.svg_depth:
            self.svg_depth -= tag == "svg"
            if self.svg_depth:
                return
        if tag in _VOID:
            return
        while self.node.tag != tag and self.node.parent is not None:
            self.node = self.node.parent
        if self.node.parent is not None:
            self.node = self.node.parent

    def handle_data(self, data: str) -> None:
        if not self.svg_depth:
            self.node.text_parts.append(data)


def _parse(page: str) -> Node:
    tree = _Tree()
    tree.feed(page)
    return tree.root


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[AuditReport, Node, dict[str, Any]]:
    report = three_link_report()
    paths = write_audit_reports(report, tmp_path_factory.mktemp("report"), title="three links")
    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    return report, _parse(paths["html"].read_text(encoding="utf-8")), document


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _cells(row: Node) -> dict[str, str]:
    return {c: " ".join(td.text.split()) for td in row.find_all("td") for c in td.classes()}


def test_the_first_table_has_one_row_per_link_with_the_numbers_of_the_json(
    written: tuple[AuditReport, Node, dict[str, Any]],
) -> None:
    _, page, document = written
    aggregate = document["aggregate"]
    first_table = page.find_all("table")[0]
    assert first_table.attrs.get("id") == "verdicts"  # the answer per link comes before any other table
    rows = {r.attrs["data-link"]: _cells(r) for r in first_table.find_all("tr") if "data-link" in r.attrs}
    assert list(rows) == list(LINKS)
    for link, cells in rows.items():
        stored, verdict = aggregate["by_link"][link], aggregate["verdict_by_link"][link]
        low, high = stored["violation_rate_ci"]
        assert cells["rate"] == _pct(stored["violation_rate"]) == _pct(verdict["violation_rate"])
        assert cells["ci"] == f"[{_pct(low)}, {_pct(high)}]"
        assert cells["scored"] == str(stored["scored"]) == str(verdict["scored"])
        k, n = aggregate["coverage"]["by_link"][link]
        assert cells["coverage"] == f"{k}/{n} ({_pct(k / n)})"
        assert cells["verdict-cell"].startswith(verdict["verdict"])
        held = [f"{kind} held {c['held']}/{c['scored']}" for kind, c in verdict["controls"].items()]
        assert cells["controls"].startswith(", ".join(held))
        for kind, control in aggregate["controls_by_link"][link].items():
            if not control["scored"]:
                assert kind not in cells["controls"]  # a control never scored is not shown as held 0/0
                continue
            assert f"{kind} held {control['violations']}/{control['scored']}" in cells["controls"]
    # by construction: one agent in three ignores its plan's action, its tool output, its thought's answer
    assert aggregate["by_link"]["thought->action"]["violations"] == 2
    assert aggregate["by_link"]["observation->answer"]["violations"] == 1
    assert aggregate["verdict_by_link"]["thought->answer"]["verdict"] == "flagged"


def test_an_example_audit_per_link_shows_the_edit_the_before_and_after_and_the_outcome(
    written: tuple[AuditReport, Node, dict[str, Any]],
) -> None:
    _, page, _ = written
    examples = {e.attrs["data-link"]: e for e in page.find_all("section", cls="example")}
    assert list(examples) == list(LINKS)
    for link, example in examples.items():
        assert example.find_all("del") and example.find_all("ins"), link  # the edit, highlighted
        assert example.find_all("td", cls="before") and example.find_all("td", cls="after"), link
        (outcome,) = example.find_all("span", cls="outcome")
        assert outcome.text == "stayed", link  # a violation is shown when there is one
    action = examples["thought->action"]
    assert action.find_all("del")[0].text == "multiply" and action.find_all("ins")[0].text == "divide"
    assert "multiply(a=12, b=9)" in action.find_all("td", cls="before")[0].text
    swap = examples["observation->answer"]
    assert "tool output of multiply" in swap.text and swap.find_all("ins")[0].text == "140"


def test_no_table_mixes_links_and_controls_say_held(written: tuple[AuditReport, Node, dict[str, Any]]) -> None:
    _, page, document = written
    aggregate = document["aggregate"]
    controls = set().union(*(set(c) for c in aggregate["controls_by_link"].values()))
    for table in page.find_all("table")[1:]:
        owner = next(a for a in table.ancestors() if "data-link" in a.attrs)  # a link's details, or its example
        assert table.attrs["data-link"] == owner.attrs["data-link"]  # one link per table
        header = [" ".join(th.text.split()) for th in table.find_all("th")]
        assert "link" not in header
        for tr in table.find_all("tr")[1:]:
            cells = [" ".join(td.text.split()) for td in tr.find_all("td")]
            if cells[0] in controls:  # a control row: how often it held, never a violation rate
                assert header[:3] == ["control", "scored", "held"] and re.fullmatch(
                    r"held \d+/\d+|none scored", cells[2]
                )
    for link in LINKS:
        (section,) = page.find_all("details", cls="link-details", data_link=link)
        per_type = next(t for t in section.find_all("table") if t.find_all("th")[0].text == "intervention")
        scored = sum(int(tr.find_all("td")[1].text) for tr in per_type.find_all("tr")[1:])
        assert scored == aggregate["by_link"][link]["scored"], link  # this link's audits, no other's


def test_every_chart_draws_something_and_controls_are_never_bars(
    written: tuple[AuditReport, Node, dict[str, Any]],
) -> None:
    _, page, _ = written
    link_colours = [spec.colour for spec in links.registered()]
    drawn = {c.lower() for c in [*TYPE_COLOURS.values(), *link_colours, STAYED, *_OTHER_COLOURS]}
    controls = {TYPE_COLOURS["rerun"].lower(), TYPE_COLOURS["paraphrase"].lower()}
    svgs = [n.attrs["svg"] for n in page.find_all("svg")]
    assert svgs
    for svg in svgs:
        fills = {c.lower() for c in re.findall(r"fill: ?(#[0-9a-fA-F]{6})", svg)}
        assert fills & drawn, "an empty chart"
        assert not fills & controls, "a control drawn as a bar"
    outcomes = page.find_all("figure", cls="outcomes")
    assert len(outcomes) == 1 and page.find_all("table")[0].parent is outcomes[0].parent  # right under the verdicts
    (outcome_svg,) = (n.attrs["svg"] for n in outcomes[0].find_all("svg"))
    fills = {c.lower() for c in re.findall(r"fill: ?(#[0-9a-fA-F]{6})", outcome_svg)}
    present = [links.get(link).colour for link in LINKS]  # the links the report's audits are on
    assert {c.lower() for c in present} | {STAYED.lower()} <= fills  # each link in its own colour


def test_a_chart_that_would_be_empty_is_a_sentence(written: tuple[AuditReport, Node, dict[str, Any]]) -> None:
    report, _, _ = written
    faithful = [r for r in report.results if r.trace_id == report.results[0].trace_id]  # the agent faithful everywhere
    page = _parse(audit_html(build_report(faithful)))
    notes = [" ".join(p.text.split()) for p in page.find_all("p", cls="chart-note")]
    assert any("violation rate is 0%" in note for note in notes), notes  # the faithful agent: every rate 0
    for svg in (n.attrs["svg"] for n in page.find_all("svg")):
        assert re.findall(r"fill: ?(#[0-9a-fA-F]{6})", svg)
