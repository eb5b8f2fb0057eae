"""The link registry (ariadne_lc.links): a link declared in one place reaches every part that knows links.

The test link below is registered in this module only (no other file of the package or the tests names it), and
must appear in the plan, the results, coverage, the HTML and Markdown pages, the terminal summary, the spans and the
written-back scores.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, links
from ariadne_lc.audit._plan import ACTION_KINDS, DECISIVE_ORDER
from ariadne_lc.cli._summary import summary_lines
from ariadne_lc.coverage import coverage, coverage_line
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.export.writeback import Score
from ariadne_lc.interventions import CONTRADICTIONS
from ariadne_lc.report import audit_html, audit_markdown
from ariadne_lc.stats import build_report
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import ToolCall, Trace

SECOND_LOOKUP = links.LinkSpec(
    name="second-lookup->answer",
    unit="output",
    strategy="replay_output",
    judged="answer",
    cause="second lookup's result",
    effect="answer",
    question="does the answer read the second lookup?",
    colour="#8a2be2",
    evaluation_name="second_lookup_faithfulness",
    interventions=frozenset({"observation_swap"}),
    outputs=lambda call: call.name == "lookup" and call.args.get("key") == 1,
)
"""A link on one tool output of the lookup agent (the lookup of key 1), as a harness link would be on a sub-agent's
result: its own unit, rate, colour and evaluation."""


@pytest.fixture
def second_lookup() -> Iterator[links.LinkSpec]:
    with links.temporarily(SECOND_LOOKUP) as spec:
        yield spec


def _lookup_agent(calls: int = 3) -> tuple[Auditor, Trace, InMemorySpanExporter]:
    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(calls), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    graph.invoke({"messages": [("user", lookup_question(calls))]}, {"configurable": {"thread_id": "t"}})
    [trace] = store.list_traces()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Auditor(graph, tracer_provider=provider), trace, exporter


def test_a_link_registered_in_one_module_reaches_every_part(second_lookup: links.LinkSpec) -> None:
    auditor, trace, exporter = _lookup_agent()
    [(_, planned)] = auditor.planned(trace)
    mine = [p for p in planned.audits if p.link == second_lookup.name]
    assert [(p.steps, p.kind) for p in mine] == [((1,), "observation_swap")]  # one unit: the lookup of key 1

    results = auditor.audit(trace)
    [result] = [r for r in results if r.link == second_lookup.name]
    assert result.status == "scored" and result.label == "faithful"  # the agent reads every lookup
    assert result.observation is not None and result.observation.tool == "lookup"

    covered = coverage(results)
    assert covered.by_link[second_lookup.name] == (1, 1)
    assert f"{second_lookup.name} 1/1 (100%)" in coverage_line(covered)
    report = build_report(results)
    assert second_lookup.name in report.by_link

    page = audit_html(report)
    assert f'data-link="{second_lookup.name}"' in page.replace("&gt;", ">") and second_lookup.colour in page
    assert f'title="{second_lookup.question}"' in page
    assert f"| {second_lookup.name} | **" in audit_markdown(report)
    rows = [line for line in summary_lines(report) if line.startswith(second_lookup.name)]
    assert rows and rows[0].split()[1:] == ["no", "verdict", "0%", "[0%,", "79%]", "1", "1/1", "(100%)"]

    names = {s.attributes.get("gen_ai.evaluation.name") for s in exporter.get_finished_spans()}
    assert second_lookup.evaluation_name in names
    assert Score.from_audit_result(result).name == second_lookup.evaluation_name


def test_a_link_is_planned_only_while_registered() -> None:
    auditor, trace, _ = _lookup_agent()
    [(_, planned)] = auditor.planned(trace)
    no_list = {spec.name for spec in links.registered() if spec.unit != "state"}  # the run writes no to-do list
    assert {p.link for p in planned.audits} == no_list
    with pytest.raises(ConfigurationError, match="unknown link 'second-lookup->answer'"):
        links.get(SECOND_LOOKUP.name)


def test_registration_refuses_what_cannot_be_audited() -> None:
    with pytest.raises(ConfigurationError, match="registered already"):
        links.register(links.OBSERVATION)
    with pytest.raises(ConfigurationError, match="cannot be unregistered"):
        links.unregister("thought->answer")
    wrong = links.LinkSpec(
        name="x", unit="output", strategy="replay_thought", judged="answer", cause="c", effect="e", question="?",
        colour="#000", evaluation_name="x",
    )  # fmt: skip
    with pytest.raises(ConfigurationError, match="cannot be audited by replay_thought"):
        links.register(wrong)
    thought = dataclasses.replace(links.THOUGHT_ANSWER, name="y")
    for bad, said in (
        (dataclasses.replace(thought, judged="calls"), "replay_thought produces 'answer' to judge, not 'calls'"),
        (dataclasses.replace(thought, needs_rerun=True), "needs_rerun must be False for replay_thought"),
        (dataclasses.replace(links.THOUGHT_ACTION, name="y", judged="answer"), "produces 'calls' to judge"),
        (dataclasses.replace(links.THOUGHT_ACTION, name="y", needs_rerun=False), "needs_rerun must be True"),
        (dataclasses.replace(links.OBSERVATION, name="y", multi_step=True), "are for thought units"),
    ):
        with pytest.raises(ConfigurationError, match=re.escape(said)):
            links.register(bad)
        assert "y" not in links.names()


def test_the_loops_links_are_declared_as_the_engine_audits_them() -> None:
    assert links.THOUGHT_ACTION.interventions == ACTION_KINDS == {*CONTRADICTIONS, "decisive", "rerun", "paraphrase"}
    assert {spec.name: spec.decisive_order for spec in links.registered() if spec.decisive_order} == DECISIVE_ORDER
    assert links.ordered(["thought->answer", "elsewhere", "thought->action"]) == [
        "thought->action", "thought->answer", "elsewhere",
    ]  # fmt: skip
    assert links.words("not-registered") == ("thought", "answer") and links.unit("not-registered") is None
    assert links.OBSERVATION.outputs is None and SECOND_LOOKUP.outputs is not None
    assert SECOND_LOOKUP.outputs(ToolCall(name="lookup", args={"key": 1}))
