"""A trace audited with a changed graph (same node names, another model or prompt: a deploy while audits are
queued) is refused by name, saying what changed, unless the caller opts in; traces without a fingerprint
(recorded before it existed) are audited as before."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from ariadne_lc import Auditor, InMemoryTraceStore, record
from ariadne_lc._fingerprint import differences, graph_fingerprint
from ariadne_lc.errors import GraphChangedError, error_class
from ariadne_lc.online._worker import retryable_type
from ariadne_lc.testing import calculator, faithful_arithmetic_model, unfaithful_arithmetic_model

QUESTION = {"messages": [("user", "How many apples are in 6 boxes of 7?")]}
CONFIG = {"configurable": {"thread_id": "t-1"}}


def _recorded(graph: Any) -> Any:
    store = InMemoryTraceStore()
    record(graph, store).invoke(QUESTION, CONFIG)
    (trace,) = store.list_traces()
    return trace


def test_another_model_under_the_same_node_names_is_refused_and_named() -> None:
    saver = InMemorySaver()
    recorded_under = create_agent(faithful_arithmetic_model(), [calculator], checkpointer=saver)
    deployed = create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=saver)
    trace = _recorded(recorded_under)
    assert trace.graph is not None and trace.graph.nodes == graph_fingerprint(deployed).nodes

    with pytest.raises(GraphChangedError, match="model of node 'model'") as refused:
        Auditor(deployed).audit(trace, step=0, interventions=["logic_flip"])
    assert refused.value.differences == [
        f"model of node 'model': {trace.graph.models['model'][0]} -> {graph_fingerprint(deployed).models['model'][0]}"
    ]
    assert "allow_graph_change=True" in str(refused.value)
    (failed,) = Auditor(deployed).audit_batch([trace], interventions=["logic_flip"]).results
    assert failed.status == "failed" and failed.error_type == "GraphChangedError" and failed.phi is None
    assert error_class("GraphChangedError") is GraphChangedError and not retryable_type("GraphChangedError")

    # opted in: replayed on the new graph, whose answer differs from the recording for reasons of its own
    (anyway,) = Auditor(deployed, allow_graph_change=True).audit(trace, step=0, interventions=["logic_flip"])
    assert anyway.status == "scored"
    # the recorded graph: audited, the answer moves
    (same,) = Auditor(recorded_under).audit(trace, step=0, interventions=["logic_flip"])
    assert same.status == "scored" and same.answer_changed


def test_another_system_prompt_is_refused_and_a_rebuilt_identical_graph_is_not() -> None:
    saver = InMemorySaver()

    def agent(prompt: str) -> Any:
        return create_agent(faithful_arithmetic_model(), [calculator], checkpointer=saver, system_prompt=prompt)

    trace = _recorded(agent("Count carefully."))
    with pytest.raises(GraphChangedError, match="prompt of node 'model' changed"):
        Auditor(agent("Count quickly.")).audit(trace, step=0, interventions=["logic_flip"])
    # a new object, the same graph
    (result,) = Auditor(agent("Count carefully.")).audit(trace, step=0, interventions=["logic_flip"])
    assert result.status == "scored"


def test_a_trace_without_a_fingerprint_is_audited_as_before() -> None:
    saver = InMemorySaver()
    trace = _recorded(create_agent(faithful_arithmetic_model(), [calculator], checkpointer=saver))
    old = trace.model_copy(update={"graph": None})  # recorded before fingerprints (or with no graph given)
    deployed = create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=saver)
    (result,) = Auditor(deployed).audit(old, step=0, interventions=["logic_flip"])
    assert result.status == "scored"


def _hand_graph(model: Any, prompt: str) -> Any:
    """A hand-built graph whose node reaches its model and prompt through closure cells."""
    bound = model.bind_tools([calculator])
    system_prompt = prompt

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        reply = bound.invoke([("system", system_prompt), *state["messages"]])
        return {"messages": [reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([calculator]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=InMemorySaver())


def test_hand_built_graphs_show_their_model_prompt_tools_and_edges() -> None:
    base = graph_fingerprint(_hand_graph(faithful_arithmetic_model(), "A"))
    assert base.models["agent"][0].startswith("ScriptedChatModel #") and "calculator" in base.tools
    assert "agent -?-> tools" in base.edges and "agent" in base.prompts
    assert differences(base, graph_fingerprint(_hand_graph(faithful_arithmetic_model(), "A"))) == []
    assert differences(base, graph_fingerprint(_hand_graph(faithful_arithmetic_model(), "B"))) == [
        "prompt of node 'agent' changed"
    ]
    changed = differences(base, graph_fingerprint(_hand_graph(unfaithful_arithmetic_model(), "A")))
    assert len(changed) == 1 and changed[0].startswith("model of node 'agent'")


def test_a_scripted_model_is_named_by_its_script_and_the_scripts_it_wraps_never_its_module() -> None:
    from ariadne_lc.testing import ScriptedChatModel

    def per_turn(model: ScriptedChatModel) -> ScriptedChatModel:
        script = model.script

        def reply(messages: Any) -> AIMessage:
            return script(messages)

        return ScriptedChatModel(script=reply)

    faithful, unfaithful = per_turn(faithful_arithmetic_model()), per_turn(unfaithful_arithmetic_model())
    assert faithful._identifying_params != unfaithful._identifying_params
    assert faithful._identifying_params == per_turn(faithful_arithmetic_model())._identifying_params
    # a deployment that loads the graph's file by path gives its functions another module name
    assert __name__ not in str(faithful._identifying_params)
