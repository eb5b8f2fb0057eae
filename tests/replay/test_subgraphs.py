"""Steps inside subgraphs replay at any depth: an agent used as a node, nested teams, a supervisor's hand-offs."""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from ariadne_lc.errors import SubgraphNotReplayableError
from ariadne_lc.replay import Replayer
from ariadne_lc.testing import ScriptedChatModel, faithful_arithmetic_model
from tests.helpers import QUESTION

ADD = "Every box holds the same amount, so I need to add 6 by 7 to get the total."


def _calculator(calls: list[str]) -> Any:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (counts its calls)."""
        calls.append(expression)
        return {"6 * 7": "42"}.get(expression, "0")

    return calculator


def _record(graph: Any, thread: str = "s") -> Trace:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": thread}, "callbacks": [handler]})
    assert handler.flush(timeout=30)
    (trace,) = store.list_traces()
    return trace


def _everything(graph: Any, thread: str) -> list[Any]:
    """Head and history of the thread in every namespace the production saver holds."""
    return [(t.config, t.checkpoint["id"]) for t in graph.checkpointer.list({"configurable": {"thread_id": thread}})]


def _report(state: MessagesState) -> dict[str, list[BaseMessage]]:
    return {"messages": [AIMessage(content=f"Report: {state['messages'][-1].text}")]}


def _agent_as_node(calls: list[str], saver: Any) -> Any:
    researcher = create_agent(faithful_arithmetic_model(), [_calculator(calls)], name="researcher")
    builder = StateGraph(MessagesState)
    builder.add_node("researcher", researcher)
    builder.add_node("report", _report)
    builder.add_edge(START, "researcher")
    builder.add_edge("researcher", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=saver)


def test_a_create_agent_used_as_a_node(saver: Any) -> None:
    calls: list[str] = []
    graph = _agent_as_node(calls, saver)
    trace = _record(graph)
    assert [s.node for s in trace.steps] == ["model", "model", "report"]  # the parent echoing them adds no step
    assert trace.steps[0].checkpoint.checkpoint_ns.startswith("researcher:")
    assert trace.final_answer == "Report: Following my plan to multiply (6 * 7), the total is 42."
    before = _everything(graph, "s")

    result = Replayer(graph).replay(trace, 0, ADD)
    # the subgraph ran on from the substituted thought, then the parent's next node used its answer
    assert result.answer == "Report: Following my plan to add (6 + 7), the total is 13."
    assert result.fork_checkpoint_ns == trace.steps[0].checkpoint.checkpoint_ns
    assert result.tools_recorded == 1 and result.model_calls == 1 and calls == ["6 * 7"]
    assert result.steps[0].message_id == trace.steps[0].message_id and result.steps[0].thought == ADD
    assert _everything(graph, "s") == before  # every namespace of the production thread untouched

    early = Replayer(graph).replay_early_answer(trace, 0)
    assert early.answer == "Report: Following my plan to multiply (6 * 7), the total is 42."
    assert calls == ["6 * 7"] and _everything(graph, "s") == before

    # the audit that failed in issue 12 (NotReplayableError for any subgraph step) now scores
    from ariadne_lc import Auditor

    (audited,) = Auditor(graph).audit(trace, step=0, interventions="logic_flip")
    assert audited.status == "scored" and audited.error is None, audited.error
    assert audited.counterfactual_answer is not None and audited.counterfactual_answer.startswith("Report: ")
    assert calls == ["6 * 7"] and _everything(graph, "s") == before


def test_a_step_two_subgraphs_deep(saver: Any) -> None:
    calls: list[str] = []
    researcher = create_agent(faithful_arithmetic_model(), [_calculator(calls)], name="researcher")
    team = StateGraph(MessagesState)
    team.add_node("researcher", researcher)
    team.add_edge(START, "researcher")
    team.add_edge("researcher", END)
    builder = StateGraph(MessagesState)
    builder.add_node("team", team.compile())
    builder.add_node("report", _report)
    builder.add_edge(START, "team")
    builder.add_edge("team", "report")
    graph = builder.compile(checkpointer=saver)
    trace = _record(graph, "deep")
    ns = trace.steps[1].checkpoint.checkpoint_ns
    assert ns.startswith("team:") and "|researcher:" in ns and len(trace.steps) == 3
    before = _everything(graph, "deep")
    # the last model turn, two levels down: only that turn runs again
    result = Replayer(graph).replay(trace, 1, "Following my plan, the total is 41.")
    assert result.answer == "Report: Following my plan, the total is 41." and result.model_calls == 0
    flipped = Replayer(graph).replay(trace, 0, ADD)
    assert flipped.answer == "Report: Following my plan to add (6 + 7), the total is 13."
    assert calls == ["6 * 7"] and _everything(graph, "deep") == before


_TOTAL = re.compile(r"total is (-?\d+(?:\.\d+)?)")


def _reviewer() -> ScriptedChatModel:
    """Agent B: converts agent A's total to dozens, and answers from what its own thought says to do."""

    def script(messages: list[BaseMessage]) -> AIMessage:
        mine = [m for m in messages if isinstance(m, AIMessage) and m.name == "agent_b"]
        if not mine:
            found = [_TOTAL.search(m.text) for m in messages if isinstance(m, AIMessage) and m.name == "agent_a"]
            total = next((f.group(1) for f in reversed(found) if f), "0")
            return AIMessage(
                content=f"Agent A counted {total} apples, so I convert {total} to dozens.",
                tool_calls=[{"name": "dozens", "args": {"count": float(total)}, "id": "d-1"}],
            )
        if "dozens" not in mine[0].text:
            return AIMessage(content="Reviewed: my plan no longer says what to convert.")
        return AIMessage(content=f"Reviewed: {messages[-1].text} dozen.")

    return ScriptedChatModel(script=script)


