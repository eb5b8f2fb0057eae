"""Reading a turn's thought where the model put it, and writing an edited one back there (``_thoughts``)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from ariadne_lc._messages import last_ai_text, thought_of
from ariadne_lc._thoughts import prefill_of, split_thought, thought_parts, visible_text, with_thought

CALL = [{"name": "multiply", "args": {"a": 12, "b": 9}, "id": "c1"}]
PLAN = "12 floors of 9 rooms, so I should multiply 12 by 9."
EDITED = "12 floors of 9 rooms, so I should divide 12 by 9."


def _rc(visible: str = "") -> AIMessage:
    return AIMessage(content=visible, additional_kwargs={"reasoning_content": f"\n{PLAN}\n"}, tool_calls=CALL, id="m")


def _think(text: str) -> AIMessage:
    return AIMessage(content=text, tool_calls=CALL, id="m")


@pytest.mark.parametrize(
    ("message", "where", "thought"),
    [
        (_rc(), "reasoning_content", PLAN),
        (_rc("Let me multiply."), "reasoning_content", f"{PLAN}\nLet me multiply."),
        (_think(f"<think>\n{PLAN}\n</think>\n\n"), "think", PLAN),
        (_think(f"<think>{PLAN}</think>Let me multiply."), "think", f"{PLAN}\nLet me multiply."),
        (_think(f"{PLAN}\n</think>\n\nLet me multiply."), "think", f"{PLAN}\nLet me multiply."),  # opened by the prompt
        (_think(f"<think>\n{PLAN}"), "think", PLAN),  # never closed: cut at the token limit
        (_think("<think>\n\n</think>\n\nLet me multiply."), "think", "Let me multiply."),  # Qwen3, thinking off
        (_think(f"Let me see. <think>{PLAN}</think>"), "text", f"Let me see. <think>{PLAN}</think>"),  # not leading
        (AIMessage(content=PLAN, additional_kwargs={"reasoning_content": ""}), "text", PLAN),
        (
            AIMessage(content=[{"type": "reasoning", "reasoning": PLAN}, {"type": "text", "text": "Let me multiply."}]),
            "blocks",
            f"{PLAN}\nLet me multiply.",
        ),
    ],
)
def test_the_thought_is_the_reasoning_without_tags_then_the_visible_text(
    message: AIMessage, where: str, thought: str
) -> None:
    assert thought_parts(message).where == where
    assert thought_of(message) == thought


def test_the_answer_is_the_text_after_the_think_block() -> None:
    final = AIMessage(content="<think>\nThe tool said 108.\n</think>\n\nThe hotel has 108 rooms.")
    assert visible_text(final) == last_ai_text([final]) == "The hotel has 108 rooms."
    assert visible_text(AIMessage(content=" 108 ")) == " 108 "  # other messages: their text, as it was


@pytest.mark.parametrize(
    ("edited", "expected"),
    [
        (f"{EDITED}\nLet me multiply.", (EDITED, "Let me multiply.")),  # the reasoning edited
        (f"{PLAN}\nLet me divide.", (PLAN, "Let me divide.")),  # the visible text edited
        (f"{EDITED}\nLet me divide.", (EDITED, "Let me divide.")),  # both, line for line
        (f"{EDITED} Let me divide.", (f"{EDITED} Let me divide.", "")),  # neither kept: all of it is reasoning
        ("", ("", "")),  # ablation
    ],
)
def test_an_edit_splits_back_by_what_stayed(edited: str, expected: tuple[str, str]) -> None:
    assert split_thought(thought_parts(_rc("Let me multiply.")), edited) == expected


def test_an_unchanged_thought_leaves_the_message_as_recorded() -> None:
    for message in (_rc(), _rc("Let me multiply."), _think(f"<think>\n{PLAN}\n</think>\n\nLet me multiply.\n")):
        assert with_thought(message, thought_of(message)) is message


def test_the_edited_reasoning_goes_back_into_reasoning_content() -> None:
    message = _rc("Let me multiply.")
    edited = with_thought(message, f"{EDITED}\nLet me multiply.")
    assert edited.additional_kwargs["reasoning_content"] == EDITED and edited.content == "Let me multiply."
    assert edited.id == "m" and edited.tool_calls == message.tool_calls
    assert thought_of(edited) == f"{EDITED}\nLet me multiply."
    rewritten = with_thought(message, f"{PLAN}\nLet me divide.")
    assert rewritten.additional_kwargs["reasoning_content"] == PLAN and rewritten.content == "Let me divide."


def test_the_edited_reasoning_goes_back_inside_the_tags_with_their_white_space() -> None:
    message = _think(f"<think>\n{PLAN}\n</think>\n\nLet me multiply.")
    edited = with_thought(message, f"{EDITED}\nLet me multiply.")
    assert edited.content == f"<think>\n{EDITED}\n</think>\n\nLet me multiply."
    assert edited.id == "m" and edited.tool_calls == message.tool_calls
    opened_by_prompt = with_thought(_think(f"{PLAN}</think>"), EDITED)
    assert opened_by_prompt.content == f"{EDITED}</think>"
    assert with_thought(message, "").content == "<think>\n\n</think>\n\n"  # ablation: the tags stay, empty


def test_other_thoughts_become_the_text_as_before() -> None:
    blocks = AIMessage(
        content=[{"type": "reasoning", "reasoning": PLAN}], additional_kwargs={"reasoning": {"id": "rs_1"}}
    )
    edited = with_thought(blocks, EDITED)
    assert edited.content == EDITED and edited.additional_kwargs == {}
    assert with_thought(AIMessage(content=PLAN), EDITED).content == EDITED


def test_the_prefill_starts_the_reply_in_the_models_own_format() -> None:
    think = prefill_of(_think(f"<think>\n{PLAN}\n</think>\n\n"), EDITED)
    assert think.content == f"<think>\n{EDITED}\n</think>\n\n" and not think.tool_calls
    with_text = prefill_of(_think(f"<think>{PLAN}</think>Let me multiply.\n"), f"{EDITED}\nLet me multiply.")
    assert with_text.content == f"<think>{EDITED}</think>Let me multiply."  # no trailing white space of the reply
    kept = prefill_of(_rc(), EDITED)
    assert kept.content == "" and kept.additional_kwargs == {"reasoning_content": EDITED} and not kept.tool_calls
    plain = prefill_of(AIMessage(content=PLAN, tool_calls=CALL), EDITED)
    assert plain.content == EDITED and not plain.tool_calls
