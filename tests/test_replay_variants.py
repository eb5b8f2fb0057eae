"""Replays for controls and multi-step interventions: ablation, early answering, several steps at once."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import ConfigurationError
from ariadne_lc.replay import EARLY_ANSWER_TOOL_MESSAGE, Replayer
from ariadne_lc.testing import faithful_arithmetic_model
from tests.helpers import FIRST, SECOND, TWO_STEP_QUESTION, build_agent, record, two_step_model


def _history(graph: Any, thread: str = "t-1") -> list[Any]:
    return [s.config for s in graph.get_state_history({"configurable": {"thread_id": thread}})]


def _counting_calculator(calls: list[str]) -> Any:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (counts its calls)."""
        calls.append(expression)
        return {"6 * 7": "42", "42 + 5": "47"}.get(expression, "0")

    return calculator


def test_ablation_drops_the_text_and_keeps_the_action(builder: str, saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    before = _history(graph)
    result = Replayer(graph).replay(trace, 0, "")
    assert result.steps[0].thought == "" and result.steps[0].message_id == trace.steps[0].message_id
    assert result.steps[0].tool_calls == trace.steps[0].tool_calls  # same call, recorded output served
    assert result.tools_recorded == 1 and result.model_calls == 1
    assert result.answer == "My reasoning no longer supports a calculation, so I cannot give a total."
    assert _history(graph) == before


def test_early_answer_cuts_right_after_the_thought(builder: str, saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    before = _history(graph)
    result = Replayer(graph).replay_early_answer(trace, 0)
    cut, answer = result.steps
    assert cut.thought == trace.steps[0].thought and cut.tool_calls == ()
    assert result.answer == answer.thought == "Following my plan to multiply (6 * 7), the total is 42."
    assert result.model_calls == 1 and result.tools_recorded == 0 and result.tools_unavailable == ()
    assert _history(graph) == before


@pytest.mark.parametrize("policy", ["recorded", "live"])
def test_early_answer_refuses_tools_after_the_cut_whatever_the_policy(builder: str, policy: str) -> None:
    calls: list[str] = []
    graph = build_agent(two_step_model(), builder, InMemorySaver(), [_counting_calculator(calls)])
    trace = record(graph, question=TWO_STEP_QUESTION)
    assert calls == ["6 * 7", "42 + 5"] and trace.final_answer == "Following my steps, the total is 47 apples."
    replayer = Replayer(graph, tool_policy=policy, safe_tools=["calculator"])
    result = replayer.replay_early_answer(trace, 0)
    assert calls == ["6 * 7", "42 + 5"]  # the model asked for the calculator after the cut; it did not run
    assert result.tools_unavailable == ("calculator",) and result.tools_live == 0
    assert result.answer == "Cut short, my best total is 47 apples."
    cut, asked_again, answer = result.steps
    assert cut.thought == FIRST and cut.tool_calls == ()
    assert asked_again.thought == SECOND
    (refused,) = asked_again.tool_calls
    assert refused.output == EARLY_ANSWER_TOOL_MESSAGE.format(name="calculator") and refused.status == "error"
    assert answer.thought == "Cut short, my best total is 47 apples."


def test_several_steps_are_substituted_in_place_and_the_run_resumes_after_the_latest(builder: str, saver: Any) -> None:
    calls: list[str] = []
    graph = build_agent(two_step_model(), builder, saver, [_counting_calculator(calls)])
    trace = record(graph, question=TWO_STEP_QUESTION)
    before = _history(graph)
    flip_first = FIRST.replace("multiply", "divide")
    flip_second = SECOND.replace("add", "subtract")
    replayer = Replayer(graph)

    both = replayer.replay_steps(trace, {0: flip_first, 1: flip_second})
    assert both.answer == f"Following my steps, the total is {6 / 7 - 5:g} apples."
    # forked before step 1: only the final turn ran, step 1's call got its recorded output
    assert both.model_calls == 1 and both.tools_recorded == 1 and calls == ["6 * 7", "42 + 5"]
    assert both.steps[0].index == 1 and both.steps[0].message_id == trace.steps[1].message_id
    assert both.steps[0].thought == flip_second

    # one step alone re-samples what follows it (turn two is generated again from the flipped first)
    first_only = replayer.replay(trace, 0, flip_first)
    assert first_only.answer == f"Following my steps, the total is {6 / 7 + 5:g} apples."
    assert first_only.model_calls == 2
    assert _history(graph) == before


def test_multi_step_needs_steps() -> None:
    graph = build_agent(faithful_arithmetic_model(), "hand", InMemorySaver())
    trace = record(graph)
    with pytest.raises(ConfigurationError, match="no steps"):
        Replayer(graph).replay_steps(trace, {})


async def test_async_variants() -> None:
    graph = build_agent(two_step_model(), "hand", InMemorySaver())
    store_trace = record(graph, question=TWO_STEP_QUESTION)
    replayer = Replayer(graph)
    both = await replayer.areplay_steps(store_trace, {0: FIRST, 1: SECOND.replace("add", "subtract")})
    assert both.answer == "Following my steps, the total is 37 apples."
    early = await replayer.areplay_early_answer(store_trace, 1)
    assert early.answer == "Cut short, my best total is 47 apples." and early.steps[0].tool_calls == ()
