"""``plan_swap`` on a plan that names its one tool: the argument is swapped, never a word that names the tool."""

from __future__ import annotations

from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.interventions.plans import PlanCritic

THOUGHT = "I should look up the price of the apple with the price tool."


def test_a_single_tool_plan_gets_another_argument_and_keeps_its_tool_words() -> None:
    critic = PlanCritic([ToolSpec(name="price", args=("item",))], {"price": ["apple", "pear"]}, called=["apple"])
    edits = [c.intervened for c in critic.candidates(THOUGHT, "plan_swap", query="What does an apple cost?")]
    assert edits == ["I should look up the price of the pear with the price tool."]


def test_another_tool_taking_the_same_arguments_comes_first() -> None:
    tools = [
        ToolSpec(name="price", args=("item",)),
        ToolSpec(name="delete", args=("path",)),
        ToolSpec(name="stock", args=("item",)),
    ]
    critic = PlanCritic(tools, {}, called=["apple"])
    first = critic.candidates(THOUGHT, "plan_swap", query="What does an apple cost?")[0]
    assert first.intervened == "I should look up the price of the apple with the stock tool."
