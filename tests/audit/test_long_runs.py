"""A replay of a long run is never cut short of the run it replays: its turn limit comes from the recorded run (a
48-call run replayed from its first output needs 48 more turns, past the default floor of 25)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.replay import DEFAULT_MAX_TURNS
from ariadne_lc.testing import ScriptedChatModel

CALLS = 48


@tool
def lookup(key: int) -> str:
    """Look up the value stored under a key."""
    return str(3 * key + 1)


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    outputs = [m.text for m in messages if isinstance(m, ToolMessage)]
    if len(outputs) < CALLS:
        k = len(outputs)
        return AIMessage(
            f"I should look up key {k}.", tool_calls=[{"name": "lookup", "args": {"key": k}, "id": f"c{k}"}]
        )
    return AIMessage(f"The sum is {sum(int(o) for o in outputs)}.")


def test_a_replay_from_the_first_of_48_calls_finishes_and_reads_the_swap() -> None:
    assert CALLS > DEFAULT_MAX_TURNS
    store = InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=_script), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    graph.invoke(
        {"messages": [("user", "What is the sum of the 48 stored values?")]}, {"configurable": {"thread_id": "t"}}
    )
    (trace,) = store.list_traces()
    assert len(trace.steps) == CALLS + 1
    (result,) = Auditor(graph).audit(trace, step=0, interventions=["observation_swap"])
    assert result.status == "scored", result.error
    assert result.model_calls == CALLS  # the whole rest of the run: step 1 to the answer
    assert result.counterfactual_answer != trace.final_answer and not result.violation
    assert result.input_checked
