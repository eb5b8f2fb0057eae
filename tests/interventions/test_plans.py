"""``plan_swap``: edits a person would accept as another plan, or none (issue 42, the plans of its table)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.interventions.plans import NO_COHERENT_EDIT, PlanCritic, PlanEdit

THOUGHT = "I should look up the price of the apple with the price tool."


def T(name: str, *args: str, description: str = "") -> ToolSpec:
    return ToolSpec(name=name, args=args, description=description)


def edits(tools: list[ToolSpec], thought: str, calls: list[tuple[str, dict[str, Any]]], query: str = "") -> list[str]:
    return [c.intervened or "" for c in PlanCritic(tools, calls=calls).candidates(thought, query=query)]


def test_a_single_tool_plan_gets_another_value_of_the_argument_it_states_and_keeps_its_tool_words() -> None:
    critic = PlanCritic([T("price", "item")], calls=[("price", {"item": "apple"})])
    found = [c.intervened for c in critic.candidates(THOUGHT, "plan_swap", query="What does an apple cost?")]
    assert found[0] == "I should look up the price of the pear with the price tool."
    assert all("price tool" in (f or "") for f in found)


def test_a_value_of_the_same_argument_in_the_run_comes_first() -> None:
    by_argument = {"price": {"item": ["apple", "quince"]}}
    critic = PlanCritic([T("price", "item")], calls=[("price", {"item": "apple"})], by_argument=by_argument)
    assert critic.candidates(THOUGHT)[0].intervened == "I should look up the price of the quince with the price tool."


@pytest.mark.parametrize(
    ("thought", "tools", "calls"),
    [
        ("Let me search for the latest news about the Mars rover.",
         [T("search", "query"), T("calculator", "expression")], [("search", {"query": "latest news Mars rover"})]),
        ("I will query the database to find the top accounts.", [T("sql_db_query", "query"), T("sql_db_schema",
         "table_names")], [("sql_db_query", {"query": "SELECT name FROM accounts ORDER BY total DESC"})]),
        ("I should search the blog posts for reward hacking.", [T("retrieve_blog_posts", "query",
         description="Search and return information about the blog posts.")],
         [("retrieve_blog_posts", {"query": "reward hacking"})]),
    ],
)  # fmt: skip
def test_a_tool_named_by_a_word_of_free_text_is_not_swapped_for_another_word(
    thought: str, tools: list[ToolSpec], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """Was "Let me calculator for ...", "I will schema the database", "I should retrieve reward hacking."."""
    critic = PlanCritic(tools, calls=calls)
    assert critic.candidates(thought) == []
    made = critic.intervene(thought, "plan_swap")
    assert not made.applicable and made.method.startswith(NO_COHERENT_EDIT)


def test_a_tool_name_word_in_free_text_is_never_replaced_by_another_tool_name() -> None:
    """Was "find out the population_of Peru": the country is swapped, never the name."""
    tools = [T("capital_of", "country"), T("population_of", "country")]
    found = edits(tools, "I need to find out the capital of Peru.", [("capital_of", {"country": "Peru"})])
    assert found and all(f.startswith("I need to find out the capital of ") and "population" not in f for f in found)
    assert "Peru" not in found[0]


@pytest.mark.parametrize(
    ("thought", "tools", "calls", "first"),
    [
        ("I need to find Alice's email address.", [T("search", "query"), T("get_email", "name")],
         [("get_email", {"name": "Alice"})], "I need to find Bob's email address."),
        ("I should look up order 4417.", [T("get_order", "order_id"), T("refund_order", "order_id", "reason")],
         [("get_order", {"order_id": "4417"})], "I should look up order 5742."),
        ("I'll translate this sentence into French.", [T("translate", "text", "target_language")],
         [("translate", {"text": "Hello, how are you?", "target_language": "French"})],
         "I'll translate this sentence into Spanish."),
        ("I should ask the researcher for the price of the apple.",
         [T("researcher", "question"), T("writer", "question")],
         [("researcher", {"question": "What is the price of the apple?"})],
         "I should ask the researcher for the price of the pear."),
    ],
)  # fmt: skip
def test_the_value_swapped_is_the_one_the_plan_states_and_the_new_one_is_of_its_own_argument(
    thought: str, tools: list[ToolSpec], calls: list[tuple[str, dict[str, Any]]], first: str
) -> None:
    """Were "find Alice's search address", "look up refund 4417", "translate ... into Hello, how are you?.", "ask the
    researcher for the What is the price of the apple?."."""
    found = edits(tools, thought, calls)
    assert found[0] == first
    assert not any(("?" in f and "?" not in thought) or re.search(r"\b(?:search|refund)\b", f) for f in found)


def test_a_tool_is_swapped_only_in_a_slot_that_takes_a_name_and_nowhere_it_would_contradict_the_plan() -> None:
    """Was "use the get_weather tool to check the time in Paris": the word "weather" stays outside the slot, so only the
    city is swapped; a plan that names its tool only in the slot gets the other tool there."""
    tools = [T("get_weather", "city"), T("get_time", "city")]
    call = [("get_weather", {"city": "Paris"})]
    found = edits(tools, "I'll use the get_weather tool to check the weather in Paris.", call)
    assert found and all("get_weather tool to check the weather in " in f and "Paris" not in f for f in found)
    found = edits(tools, "To get this, I will call the `get_weather` function for Paris.", call)
    assert "To get this, I will call the `get_time` function for Paris." in found


