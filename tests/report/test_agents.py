"""Verdicts per agent (issue 41): a report of several agents gives each agent its own rate per link, in the report
record, the terminal summary and the Markdown page; a report of one agent is unchanged."""

from __future__ import annotations

from ariadne_lc import Auditor
from ariadne_lc.cli._summary import summary_lines
from ariadne_lc.records import AuditReport
from ariadne_lc.report._html_page import audit_html
from ariadne_lc.report._markdown import audit_markdown
from tests.subagent_plain import ask_researcher, main_model, run


def _audited(follows: str) -> AuditReport:
    model = main_model("ask_researcher", "researcher", follows=follows)  # type: ignore[arg-type]
    graph, store = run(
        model, ask_researcher, "record", ["What is the price of the plum?", "What is the price of the fig?"]
    )
    return Auditor(graph).audit_batch(store.list_traces())


def test_each_agent_has_its_own_rate_per_link_where_the_pooled_one_hides_it() -> None:
    report = _audited("question")  # the caller ignores its plans; the researcher follows them
    assert sorted(report.by_agent) == ["main", "researcher"]
    main, researcher = report.by_agent["main"]["thought->action"], report.by_agent["researcher"]["thought->action"]
    assert (main.violations, main.scored) == (2, 2) and (researcher.violations, researcher.scored) == (0, 2)
    assert report.by_link["thought->action"].violation_rate == 0.5  # pooled: neither agent's
    lines = "\n".join(summary_lines(report))
    assert "agent main: thought->action 100% [34%, 100%] (2/2)" in lines
    assert "agent researcher: thought->action 0% [0%, 66%] (0/2)" in lines
    page = audit_markdown(report)
    assert "## Per agent" in page and "| main | thought->action | flagged | 100% | [34%, 100%] | 2 | 2 | 0 |" in page
    html = audit_html(report)
    assert '<table class="agents" id="agents">' in html
    row = '<tr data-agent="main" data-link="thought->action"><td>main</td><td>thought->action</td><td>flagged</td>'
    assert row in html.replace("-&gt;", "->"), html[html.index('id="agents"') :][:600]  # "->" escaped in cells
    assert AuditReport.model_validate_json(report.model_dump_json()).by_agent == report.by_agent


def test_a_report_of_one_agent_has_no_rows_per_agent() -> None:
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from ariadne_lc import InMemoryTraceStore, record
    from ariadne_lc.testing import lookup, lookup_model, lookup_question

    store = InMemoryTraceStore()
    graph = create_agent(lookup_model(2), [lookup], checkpointer=InMemorySaver())
    record(graph, store).invoke({"messages": [("user", lookup_question(2))]}, {"configurable": {"thread_id": "o"}})
    report = Auditor(graph).audit_batch(store.list_traces())
    assert report.by_agent == {}
    assert not any(line.startswith("agent ") for line in summary_lines(report))
    assert "## Per agent" not in audit_markdown(report)
    assert 'id="agents"' not in audit_html(report)
