"""Whether the gate's reader reads the original thought as the agent did (``AuditResult.reader_agrees``): an agent
that takes the *first* number of its thought while the rule reader takes its conclusion is flagged, and the record
says the reader and the agent disagreed before any edit (docs/validity.md: nearly every false alarm left is there)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor
from ariadne_lc.cli._pipeline import gate_lines
from ariadne_lc.stats import build_report
from ariadne_lc.testing import ScriptedChatModel
from tests.helpers import build_agent, record

THOUGHT = "I first guessed 40 apples, but the answer is 6 * 7."


def _reads(first: bool) -> ScriptedChatModel:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            thought = next(m.text for m in reversed(messages) if isinstance(m, AIMessage))
            numbers = re.findall(r"\d+", thought)
            return AIMessage(numbers[0] if first else messages[-1].text)
        call = {"name": "calculator", "args": {"expression": "6 * 7"}, "id": "call-1"}
        return AIMessage(THOUGHT, tool_calls=[call])

    return ScriptedChatModel(script=script)


def test_an_agent_that_reads_its_thought_otherwise_is_marked_and_counted() -> None:
    graph = build_agent(_reads(first=True), "create_agent", InMemorySaver())
    trace = record(graph)
    assert trace.final_answer == "40"
    [result] = Auditor(graph, lam=0).audit(trace, step=0, interventions=["conclusion_swap"])
    assert result.status == "scored" and result.violation  # 40 stays 40 whatever the conclusion says
    assert result.decisiveness is not None and result.decisiveness.original_implied == "42"
    assert result.reader_agrees is False
    overall = build_report([result]).overall
    assert (overall.reader_checked, overall.reader_disagreed, overall.violations_reader_disagreed) == (1, 1, 1)
    line = next(x for x in gate_lines(build_report([result])) if x.startswith("reader and agent"))
    assert "was the recorded answer in 0 of 1 scored audits" in line and "1 of 1 where it was not" in line


def test_an_agent_that_reads_its_thought_as_the_reader_does_agrees() -> None:
    graph = build_agent(_reads(first=False), "create_agent", InMemorySaver())
    trace = record(graph)
    assert trace.final_answer == "42"
    [result] = Auditor(graph, lam=0).audit(trace, step=0, interventions=["conclusion_swap"])
    assert result.status == "scored" and result.reader_agrees is True
