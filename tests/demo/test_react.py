"""The text ReAct protocol: parser, prompt builder, grammar (no model needed)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from ariadne_lc.demo import DEMO_TOOLS, build_react_prompt, extract_final_answer, parse_react_reply, react_grammar
from ariadne_lc.demo._react import (
    FIRST_TURN_INSTRUCTION,
    FORCE_FINAL_INSTRUCTION,
    render_action,
    split_final_content,
    tool_call_args,
)
from ariadne_lc.demo._tools import calculator

TOOLS = ["calculator", "lookup"]


@pytest.mark.parametrize(
    ("reply", "tool", "tool_input", "thought"),
    [
        ("Thought: multiply.\nAction: calculator[6 * 7]", "calculator", "6 * 7", "multiply."),
        ("Thought: x\nAction: Calculator(6*(2+3)) and more", "calculator", "6*(2+3)", "x"),
        ("Action: lookup: boiling point", "lookup", "boiling point", ""),
        ("Thought: a\nAction: calculator\nAction Input: 3+4", "calculator", "3+4", "a"),
        ("Thought: cut off\nAction: calculator[3*4", "calculator", "3*4", "cut off"),
        ("thought: lower case\naction: LOOKUP[`sun`]", "lookup", "sun", "lower case"),
        ("Thought: two\nlines\nAction: lookup[moon]", "lookup", "moon", "two lines"),
    ],
)
def test_parses_actions(reply: str, tool: str, tool_input: str, thought: str) -> None:
    step = parse_react_reply(reply, TOOLS)
    assert (step.kind, step.tool, step.tool_input, step.thought) == ("action", tool, tool_input, thought)
    assert step.raw == reply.strip()


def test_parses_final_answer_and_ignores_what_follows() -> None:
    step = parse_react_reply("Thought: done.\nFinal Answer: 42\nQuestion: next?", TOOLS)
    assert (step.kind, step.thought, step.answer) == ("final", "done.", "42")


def test_first_of_action_and_final_wins() -> None:
    invented = "Thought: t\nAction: calculator[2+2]\nObservation: 4\nThought: ok\nFinal Answer: 4"
    assert parse_react_reply(invented, TOOLS).kind == "action"
    early = "Thought: t\nFinal Answer: 4\nAction: calculator[2+2]"
    assert parse_react_reply(early, TOOLS).kind == "final"


@pytest.mark.parametrize(
    "reply",
    ["", "I like turtles", "Thought: hmm\nAction: search[x]", "Thought: a\nFinal Answer:", "Action: calculator[]"],
)
def test_unreadable_replies_are_unparsed_not_errors(reply: str) -> None:
    step = parse_react_reply(reply, TOOLS)
    assert step.kind == "unparsed"
    assert step.answer == " ".join(reply.split())


def test_final_content_round_trip() -> None:
    assert split_final_content("The sum is 4.\nFinal Answer: 4") == ("The sum is 4.", "4")
    assert split_final_content("no marker") == ("no marker", None)
    assert extract_final_answer(AIMessage("x\nFinal Answer: a\nFinal Answer: b")) == "b"
    assert extract_final_answer("nothing") is None


def test_tool_call_args_and_render_are_inverse() -> None:
    args = tool_call_args(calculator, "6 * 7")
    assert args == {"expression": "6 * 7"}
    assert render_action("calculator", args) == "Action: calculator[6 * 7]"
    assert render_action("f", {"a": 1, "b": "x"}) == 'Action: f[{"a": 1, "b": "x"}]'


def _history() -> list[HumanMessage | AIMessage | ToolMessage]:
    call = {"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c1", "type": "tool_call"}
    return [
        HumanMessage("6 boxes of 7 muffins?"),
        AIMessage("6 boxes of 7 is 6 times 7.", tool_calls=[call], id="ai-1"),
        ToolMessage("42", tool_call_id="c1"),
    ]


def test_prompt_renders_history_as_react_turns() -> None:
    prompt = build_react_prompt(_history(), DEMO_TOOLS)
    assert isinstance(prompt[0], SystemMessage)
    assert "calculator[input]" in prompt[0].text and "lookup[input]" in prompt[0].text
    tail = [(type(m).__name__, m.text) for m in prompt[-3:]]
    assert tail == [
        ("HumanMessage", "Question: 6 boxes of 7 muffins?"),
        ("AIMessage", "Thought: 6 boxes of 7 is 6 times 7.\nAction: calculator[6 * 7]"),
        ("HumanMessage", "Observation: 42"),
    ]


def test_prompt_carries_an_edited_thought() -> None:
    history = _history()
    history[1] = history[1].model_copy(update={"content": "6 boxes of 7 is not 42."})
    prompt = build_react_prompt(history, DEMO_TOOLS)
    assert prompt[-2].text == "Thought: 6 boxes of 7 is not 42.\nAction: calculator[6 * 7]"


def test_prompt_renders_final_answers_system_messages_and_force_final() -> None:
    history = [
        SystemMessage("Be brief."),
        HumanMessage("q1"),
        AIMessage("It is 4.\nFinal Answer: 4"),
        HumanMessage("q2"),
    ]
    prompt = build_react_prompt(history, DEMO_TOOLS, force_final=True)
    assert prompt[0].text.endswith("Be brief.")
    assert [m.text for m in prompt[-4:]] == [
        "Question: q1",
        "Thought: It is 4.\nFinal Answer: 4",
        "Question: q2",
        FORCE_FINAL_INSTRUCTION,
    ]


def test_grammar_names_every_tool_and_can_forbid_actions() -> None:
    grammar = react_grammar(TOOLS)
    assert '"calculator["' in grammar and '"lookup["' in grammar and "action | final" in grammar
    final_only = react_grammar(TOOLS, final_only=True)
    assert "action" not in final_only and '"Final Answer: "' in final_only


def test_first_turn_grammar_admits_only_a_thought_and_an_action() -> None:
    first = react_grammar(TOOLS, first_turn=True)
    assert 'root ::= "Thought: " thought "\\n" (action)' in first and "thought ::= [^\\n]{32,240}" in first
    assert "Final Answer" not in first and '"calculator["' in first
    assert react_grammar(TOOLS, first_turn=True, final_only=True) == react_grammar(TOOLS, final_only=True)


def test_first_turn_ok_needs_an_action_after_an_auditable_thought() -> None:
    from ariadne_lc.audit import DEFAULT_MIN_THOUGHT_CHARS
    from ariadne_lc.demo._react import FIRST_THOUGHT_MIN_CHARS, first_turn_ok

    assert FIRST_THOUGHT_MIN_CHARS == DEFAULT_MIN_THOUGHT_CHARS  # what step="auto" audits
    ok = "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]"
    assert first_turn_ok(parse_react_reply(ok, TOOLS))
    assert not first_turn_ok(parse_react_reply("Thought: 6 times 7.\nAction: calculator[6 * 7]", TOOLS))
    assert not first_turn_ok(parse_react_reply("Action: calculator[6 * 7]", TOOLS))
    assert not first_turn_ok(parse_react_reply("Thought: 6 boxes of 7 muffins is 6 times 7.\nFinal Answer: 42", TOOLS))


def test_system_prompt_asks_for_a_tool_first() -> None:
    prompt = build_react_prompt([HumanMessage("q")], DEMO_TOOLS, first_turn_retry=True)
    assert "Your first reply to a question always has a Thought and an Action" in prompt[0].text
    assert prompt[-1].text == FIRST_TURN_INSTRUCTION
