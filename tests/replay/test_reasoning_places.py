"""Replays of reasoning models: the edited reasoning is written back where the model put its own.

The scripted model writes its plan in ``reasoning_content`` or a ``<think>`` block, with visible text after it, and
answers with what its first turn's reasoning says, read back only from that place
(``ariadne_lc.testing._thoughts.carried``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.replay import Replayer
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.testing._thoughts import ThoughtPlace, carried, carry
from tests.helpers import build_agent, record

PLAN = "Six boxes of seven apples, so I should multiply 6 by 7."
VISIBLE = "Let me use the calculator."
PLACES: list[ThoughtPlace] = ["reasoning_content", "think"]


def _agent(place: ThoughtPlace, builder: str, saver: Any) -> tuple[Any, list[list[BaseMessage]]]:
    seen: list[list[BaseMessage]] = []

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        seen.append(list(messages))
        first = next((m for m in messages if isinstance(m, AIMessage)), None)
        if first is None:
            call = {"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c1"}
            return carry(place, PLAN, VISIBLE, tool_calls=[call])
        plan = carried(place, first)
        verb = next((w for w in ("multiply", "divide") if w in plan), "do nothing")
        return AIMessage(content=f"My reasoning says to {verb}.")

    script.__qualname__ = f"reasoning_places_{place}"
    return build_agent(ScriptedChatModel(script=script), builder, saver), seen


def _history(graph: Any) -> list[Any]:
    return [s.config for s in graph.get_state_history({"configurable": {"thread_id": "t-1"}})]


def _replayed(seen: list[list[BaseMessage]], message_id: str | None) -> AIMessage:
    found = next(m for m in seen[-1] if isinstance(m, AIMessage) and m.id == message_id)
    assert isinstance(found, AIMessage)
    return found


@pytest.mark.parametrize("place", PLACES)
def test_the_edited_reasoning_is_replayed_in_its_place_and_the_visible_text_stays(
    place: ThoughtPlace, builder: str, saver: Any
) -> None:
    graph, seen = _agent(place, builder, saver)
    trace = record(graph)
    step = trace.steps[0]
    assert step.thought == f"{PLAN}\n{VISIBLE}" and trace.final_answer == "My reasoning says to multiply."
    before = _history(graph)
    edited = f"{PLAN.replace('multiply', 'divide')}\n{VISIBLE}"
    result = Replayer(graph).replay_steps(trace, {0: edited})
    assert result.answer == "My reasoning says to divide." and result.tools_recorded == 1
    assert result.steps[0].thought == edited
    message = _replayed(seen, step.message_id)
    assert message.tool_calls[0]["args"] == {"expression": "6 * 7"}  # recorded mode: the step's call stays
    if place == "reasoning_content":
        assert message.additional_kwargs["reasoning_content"] == PLAN.replace("multiply", "divide")
        assert message.content == VISIBLE
    else:
        assert message.content == f"<think>\n{PLAN.replace('multiply', 'divide')}\n</think>\n\n{VISIBLE}"
    assert _history(graph) == before


@pytest.mark.parametrize("place", PLACES)
def test_ablation_empties_the_reasoning_in_its_place(place: ThoughtPlace, builder: str, saver: Any) -> None:
    graph, seen = _agent(place, builder, saver)
    trace = record(graph)
    result = Replayer(graph).replay_steps(trace, {0: ""})
    assert result.answer == "My reasoning says to do nothing." and result.steps[0].thought == ""
    message = _replayed(seen, trace.steps[0].message_id)
    if place == "reasoning_content":
        assert message.additional_kwargs["reasoning_content"] == "" and message.content == ""
    else:
        assert message.content == "<think>\n\n</think>\n\n"
