"""Reproducible swaps (issue 34): the value a swap takes for a unit is a function of the unit, its plan key and the
reference pool the user gives, never of what the auditor audited before. The same unit gets the same swap in
``audit``, ``audit_batch``, an async audit, a fresh auditor and one that audited other runs of the same tool first.

The agent asks a sky tool about two cities, one call per turn, each after a plan ("I should look up the sky over
Paris with get_sky."), and answers with both skies: so its run holds another output and another argument of the same
tool, and other runs (other cities) hold more.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.audit import RecordedValues
from ariadne_lc.records import AuditResult
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import Trace

SKIES = {"Paris": "sunny", "Oslo": "snowy", "Lima": "foggy", "Rome": "stormy", "Kyiv": "windy", "Cairo": "hot"}
LINKS = ["observation->answer", "thought->action"]
INTERVENTIONS = ["observation_swap", "plan_swap"]


@tool
def get_sky(city: str) -> str:
    """The sky over a city today."""
    return f"The sky over {city} is {SKIES.get(city, 'clear')}."


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    question = next(m.text for m in messages if isinstance(m, HumanMessage))
    cities = [c for c in re.findall(r"\b[A-Z][a-z]+\b", question) if c in SKIES]
    last = messages[-1]
    if isinstance(last, AIMessage) and not last.tool_calls:  # the thought->action re-run: the plan, continued
        found = re.search(r"sky over (\w+)", last.text)
        city = found.group(1) if found else cities[0]
        return AIMessage(content="", tool_calls=[{"name": "get_sky", "args": {"city": city}, "id": "re"}])
    outputs = [m.text for m in messages if isinstance(m, ToolMessage)]
    if len(outputs) < len(cities):
        city = cities[len(outputs)]
        call = {"name": "get_sky", "args": {"city": city}, "id": f"c{len(outputs)}"}
        return AIMessage(content=f"I should look up the sky over {city} with get_sky.", tool_calls=[call])
    skies = [o.rsplit(" is ", 1)[-1].rstrip(".") for o in outputs]
    return AIMessage(content="; ".join(f"{c}: {s}" for c, s in zip(cities, skies, strict=False)) + ".")


def _agent() -> tuple[Any, dict[str, Trace]]:
    """Three runs of the agent: A (Paris, Oslo), then B and C on other cities (other outputs of the same tool)."""
    store = InMemoryTraceStore()
    model = ScriptedChatModel(script=_script)
    graph = create_agent(model, [get_sky], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    runs = {"A": "Paris and Oslo", "B": "Lima and Rome", "C": "Kyiv and Cairo"}
    for name, cities in runs.items():
        graph.invoke({"messages": [("user", f"What is the sky like in {cities}?")]},
                     {"configurable": {"thread_id": name}})  # fmt: skip
    by_query = {t.query: t for t in store.list_traces()}
    return graph, {name: by_query[f"What is the sky like in {cities}?"] for name, cities in runs.items()}


def _swaps(results: Sequence[AuditResult], trace: Trace) -> dict[str, tuple[Any, ...]]:
    """Plan key -> what the unit was served: the swapped output and its values, or the plan-swapped thought."""
    out: dict[str, tuple[Any, ...]] = {}
    for r in results:
        if r.trace_id != trace.trace_id or r.control or r.plan_key is None:
            continue
        if r.observation is not None:
            out[r.plan_key] = (r.observation.swapped, r.observation.old_values, r.observation.new_values)
        else:
            out[r.plan_key] = (r.intervened_thought, r.intervention_method)
    return out


def _every_way(graph: Any, runs: dict[str, Trace], pool: RecordedValues | None) -> list[dict[str, tuple[Any, ...]]]:
    """A's swaps by ``audit``, ``aaudit``, ``audit_batch`` of all runs (A last), and an auditor that audited B and C
    first; each a fresh auditor with the same options."""
    a, others = runs["A"], [runs["B"], runs["C"]]

    def auditor() -> Auditor:
        return Auditor(graph, links=LINKS, budget=None, recorded_values=pool)

    alone = auditor().audit(a, interventions=INTERVENTIONS)
    awaited = asyncio.run(auditor().aaudit(a, interventions=INTERVENTIONS))
    batch = auditor().audit_batch([*others, a], interventions=INTERVENTIONS, max_concurrency=2).results
    seasoned = auditor()
    for other in others:
        seasoned.audit(other, interventions=INTERVENTIONS)
    after = seasoned.audit(a, interventions=INTERVENTIONS)
    return [_swaps(results, a) for results in (alone, awaited, batch, after)]


def test_a_unit_gets_the_same_swap_whatever_was_audited_before() -> None:
    graph, runs = _agent()
    first, *rest = _every_way(graph, runs, pool=None)
    assert all(swaps == first for swaps in rest), rest
    observed = {k: v for k, v in first.items() if "observation->answer" in k}
    planned = {k: v for k, v in first.items() if "thought->action" in k}
    assert len(observed) == 2 and len(planned) == 2, first
    # the run's own values: Oslo's "snowy" is the answer's too (no value to tell apart), so the family's next word
    assert observed["0:output:c0:observation->answer:observation_swap:0"][1:] == (("sunny",), ("rainy",))
    assert planned["0:thought:thought->action:plan_swap:0"][0] == "I should look up the sky over Oslo with get_sky."


def test_a_reference_pool_gives_other_runs_values_and_the_same_swap_every_way() -> None:
    graph, runs = _agent()
    pool = RecordedValues.from_traces(runs.values())
    first, *rest = _every_way(graph, runs, pool=pool)
    assert all(swaps == first for swaps in rest), rest
    # what another run's output says in its place ("The sky over Lima is foggy."), before the word family
    assert first["0:output:c0:observation->answer:observation_swap:0"][1:] == (("sunny",), ("foggy",))
    assert first["0:thought:thought->action:plan_swap:0"][0] == "I should look up the sky over Oslo with get_sky."
    # a pool built again from the same runs is the same pool: a resumed run sees what an uninterrupted one saw
    again = RecordedValues.from_traces(runs.values())
    assert again.outputs("get_sky") == pool.outputs("get_sky") and again.arguments("get_sky") == pool.arguments(
        "get_sky"
    )
