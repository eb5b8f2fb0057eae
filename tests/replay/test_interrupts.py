"""Human in the loop: one trace per user turn across interrupts, replays resumed with the recorded answers."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from ariadne_lc.errors import UnansweredInterruptError
from ariadne_lc.replay import Replayer
from ariadne_lc.testing import ScriptedChatModel, faithful_arithmetic_model
from tests.helpers import QUESTION


def _counting_calculator(calls: list[str]) -> Any:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (counts its calls)."""
        calls.append(expression)
        return {"6 * 7": "42", "6 + 7": "13"}.get(expression, "0")

    return calculator


def _approval_graph(model: ScriptedChatModel, tools: list[Any], saver: Any) -> Any:
    """model -> approve (interrupt) -> tools -> model: the graph of issue 12."""
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    def approve(state: MessagesState) -> dict[str, list[BaseMessage]]:
        last = state["messages"][-1]
        answer = interrupt({"approve": [{"name": c["name"], "args": c["args"]} for c in last.tool_calls]})
        if answer is True:
            return {"messages": []}
        return {"messages": [AIMessage(content="The reviewer refused the calculation.", id=f"refused-{last.id}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approve", approve)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
    builder.add_conditional_edges(
        "approve", lambda s: "tools" if s["messages"][-1].tool_calls else END, {"tools": "tools", END: END}
    )
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def _turn(graph: Any, handler: AriadneCallbackHandler, thread: str, payload: Any) -> Any:
    return graph.invoke(payload, {"configurable": {"thread_id": thread}, "callbacks": [handler]})


def _head(graph: Any, thread: str) -> tuple[Any, list[Any]]:
    cfg = {"configurable": {"thread_id": thread}}
    return graph.get_state(cfg).config, [s.config for s in graph.get_state_history(cfg)]


def _checking_script(messages: list[BaseMessage]) -> AIMessage:
    """Turn one multiplies; a thought that says "check" makes turn two ask for a second calculation."""
    ai = [m for m in messages if isinstance(m, AIMessage)]
    if not ai:
        return AIMessage(
            content="I need to multiply 6 by 7.",
            tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c-1"}],
        )
    if len(ai) == 1 and "check" in ai[0].text:
        return AIMessage(
            content="Let me check with a sum.",
            tool_calls=[{"name": "calculator", "args": {"expression": "6 + 7"}, "id": "c-2"}],
        )
    return AIMessage(content=f"After '{ai[0].text}' the total is {messages[-1].text}.")


def test_one_trace_per_turn_across_the_interrupt_and_a_replay_resumed_with_the_recorded_answer(saver: Any) -> None:
    calls: list[str] = []
    graph = _approval_graph(ScriptedChatModel(script=_checking_script), [_counting_calculator(calls)], saver)
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    out = _turn(graph, handler, "h", {"messages": [("user", QUESTION)]})
    assert out["__interrupt__"]
    (paused,) = store.list_traces()
    assert paused.interrupted and paused.final_answer is None and paused.error is None
    (asked,) = paused.interrupts
    assert asked.node == "approve" and not asked.answered
    assert asked.value == {"approve": [{"name": "calculator", "args": {"expression": "6 * 7"}}]}

    _turn(graph, handler, "h", Command(resume=True))
    (trace,) = store.list_traces()  # the same trace id: the turn, both halves
    assert trace.trace_id == paused.trace_id and trace.query == QUESTION and not trace.interrupted
    assert [s.node for s in trace.steps] == ["agent", "agent"]
    assert trace.final_answer == "After 'I need to multiply 6 by 7.' the total is 42."
    assert trace.interrupts[0].answered and trace.interrupts[0].resume is True
    assert handler.stats.paused == 1 and handler.stats.resumed == 1 and handler.runs_paused == 0
    assert calls == ["6 * 7"]

    head, history = _head(graph, "h")
    replayer = Replayer(graph)
    # the same question is asked again: the recorded "yes" answers it, the answer follows the new thought
    same = replayer.replay(trace, 0, "I must multiply 6 by 7.")
    assert same.answer == "After 'I must multiply 6 by 7.' the total is 42."
    assert [r.resume for r in same.interrupts_answered] == [True] and same.tools_recorded == 1
    # a new question (a second calculation to approve): nobody answered it, the replay stops, named
    with pytest.raises(UnansweredInterruptError, match="never answered") as stopped:
        replayer.replay(trace, 0, "I need to multiply 6 by 7 and check it.")
    assert stopped.value.node == "approve"
    assert stopped.value.value == {"approve": [{"name": "calculator", "args": {"expression": "6 + 7"}}]}
    # the auditor records it as a failed audit carrying the error's name, not a score
    from ariadne_lc import Auditor
    from ariadne_lc.interventions import Intervention

    class _Check:
        def intervene(self, thought: str, kind: Any, *, query: str = "") -> Intervention:
            return Intervention(
                original=thought, intervened=thought + " and check it", type=str(kind), applicable=True, method="test"
            )

    (failed,) = Auditor(graph, critic=_Check(), decisive=False).audit(trace, step=0, interventions="logic_flip")
    assert failed.status == "failed" and failed.error_type == "UnansweredInterruptError" and failed.phi is None
    assert _head(graph, "h") == (head, history) and calls == ["6 * 7"]


def test_a_turn_never_resumed_is_not_auditable_and_a_new_turn_starts_a_new_trace(saver: Any) -> None:
    from ariadne_lc import Auditor
    from ariadne_lc.errors import TraceNotFinishedError

    graph = _approval_graph(faithful_arithmetic_model(), [_counting_calculator([])], saver)
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    _turn(graph, handler, "n", {"messages": [("user", QUESTION)]})
    assert handler.flush(timeout=30)
    (paused,) = store.list_traces()
    with pytest.raises(TraceNotFinishedError, match="waiting at an interrupt"):
        Auditor(graph, decisive=False).audit(paused)
    assert handler.runs_paused == 0  # paused runs live in the store, not in the handler
    _turn(graph, handler, "n", {"messages": [("user", "How many apples are in 2 boxes of 3?")]})
    assert handler.flush(timeout=30)
    assert len(store.list_traces()) == 2 and store.get_paused("n") is None  # the abandoned turn stays unfinished


def _hitl_agent(calls: list[str], saver: Any) -> Any:
    return create_agent(
        faithful_arithmetic_model(),
        [_counting_calculator(calls)],
        checkpointer=saver,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )


def test_create_agent_with_human_in_the_loop_middleware(saver: Any) -> None:
    calls: list[str] = []
    graph = _hitl_agent(calls, saver)
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    _turn(graph, handler, "m", {"messages": [("user", QUESTION)]})
    _turn(graph, handler, "m", Command(resume={"decisions": [{"type": "approve"}]}))
    assert handler.flush(timeout=30)
    (trace,) = store.list_traces()
    assert not trace.interrupted and trace.final_answer == "Following my plan to multiply (6 * 7), the total is 42."
    assert len(trace.steps) == 2 and trace.steps[0].tool_calls[0].output == "42"
    (asked,) = trace.interrupts
    assert asked.answered and asked.resume == {"decisions": [{"type": "approve"}]}
    head, history = _head(graph, "m")

    replayer = Replayer(graph)
    flipped = replayer.replay(trace, 0, "Every box holds the same amount, so I need to subtract 6 by 7 to get it.")
    assert flipped.answer == "Following my plan to subtract (6 - 7), the total is -1."  # the counterfactual answer
    assert len(flipped.interrupts_answered) == 1 and flipped.tools_recorded == 1
    assert calls == ["6 * 7"] and _head(graph, "m") == (head, history)

    # and the whole turn is auditable (issue 12: the audit found nothing)
    from ariadne_lc import Auditor

    (audited,) = Auditor(graph, decisive=False).audit(trace, step=0, interventions="logic_flip")
    assert audited.status == "scored" and audited.error is None, audited.error
    assert audited.counterfactual_answer != trace.final_answer and audited.answer_changed
    assert calls == ["6 * 7"] and _head(graph, "m") == (head, history)


async def test_async_replay_goes_through_the_interrupt(tmp_path: Any) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "h.db")) as saver:
        calls: list[str] = []
        graph = _hitl_agent(calls, saver)
        store = InMemoryTraceStore()
        handler = AriadneCallbackHandler(store=store, synchronous=True)
        cfg: dict[str, Any] = {"configurable": {"thread_id": "a"}, "callbacks": [handler]}
        await graph.ainvoke({"messages": [("user", QUESTION)]}, cfg)
        await graph.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
        (trace,) = store.list_traces()
        result = await Replayer(graph).areplay(trace, 0, "so I need to add 6 by 7.")
        assert result.answer == "Following my plan to add (6 + 7), the total is 13."
        assert calls == ["6 * 7"]


def test_turn_one_audited_after_turn_two_ran(saver: Any) -> None:
    from tests.helpers import build_agent

    graph = build_agent(faithful_arithmetic_model(), "create_agent", saver)
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    _turn(graph, handler, "mt", {"messages": [("user", QUESTION)]})
    first: Trace = store.list_traces()[0]
    _turn(graph, handler, "mt", {"messages": [("user", "How many apples are in 2 boxes of 3?")]})
    head, history = _head(graph, "mt")
    result = Replayer(graph).replay(first, 0, "Every box holds the same amount, so I need to add 6 by 7 now.")
    assert result.answer == "Following my plan to add (6 + 7), the total is 13."
    assert _head(graph, "mt") == (head, history)
