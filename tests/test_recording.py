"""record(graph, store): a copy of the graph that records every run, and stays auditable.

That its traces equal the handler's is shown in tests/test_middleware.py, on the same runs.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore, record
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.testing import build_hand_graph, calculator, faithful_arithmetic_model

QUESTION = "How many apples are in 6 boxes of 7?"


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_every_way_of_running_the_returned_graph_is_recorded() -> None:
    store = InMemoryTraceStore()
    original = create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())
    graph = record(original, store, synchronous=True)
    assert type(graph) is type(original)
    graph.invoke({"messages": [("user", QUESTION)]}, _config("t-1"))
    list(graph.stream({"messages": [("user", QUESTION)]}, _config("t-2"), stream_mode="updates"))
    assert [t.thread_id for t in store.list_traces()] == ["t-1", "t-2"]
    assert all(t.final_answer == "Following my plan to multiply (6 * 7), the total is 42." for t in store.list_traces())
    # the graph given to record() is left as it was
    original.invoke({"messages": [("user", QUESTION)]}, _config("t-3"))
    assert len(store.list_traces()) == 2


def test_a_hand_built_graph_and_its_callbacks_are_kept() -> None:
    store, other = InMemoryTraceStore(), InMemoryTraceStore()
    seen: list[str] = []
    mine = AriadneCallbackHandler(on_trace=lambda t: seen.append(t.trace_id))
    hand = build_hand_graph(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())
    graph = record(hand, handler=mine)
    graph.invoke(
        {"messages": [("user", QUESTION)]},
        {**_config("t-1"), "callbacks": [AriadneCallbackHandler(store=other, synchronous=True)]},
    )
    assert mine.flush(timeout=60)
    assert len(seen) == 1 and [t.trace_id for t in other.list_traces()] == seen
    assert [s.node for s in other.list_traces()[0].steps] == ["agent", "agent"]
    assert mine.stats.recorded == 1 and store.list_traces() == []


def test_the_returned_graph_is_audited_and_its_replays_are_not_recorded() -> None:
    store = InMemoryTraceStore()
    agent = create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())
    graph = record(agent, store, synchronous=True)
    graph.invoke({"messages": [("user", QUESTION)]}, _config("t-1"))
    (trace,) = store.list_traces()
    results = Auditor(graph, decisive=False).audit(trace, step=0, interventions=["logic_flip", "premise_negation"])
    assert [r.intervention_type for r in results] == ["logic_flip", "premise_negation"]
    assert all(r.phi is not None and r.phi > 0.5 for r in results)
    assert len(store.list_traces()) == 1


def test_misuse_is_a_named_error() -> None:
    graph = create_agent(faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())
    store = InMemoryTraceStore()
    with pytest.raises(ConfigurationError, match="compiled LangGraph graph"):
        record(RunnableLambda(lambda x: x), store)  # type: ignore[type-var]
    with pytest.raises(ConfigurationError, match="exactly one"):
        record(graph)
    with pytest.raises(ConfigurationError, match="exactly one"):
        record(graph, store, handler=AriadneCallbackHandler())
    with pytest.raises(ConfigurationError, match="already bound"):
        record(record(graph, store), store)
    with pytest.raises(ConfigurationError, match="for the default handler"):
        record(graph, handler=AriadneCallbackHandler(), synchronous=True)


def test_a_human_in_the_loop_turn_is_recorded_as_the_handler_records_it() -> None:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.types import Command

    from tests.helpers import TWO_STEP_QUESTION, two_step_model
    from tests.test_middleware import same_run_fields

    bound_store, handler_store = InMemoryTraceStore(), InMemoryTraceStore()
    agent = create_agent(
        two_step_model(),
        [calculator],
        checkpointer=InMemorySaver(),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )
    graph = record(agent, bound_store, synchronous=True)
    config = {**_config("t-hitl"), "callbacks": [AriadneCallbackHandler(store=handler_store, synchronous=True)]}
    graph.invoke({"messages": [("user", TWO_STEP_QUESTION)]}, config)
    for _ in range(2):
        graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    bound, by_handler = bound_store.list_traces(), handler_store.list_traces()
    assert [same_run_fields(t) for t in bound] == [same_run_fields(t) for t in by_handler]
    finished = bound[-1]
    assert finished.final_answer is not None and len(finished.interrupts) == 2
    (result,) = Auditor(graph, decisive=False).audit(finished, step=1, interventions=["logic_flip"])
    assert result.phi == 1.0 and result.counterfactual_answer == "Following my steps, the total is 37 apples."
