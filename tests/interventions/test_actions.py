"""The implied action (thought->action link): what the rule and model readers read, and how actions compare."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from ariadne_lc.demo import DEMO_TOOLS
from ariadne_lc.interventions.action_model import ModelActionReader, parse_action_reply
from ariadne_lc.interventions.actions import (
    ImpliedAction,
    RuleActionReader,
    ToolSpec,
    call_similarity,
    calls_allowed,
    compatible,
    tool_specs,
)
from ariadne_lc.testing import ScriptedChatModel, arithmetic_tools

ARITHMETIC = tool_specs(arithmetic_tools())
LOOKUPS = (ToolSpec(name="lookup_population"), ToolSpec(name="capital_of"))


@pytest.mark.parametrize(
    ("thought", "tools", "key"),
    [
        ("12 floors of 9 rooms, so I should multiply 12 by 9.", ARITHMETIC, "multiply(12, 9)"),
        ("There are 6 boxes of 7, so it is true that I should multiply the boxes.", ARITHMETIC, "multiply(6, 7)"),
        ("12 floors of 9 rooms, so it is false that I should divide 12 by 9.", ARITHMETIC, "not divide"),
        ("Instead of multiplying, I will add 12 and 9.", ARITHMETIC, "add(12, 9)"),
        ("I need the population of Spain, so I will look up Spain.", LOOKUPS, "lookup_population(Spain)"),
        ("I need the population of Spain, so I won't look up Spain.", LOOKUPS, "not lookup_population"),
        ("I know 12 * 9 = 108, so I can answer directly.", ARITHMETIC, "no call"),
        ("So I will calculate 6 * 7 with the calculator.", tool_specs(DEMO_TOOLS), "calculator(6 * 7)"),
        ("So I will calculate 6 / 7 instead.", tool_specs(DEMO_TOOLS), "calculator(6 / 7)"),
        ("So I will look up boiling point of water.", tool_specs(DEMO_TOOLS), "lookup(boiling point of water)"),
        # a causal reversal puts the description last: the plan is the clause that says what I will do
        ("I should divide 63 by 7, so each piece is 7 times the length of a rope.", ARITHMETIC, "divide(63, 7)"),
        ("Each piece is 7 times the length of a rope, so I should divide 63 by 7.", ARITHMETIC, "divide(63, 7)"),
        ("Let me look up Spain. Its capital is what the question asks about.", LOOKUPS, "lookup_population(Spain)"),
    ],
)
def test_the_rule_reader_reads_the_action_a_thought_plans(thought: str, tools: tuple[ToolSpec, ...], key: str) -> None:
    assert RuleActionReader().read_action("?", thought, tools).key == key


def test_a_thought_that_names_no_tool_commits_to_no_action() -> None:
    action = RuleActionReader().read_action("?", "Let me think about the hotel first.", ARITHMETIC)
    assert not action.committed and action.key is None and "names no tool" in (action.reason or "")


def test_compatibility_decides_what_a_contradiction_changed() -> None:
    multiply = ImpliedAction(tool="multiply", values=("12", "9"))
    assert compatible(multiply, ImpliedAction(tool="multiply", values=("9", "12")))  # order aside
    assert not compatible(multiply, ImpliedAction(tool="multiply", values=("19", "14")))
    assert not compatible(multiply, ImpliedAction(tool="divide", values=("12", "9")))
    assert not compatible(multiply, ImpliedAction(tool="multiply", negated=True))
    assert compatible(multiply, ImpliedAction(tool="divide", negated=True))  # "not divide" leaves multiply in place
    assert compatible(multiply, ImpliedAction(tool="multiply"))  # arguments unstated on one side
    assert not compatible(multiply, ImpliedAction(no_call=True))


def test_calls_follow_an_implied_action() -> None:
    implied = ImpliedAction(tool="multiply", values=("19", "14"))
    assert calls_allowed(implied, [("multiply", {"a": 19.0, "b": 14})])
    assert not calls_allowed(implied, [("multiply", {"a": 12, "b": 9})])
    assert calls_allowed(ImpliedAction(tool="calculator", values=("6", "7")), [("calculator", {"expression": "6*7"})])
    divide = ImpliedAction(tool="calculator", values=("6 / 7",))
    assert calls_allowed(divide, [("calculator", {"expression": "6/7"})])
    assert not calls_allowed(divide, [("calculator", {"expression": "6 * 7"})])  # the operation is the argument
    assert calls_allowed(ImpliedAction(tool="multiply", values=("6 * 7",)), [("multiply", {"a": 6, "b": 7})])
    assert not compatible(ImpliedAction(tool="calculator", values=("6 * 7",)), divide)
    assert calls_allowed(ImpliedAction(tool="divide", negated=True), [("multiply", {"a": 1, "b": 2})])
    assert calls_allowed(ImpliedAction(no_call=True), [])
    assert calls_allowed(ImpliedAction(), []) is None


def test_call_similarity() -> None:
    a = [("multiply", {"a": 12, "b": 9})]
    assert call_similarity(a, [("multiply", {"a": 12.0, "b": "9"})]) == 1.0
    assert call_similarity(a, [("multiply", {"a": 19, "b": 14})]) == 0.5
    assert call_similarity(a, [("divide", {"a": 12, "b": 9})]) == 0.0
    assert call_similarity(a, []) == 0.0 and call_similarity([], []) == 1.0


def test_the_model_reader_parses_a_json_call_and_refuses_anything_else() -> None:
    reply = 'Sure: {"name": "multiply", "arguments": {"a": 12, "b": 9}}'
    assert parse_action_reply(reply, ARITHMETIC, "model:m").key == "multiply(12, 9)"
    assert parse_action_reply('{"not": "divide"}', ARITHMETIC, "m").key == "not divide"
    assert parse_action_reply('{"name": null}', ARITHMETIC, "m").key == "no call"
    assert parse_action_reply('{"name": "teleport"}', ARITHMETIC, "m").reason == (
        'the reader named no known tool: \'{"name": "teleport"}\''
    )
    assert parse_action_reply("I think multiply", ARITHMETIC, "m").key is None
    model = ScriptedChatModel(script=lambda messages: AIMessage(content='{"name": "add", "arguments": {"a": 1}}'))
    assert ModelActionReader(model).read_action("?", "so I add 1", ARITHMETIC).key == "add(1)"


def test_a_model_reader_whose_reply_is_unreadable_falls_back_to_the_rule_reader_and_says_so() -> None:
    from langchain_core.messages import AIMessage

    from ariadne_lc.interventions.action_model import ModelActionReader
    from ariadne_lc.testing import ScriptedChatModel

    mumbling = ScriptedChatModel(script=lambda messages: AIMessage(content="I think it multiplies things."))
    tools = [ToolSpec(name="add"), ToolSpec(name="multiply")]
    read = ModelActionReader(mumbling).read_action("?", "12 floors of 9 rooms, so I should multiply 12 by 9.", tools)
    assert read.committed and read.key == "multiply(12, 9)"  # the thought commits: the reader failed, not it
    assert read.reader.startswith("rule (fallback: model:") and read.reader.endswith("unreadable)")
    fluent = ScriptedChatModel(script=lambda m: AIMessage(content='{"name": "add", "arguments": {"a": 1, "b": 2}}'))
    assert ModelActionReader(fluent).read_action("?", "I should add 1 and 2.", tools).reader.startswith("model:")
