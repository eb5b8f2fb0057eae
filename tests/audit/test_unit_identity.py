"""One identity per unit (ariadne_lc.trace.output_unit): the plan, the budget, coverage, the stored results and the
resume keys all name a tool output the same way, so two outputs never share a name and one output never has two.

Was: the plan named an output ``output<call index>`` and coverage ``output:<call id or tool>``; two calls of one tool
without ids in one step were one unit to coverage and two to the plan."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.audit._plan import plan
from ariadne_lc.coverage import coverage, unit_of
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import ToolCall, Trace, output_unit

TEMPERATURES = {"Oslo": 4, "Lima": 19}


@tool
def temperature(city: str) -> str:
    """The temperature in a city, in degrees Celsius."""
    return f"{TEMPERATURES[city]} C"


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    """Both cities at once (two parallel calls of one tool, ids with a colon as some providers write them), then the
    answer from what the tools said."""
    outputs = [m.text for m in messages if isinstance(m, ToolMessage)]
    if not outputs:
        calls = [
            {"name": "temperature", "args": {"city": city}, "id": f"call:{i}"} for i, city in enumerate(TEMPERATURES)
        ]
        return AIMessage(content="I should look up the temperature in Oslo and in Lima.", tool_calls=calls)
    degrees = [int(re.findall(r"-?\d+", o)[0]) for o in outputs]
    return AIMessage(content=f"Lima is warmer by {degrees[1] - degrees[0]} degrees.")


def test_an_output_unit_is_named_by_its_call_or_its_position() -> None:
    assert output_unit(ToolCall(id="call_1", name="t"), 0) == "output:call_1"
    assert output_unit(ToolCall(id="a:b", name="t"), 0) == "output:a%3Ab"  # a colon cannot make two keys alike
    assert output_unit(ToolCall(name="t"), 1) == "output:#1"


def test_two_calls_of_one_tool_without_ids_are_two_units_everywhere() -> None:
    _, recorded = _recorded()
    first = recorded.steps[0]
    calls = tuple(c.model_copy(update={"id": None}) for c in first.tool_calls)
    trace = recorded.model_copy(update={"steps": [first.model_copy(update={"tool_calls": calls}), *recorded.steps[1:]]})
    planned = plan(trace, None, ["observation_swap"], seed=0, links=["observation->answer"])
    assert [p.unit for p in planned] == [(0, "output:#0"), (0, "output:#1")]
    assert len({p.key for p in planned}) == 2


def _recorded() -> tuple[Any, Trace]:
    store = InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=_script), [temperature], checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store)],
    )  # fmt: skip
    graph.invoke({"messages": [HumanMessage("Which is warmer, Oslo or Lima, and by how much?")]},
                 {"configurable": {"thread_id": "units"}})  # fmt: skip
    [trace] = store.list_traces()
    return graph, trace


def test_the_plan_the_results_and_coverage_name_each_output_alike() -> None:
    graph, trace = _recorded()
    auditor = Auditor(graph)
    [(_, sampled)] = auditor.planned(trace)
    planned_units = {p.unit for p in sampled.audits if p.link == "observation->answer"}
    assert planned_units == {(0, "output:call%3A0"), (0, "output:call%3A1")}
    results = auditor.audit(trace)
    swaps = [r for r in results if r.link == "observation->answer"]
    assert {(r.step_index, r.unit) for r in swaps} == planned_units  # the results carry the plan's names
    assert {unit_of(r) for r in swaps} == {(trace.trace_id, *u) for u in planned_units}
    assert len({r.plan_key for r in results}) == len(results)  # one key per audit: a resume skips exactly these
    assert coverage(results).by_link["observation->answer"][1] == 2
    # a result stored before units had names still counts as the same unit
    legacy = [r.model_copy(update={"unit": None}) for r in swaps]
    assert {unit_of(r) for r in legacy} == {unit_of(r) for r in swaps}
