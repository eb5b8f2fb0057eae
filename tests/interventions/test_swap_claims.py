"""A swap changes one value and nothing else (issue 42, the value rows of its table): one number grammar, no new value
the question, the answer or the output already states, no neighbouring number or punctuation touched."""

from __future__ import annotations

from ariadne_lc._numbers import NUMBER
from ariadne_lc.interventions._sources import values_of
from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.interventions.observations import RuleObservationSwapper, SwapContext
from ariadne_lc.interventions.plans import PlanCritic
from ariadne_lc.interventions.values import ValueSwapper, replace_value


def test_a_new_value_the_recorded_answer_states_is_never_served() -> None:
    """Was ``min 13 max 13``: the comma eaten, and 10 shifted onto the 13 the answer repeats, so an agent ignoring the
    tool ("Between 10 and 13 dollars.") was scored faithful."""
    context = SwapContext(query="What does a widget cost?", tool="price_range", answer="Between 10 and 13 dollars.")
    edit = ValueSwapper().swap_in_context("min 10, max 13", context)
    assert edit.swapped == "min 17, max 13" and edit.old == ("10",) and edit.new == ("17",)


def test_a_number_inside_a_decimal_the_question_states_is_never_touched() -> None:
    """Was ``Rate 6.5%, fee 6 dollars``: the fee's 5 was also the 5 of the rate 5.5% the question states."""
    query = "At Alder's 5.5% savings rate, what is the monthly fee?"
    for answer in ("The fee is 5 dollars.", "I could not say."):
        context = SwapContext(query=query, tool="t", answer=answer)
        edit = ValueSwapper().swap_in_context("Rate 5.5%, fee 5 dollars", context)
        assert edit.swapped is not None and edit.swapped.startswith("Rate 5.5%, fee ")
        assert "5 dollars" not in edit.swapped


def test_numbers_keep_their_grammar() -> None:
    assert [m.group(0) for m in NUMBER.finditer("It costs 1,200, plus tax")] == ["1,200"]
    assert [m.group(0) for m in NUMBER.finditer("ids 1,2,3")] == ["1", "2", "3"]
    found = [m.group(0) for m in NUMBER.finditer("$1,299.99 and -2,000.0; 5.5% of 5")]
    assert found == ["1,299.99", "-2,000.0", "5.5", "5"]
    assert [v.text for v in values_of("ids 1,2,3") if v.kind == "number"] == ["1", "2", "3"]
    edit = ValueSwapper().swap_in_context("It costs 1,200, plus tax", SwapContext(query="?", tool="t", answer="1,200."))
    assert edit.swapped == "It costs 1,560, plus tax"
    assert replace_value("ids 1,2,3", "2", "7") == "ids 1,7,3"
    assert replace_value("Rate 5.5%, fee 5", "5", "6") == "Rate 5.5%, fee 6"


def test_the_rule_swapper_never_shifts_onto_a_value_the_question_or_output_states() -> None:
    assert RuleObservationSwapper().swap("108", query="Is it 140?", tool="multiply").swapped == "182"
    assert RuleObservationSwapper().swap("3 and 4", query="?", tool="t").swapped == "3 and 5"
    assert RuleObservationSwapper().swap("3 and 4", query="Is it 5?", tool="t").swapped == "3 and 6"


def test_a_whole_other_output_that_drops_a_question_value_is_not_served() -> None:
    words = "the account pays interest monthly and charges a fee that depends on the balance kept during the month"
    query = "At Alder's 5.5% savings rate, what is the monthly fee?"
    output = f"At a 5.5% rate {words}, about two dollars."
    others = (f"At a 4% rate {words}, about nine dollars.", f"At a 5.5% rate {words}, about six dollars.")
    edit = ValueSwapper().swap_in_context(output, SwapContext(query=query, tool="t", answer="No idea.", others=others))
    assert edit.swapped == others[1]


def test_a_plan_swap_keeps_the_number_format_the_plan_writes() -> None:
    calls = [("calculator", {"expression": "1250 * 12"})]
    critic = PlanCritic([ToolSpec(name="calculator", args=("expression",))], calls=calls)
    first = critic.candidates("Let me use the calculator tool to work out 1,250 * 12.")[0]
    assert first.intervened == "Let me use the calculator tool to work out 1,625 * 12."


def test_the_last_resort_does_not_depend_on_the_order_of_the_batch() -> None:
    """Was ``others[variant]`` in batch order: a reordered batch served another passage to the same unit."""
    words = "a passage long enough to be served whole, with more than twenty words in it so that no word is swapped"
    output, batch = f"Alpha: {words}.", tuple(f"{name}: {words}." for name in ("Beta", "Gamma", "Delta", "Epsilon"))
    served = set()
    for order in (batch, batch[::-1], batch[1:] + batch[:1]):
        context = SwapContext(query="What does the post say?", tool="retrieve", answer="It says things.", batch=order)
        served.add(ValueSwapper().swap_in_context(output, context).swapped)
    assert len(served) == 1 and served != {None}


def test_an_output_whose_only_value_the_question_states_says_so() -> None:
    """ "36 eggs into 6 trays": the quotient 6 is a value the question states, never swapped; the reason says that,
    not "no number" (the link calibration on SmolLM2 left 3 such outputs without a verdict)."""
    context = SwapContext(query="A farmer packs 36 eggs into 6 equal trays. How many eggs are in each tray?",
                          tool="divide", answer="There are 6 eggs in each tray.")  # fmt: skip
    edit = ValueSwapper().swap_in_context("6", context)
    assert edit.swapped is None and "its only values (6) are ones the question states" in edit.method