def test_another_tool_must_take_the_calls_arguments() -> None:
    """Was "compute 23 * 7 with the search": a search takes no expression; the numbers are swapped instead."""
    tools = [T("calculator", "expression"), T("search", "query")]
    found = edits(tools, "Let me compute 23 * 7 with the calculator.", [("calculator", {"expression": "23 * 7"})])
    assert found and all("search" not in f and f.endswith("with the calculator.") for f in found)
    assert found[0] == "Let me compute 30 * 7 with the calculator."


def test_a_harness_tool_never_stands_in_for_a_domain_tool() -> None:
    """Was "find the delete Tokyo" and a population lookup swapped to the harness's file tool."""
    harness = [T("write_file", "file_path", "content"), T("task", "description", "subagent_type"), T("delete", "city")]
    tools = [T("get_population", "city"), *harness, T("write_todos", "todos")]
    tools[-2] = T("edit_file", "city")
    found = edits(tools, "I'll use the get_population tool to look up Tokyo.", [("get_population", {"city": "Tokyo"})])
    assert found and not any(h in f for f in found for h in ("edit_file", "write_file", "task", "todos"))


def test_hand_offs_are_swapped_for_another_agent() -> None:
    tools = [T("transfer_to_flight_assistant"), T("transfer_to_hotel_assistant"), T("search_flights", "origin")]
    found = edits(tools, "I'll transfer this to the flight assistant.", [("transfer_to_flight_assistant", {})])
    assert found == ["I'll transfer this to the hotel assistant."]


def test_a_day_of_a_month_stays_a_day() -> None:
    tools = [T("search_flights", "origin", "destination", "date")]
    calls = [("search_flights", {"origin": "Oslo", "destination": "Lima", "date": "March 15"})]
    found = edits(tools, "I'll search for flights from Oslo to Lima on March 15.", calls)
    days = [f for f in found if "Oslo to Lima" in f]
    assert days and all(1 <= int(f.rsplit(" ", 1)[1].rstrip(".")) <= 28 for f in days)


def test_an_edit_that_does_not_read_back_is_not_used_and_is_counted() -> None:
    critic = PlanCritic([T("get_weather", "city"), T("get_time", "city")], calls=[("get_weather", {"city": "Paris"})])
    assert critic.read_back(PlanEdit("I'll check the weather in Paris.", "x", "get_time", replaced="get_weather"))
    assert critic.read_back(PlanEdit("I'll check the weather in Paris.", "x", "get_weather", old="Paris", new="Rome"))
    good = PlanEdit("I'll check the weather in Rome.", "x", "get_weather", old="Paris", new="Rome")
    assert critic.read_back(good) is None


class _Editor:
    """An editor whose reply is given: the critic must read it back before use."""

    name = "model:given"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def swap_tool(self, plan: str, named: ToolSpec, other: ToolSpec) -> str | None:
        return self.reply


def test_a_model_edit_is_used_only_when_it_reads_back() -> None:
    tools = [T("search", "query"), T("get_headlines", "query")]
    calls = [("search", {"query": "Mars rover news"})]
    thought = "Let me search for the latest news about the Mars rover."
    good = PlanCritic(tools, calls=calls, editor=_Editor("Let me get the headlines about the Mars rover."))  # type: ignore[arg-type]
    made = good.intervene(thought, "plan_swap")
    assert made.applicable and made.intervened == "Let me get the headlines about the Mars rover."
    bad = PlanCritic(tools, calls=calls, editor=_Editor("Let me search the news about it."))  # type: ignore[arg-type]
    made = bad.intervene(thought, "plan_swap")
    assert not made.applicable and made.method.startswith(NO_COHERENT_EDIT) and len(made.rejections) == 1


def test_a_date_is_one_value_shifted_by_days() -> None:
    """Was ``2023-13-04`` and ``2630-10-04``: an ISO date's parts were three numbers."""
    tools = [T("get_calendar_events", "date")]
    plan = 'To get calendar events, call the `get_calendar_events` function with {"date": "2023-10-04"}.'
    found = edits(tools, plan, [("get_calendar_events", {"date": "2023-10-04"})])
    assert [f.rsplit('"', 2)[1] for f in found] == ["2023-10-05", "2023-10-06", "2023-10-07"]


def test_a_tool_swap_is_refused_where_the_plan_says_what_the_tool_is_for() -> None:
    """ "To determine if it is raining ..., call the `get_time` function" would leave the weather to a clock."""
    tools = [T("get_weather", "city"), T("get_time", "city")]
    plan = 'To determine if it is raining in Oslo, you can call the `get_weather` function with the city "Oslo".'
    found = edits(tools, plan, [("get_weather", {"city": "Oslo"})])
    assert found and not any("get_time" in f for f in found)
    call = [("get_weather", {"city": "Oslo"})]
    named_only = edits(tools, 'I will call the `get_weather` function with the city "Oslo".', call)
    assert 'I will call the `get_time` function with the city "Oslo".' in named_only


def test_a_stated_result_is_recomputed_and_an_article_agrees() -> None:
    calc = [T("calculator", "expression")]
    plan = "To calculate a 15% tip on $84.50: (15/100) * $84.50 = $12.67."
    found = edits(calc, plan, [("calculator", {"expression": "(15/100) * 84.50"})])
    assert found[0] == "To calculate a 15% tip on $109.85: (15/100) * $109.85 = $16.48."
    price = [T("get_price", "item")]
    assert edits(price, "I'll find the price of an apple.", [("get_price", {"item": "apple"})])[0] == (
        "I'll find the price of a pear."
    )
