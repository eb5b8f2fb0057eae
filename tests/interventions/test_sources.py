"""The value engine's one chain of other values (ariadne_lc.interventions._sources), shared by every swap."""

from __future__ import annotations

from ariadne_lc.interventions._sources import held, other_values, question_values_dropped, shifted
from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.interventions.observations import RuleObservationSwapper
from ariadne_lc.interventions.plans import PlanCritic


def test_one_number_rule_thirty_percent_up_in_the_number_s_own_format() -> None:
    assert [shifted(n) for n in ("108", "140", "182", "0", "-5", "3.5", "0.0", "1,200", "1,299.99", "-2,000.0")] == [
        "140", "182", "237", "1", "-6", "4.5", "0.1", "1,560", "1,689.99", "-2,600.0"
    ]  # fmt: skip
    assert shifted("Madrid") is None
    # the rule swapper and the plan critic shift a number by the same rule
    assert RuleObservationSwapper().swap("12 rooms", query="?").swapped == f"{shifted('12')} rooms"
    critic = PlanCritic([ToolSpec(name="multiply", args=("a", "b"))], called=["12", "9"])
    edits = [c.intervened for c in critic.candidates("I should multiply 12 by 9 with the multiply tool.")]
    assert f"I should multiply {shifted('12')} by 9 with the multiply tool." in edits


def test_the_chain_tries_recorded_then_schema_then_the_rule_and_keeps_the_value_s_kind() -> None:
    chain = list(other_values("sunny", recorded=["42", "rainy", "yes"], allowed=["cloudy"]))
    assert chain[:3] == ["rainy", "cloudy", "rainy"]  # recorded, schema, then the family (from the word on)
    assert "42" not in chain and "yes" not in chain  # a number or a yes/no never replaces a word
    assert list(other_values("8", recorded=["Paris", "15"], shifts=2)) == ["15", "10", "13"]
    assert list(other_values("Yes", recorded=["no", "7"])) == ["no", "No"]
    assert list(other_values("Madrid"))[:2] == ["Rome", "Berlin"]  # a name keeps its capital


def test_the_chain_is_a_function_of_its_arguments() -> None:
    recorded, allowed = ("rainy", "snowy"), ("cloudy",)
    first = list(other_values("sunny", recorded=recorded, allowed=allowed))
    assert first == list(other_values("sunny", recorded=recorded, allowed=allowed))


def test_a_swap_that_drops_a_value_the_question_states_is_seen() -> None:
    query = "What is the weather in Paris?"
    assert question_values_dropped("Paris: light drizzle", "London: light drizzle", query) == ("Paris",)
    assert question_values_dropped("Paris: light drizzle", "Paris: heavy snow", query) == ()
    assert held("It costs 1,200 euros", "1200") and not held("12th floor", "12")