def _supervised(calls: list[str], saver: Any) -> Any:
    @tool
    def dozens(count: float) -> str:
        """Convert a count to dozens (counts its calls)."""
        calls.append(f"dozens {count:g}")
        return f"{count / 12:.2f}"

    agent_a = create_agent(faithful_arithmetic_model(), [_calculator(calls)], name="agent_a")
    agent_b = create_agent(_reviewer(), [dozens], name="agent_b")

    def supervisor(state: MessagesState) -> Command[Literal["agent_a", "agent_b", "__end__"]]:
        spoke = {m.name for m in state["messages"] if isinstance(m, AIMessage)}
        if "agent_a" not in spoke:
            return Command(goto="agent_a")
        return Command(goto="agent_b" if "agent_b" not in spoke else END)

    builder = StateGraph(MessagesState)
    builder.add_node("supervisor", supervisor)
    builder.add_node("agent_a", agent_a)
    builder.add_node("agent_b", agent_b)
    builder.add_edge(START, "supervisor")
    builder.add_edge("agent_a", "supervisor")
    builder.add_edge("agent_b", "supervisor")
    return builder.compile(checkpointer=saver)


def test_a_supervisor_handing_off_between_two_agents(saver: Any) -> None:
    calls: list[str] = []
    graph = _supervised(calls, saver)
    trace = _record(graph, "sup")
    assert [s.checkpoint.task_path.split(":")[0] for s in trace.steps] == ["agent_a"] * 2 + ["agent_b"] * 2
    assert trace.final_answer == "Reviewed: 3.50 dozen."
    assert calls == ["6 * 7", "dozens 42"]
    before = _everything(graph, "sup")

    # a step of agent A: A answers 13 instead of 42, the supervisor hands off to B, which now asks for
    # another conversion; that call was never recorded and the tool is not declared safe: refused, not run
    replayer = Replayer(graph)
    result = replayer.replay(trace, 0, ADD)
    assert result.steps[1].thought == "Following my plan to add (6 + 7), the total is 13."
    assert result.steps[2].thought == "Agent A counted 13 apples, so I convert 13 to dozens."
    assert result.tools_recorded == 1 and result.tools_unavailable == ("dozens",)
    assert calls == ["6 * 7", "dozens 42"]
    # declared safe, the tool of the agent after the hand-off runs live (once), and the answer follows
    safe = Replayer(graph, safe_tools=["dozens"]).replay(trace, 0, ADD)
    assert safe.answer == "Reviewed: 1.08 dozen." and safe.tools_live == 1
    assert calls == ["6 * 7", "dozens 42", "dozens 13"]

    # a step of agent B, after the hand-off
    b_step = replayer.replay(trace, 2, "Agent A counted 42 apples, so I only report them.")
    assert b_step.answer == "Reviewed: my plan no longer says what to convert." and b_step.tools_recorded == 1
    assert _everything(graph, "sup") == before


def test_a_subgraph_without_history_is_refused_with_the_case(saver: Any) -> None:
    researcher = create_agent(faithful_arithmetic_model(), [_calculator([])], name="researcher", checkpointer=False)
    builder = StateGraph(MessagesState)
    builder.add_node("researcher", researcher)
    builder.add_edge(START, "researcher")
    graph = builder.compile(checkpointer=saver)
    trace = _record(graph, "nohist")
    with pytest.raises(SubgraphNotReplayableError, match="checkpointer=False"):
        Replayer(graph).replay(trace, 0, ADD)


def test_a_subgraph_called_inside_a_function_is_replayed_on_its_own_graph(saver: Any) -> None:
    """LangGraph cannot pause a graph that a node's function calls before its tools, so a replay cannot go through
    the parent: the agent's turn is replayed on the agent's own graph, from its own checkpoints, its tools answered
    from the record (docs/harnesses.md); with the live policy, they run."""
    calls: list[str] = []
    researcher = create_agent(faithful_arithmetic_model(), [_calculator(calls)], name="researcher")

    def delegate(state: MessagesState) -> dict[str, Any]:
        return {"messages": researcher.invoke({"messages": state["messages"]})["messages"]}

    builder = StateGraph(MessagesState)
    builder.add_node("delegate", delegate)
    builder.add_edge(START, "delegate")
    graph = builder.compile(checkpointer=saver)
    trace = _record(graph, "fn")
    recorded = Replayer(graph).replay(trace, 0, ADD)
    assert recorded.answer == "Following my plan to add (6 + 7), the total is 13." and calls == ["6 * 7"]
    assert recorded.tools_recorded == 1 and recorded.input_checked
    live = Replayer(graph, tool_policy="live").replay(trace, 0, ADD)
    assert live.answer == "Following my plan to add (6 + 7), the total is 13." and calls == ["6 * 7", "6 * 7"]


def test_a_step_of_an_agent_called_by_a_tool_is_refused_with_the_case(saver: Any) -> None:
    inner = create_agent(faithful_arithmetic_model(), [_calculator([])], name="inner")

    @tool
    def ask_expert(question: str) -> str:
        """Ask the expert agent."""
        return str(inner.invoke({"messages": [("user", question)]})["messages"][-1].text)

    def script(messages: list[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(
                content="I will ask the expert.",
                tool_calls=[{"name": "ask_expert", "args": {"question": QUESTION}, "id": "e-1"}],
            )
        return AIMessage(content=f"The expert says: {messages[-1].text}")

    graph = create_agent(ScriptedChatModel(script=script), [ask_expert], checkpointer=saver)
    store = InMemoryTraceStore()
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "astool"},
                                                      "callbacks": [AriadneCallbackHandler(store=store)]})  # fmt: skip
    # the inner agent, run inside a tool call, is its own trace linked to the call: none of its steps in the caller's
    [trace] = [t for t in store.list_traces() if t.parent is None]
    [expert] = [t for t in store.list_traces() if t.parent is not None]
    assert [s.checkpoint.task_path.split(":")[0] for s in trace.steps] == ["model", "model"]
    assert expert.agent_name == "inner" and trace.steps[0].tool_calls[0].agents == (expert.trace_id,)
    outer = Replayer(graph).replay(trace, 0, "I will ask the expert, who knows.")
    assert outer.answer == "The expert says: Following my plan to multiply (6 * 7), the total is 42."
    assert outer.tools_recorded == 1 and outer.model_calls == 1  # the inner agent did not run again
    # a step recorded inside the tool node (by another recorder) cannot be re-entered: named refusal
    first = trace.steps[0]
    inside = first.model_copy(
        update={
            "checkpoint": first.checkpoint.model_copy(
                update={"checkpoint_ns": "tools:x", "task_path": f"tools:{first.checkpoint.task_id}|model:y"}
            )
        }
    )
    crafted = trace.model_copy(update={"steps": (inside, *trace.steps[1:])})
    with pytest.raises(SubgraphNotReplayableError, match="called by a tool"):
        Replayer(graph).replay(crafted, 0, ADD)
