"""AriadneMiddleware and record() produce the handler's traces, on real create_agent graphs.

Two kinds of comparison. On the *same* run (the three recorders attached at once) everything but the
trace id and the timestamps must be equal, message ids and LangGraph task ids included. On *separate*
runs of the same agents (each recorder alone) the ids differ by nature, so they are blanked, and the
rest must be equal. The agents call tools over several steps, on two threads, two turns each.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, AriadneMiddleware, Auditor, InMemoryTraceStore, Trace, record
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.testing import ScriptedChatModel, calculator, faithful_arithmetic_model
from ariadne_lc.trace import Step
from tests.helpers import TWO_STEP_QUESTION, two_step_model

Ways = dict[str, InMemoryTraceStore]
TURNS = [
    ("thread-a", "two_step", TWO_STEP_QUESTION),
    ("thread-b", "faithful", "How many apples are in 6 boxes of 7?"),
    ("thread-a", "two_step", "And now, how many are there?"),
    ("thread-b", "faithful", "Say it again, please."),
]
MODELS: dict[str, Callable[[], ScriptedChatModel]] = {"two_step": two_step_model, "faithful": faithful_arithmetic_model}
RUN_CONFIG: dict[str, Any] = {"tags": ["ingress-test"], "metadata": {"tenant": "acme", "attempt": 1}}


def _config(thread: str, *callbacks: Any) -> dict[str, Any]:
    return {**RUN_CONFIG, "configurable": {"thread_id": thread}, "callbacks": list(callbacks)}


def same_run_fields(record: Trace | Step) -> dict[str, Any]:
    """Every field but the trace id, the timestamps and the graph's fingerprint (``record()`` knows the
    graph, a handler passed per call or the middleware do not; tests/test_fingerprint.py covers it). Of a step's
    model input, the messages: the middleware sees the request (with its tools), a handler the model's start
    callback (a scripted model reports no tools), and the messages must be the same either way."""
    seen: dict[str, Any] = {"model_input": {"source": True, "tools": True}}
    if isinstance(record, Trace):
        exclude: dict[str, Any] = {"trace_id": True, "started_at": True, "ended_at": True, "graph": True}
        exclude["steps"] = {"__all__": seen}
    else:
        exclude = {"trace_id": True, "started_at": True, "ended_at": True, **seen}
    return record.model_dump(mode="json", exclude=exclude)


_SCRIPTED_ID = re.compile(r"^scripted-[0-9a-f]+-")


def separate_run_fields(trace: Trace) -> dict[str, Any]:
    """Every field but ids that differ between two runs by nature (message ids keep their turn number).

    LangGraph's superstep counter is kept as its order within the trace: a graph built with the
    middleware has its before_agent/after_agent nodes too, so its counter runs ahead of the same agent
    built without it (forks find their checkpoint by task id, never by this counter).
    """
    data = same_run_fields(trace)
    steps = [step["langgraph_step"] for step in data["steps"]]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    for rank, step in enumerate(data["steps"]):
        step["langgraph_step"] = rank
        step["message_id"] = _SCRIPTED_ID.sub("scripted-", step["message_id"])
        if step["model_input"] is not None:  # message ids are the run's own; kinds and contents must agree
            entries = step["model_input"]["messages"]
            step["model_input"]["messages"] = [f"{e.split(':')[0]}:{e.rsplit(':', 1)[1]}" for e in entries]
        checkpoint = step["checkpoint"]
        checkpoint["task_id"] = "<task>" if checkpoint["task_id"] else None
        checkpoint["task_path"] = re.sub(r":[0-9a-f-]{36}", ":<task>", checkpoint["task_path"] or "")
    return data


def _agent(kind: str, *, middleware: AriadneMiddleware | None = None, name: str | None = "calc") -> Any:
    return create_agent(
        MODELS[kind](),
        [calculator],
        checkpointer=InMemorySaver(),
        middleware=[middleware] if middleware else [],
        name=name,
    )


def test_one_run_recorded_three_ways_gives_three_equal_traces() -> None:
    stores: Ways = {way: InMemoryTraceStore() for way in ("handler", "record", "middleware")}
    graphs = {}
    for kind in MODELS:
        built = _agent(kind, middleware=AriadneMiddleware(stores["middleware"], synchronous=True))
        graphs[kind] = record(built, stores["record"], synchronous=True)
    handler = AriadneCallbackHandler(store=stores["handler"], synchronous=True)
    for thread, kind, question in TURNS:
        graphs[kind].invoke({"messages": [("user", question)]}, _config(thread, handler))
    traces = {way: store.list_traces() for way, store in stores.items()}
    assert [len(t) for t in traces.values()] == [4, 4, 4]
    reference = [same_run_fields(t) for t in traces["handler"]]
    assert [same_run_fields(t) for t in traces["record"]] == reference
    assert [same_run_fields(t) for t in traces["middleware"]] == reference
    first = traces["handler"][0]  # what was compared is a real multi-step, tool-calling trace
    assert first.query == TWO_STEP_QUESTION and first.thread_id == "thread-a"
    assert [len(s.tool_calls) for s in first.steps] == [1, 1, 0]
    assert [s.tool_calls[0].output for s in first.steps[:2]] == ["42", "47"]
    assert first.final_answer == "Following my steps, the total is 47 apples."
    assert first.agent_name == "calc" and first.tags == ("ingress-test",)
    assert first.metadata["tenant"] == "acme" and first.metadata["thread_id"] == "thread-a"
    assert all(s.checkpoint.task_id for s in first.steps)
    assert [t.query for t in traces["middleware"]] == [q for _, _, q in TURNS]
    assert len({t.trace_id for t in traces["middleware"]}) == 4


def _run_alone(way: str, store: InMemoryTraceStore) -> None:
    graphs: dict[str, Any] = {}
    for kind in MODELS:
        if way == "middleware":
            graphs[kind] = _agent(kind, middleware=AriadneMiddleware(store, synchronous=True))
        elif way == "record":
            graphs[kind] = record(_agent(kind), store, synchronous=True)
        else:
            graphs[kind] = _agent(kind)
    callbacks = [AriadneCallbackHandler(store=store, synchronous=True)] if way == "handler" else []
    for thread, kind, question in TURNS:
        graphs[kind].invoke({"messages": [("user", question)]}, _config(thread, *callbacks))


def test_separate_runs_each_way_give_equal_traces() -> None:
    stores: Ways = {way: InMemoryTraceStore() for way in ("handler", "record", "middleware")}
    for way, store in stores.items():
        _run_alone(way, store)
    reference = [separate_run_fields(t) for t in stores["handler"].list_traces()]
    assert len(reference) == 4 and sum(len(t["steps"]) for t in reference) >= 7
    assert [separate_run_fields(t) for t in stores["record"].list_traces()] == reference
    assert [separate_run_fields(t) for t in stores["middleware"].list_traces()] == reference


def test_unnamed_agent_gets_the_graph_name_either_way() -> None:
    handler_store, middleware_store = InMemoryTraceStore(), InMemoryTraceStore()
    graph = _agent("faithful", middleware=AriadneMiddleware(middleware_store, synchronous=True), name=None)
    graph.invoke(
        {"messages": [("user", "How many apples are in 6 boxes of 7?")]},
        _config("t-1", AriadneCallbackHandler(store=handler_store, synchronous=True)),
    )
    (expected,), (got,) = handler_store.list_traces(), middleware_store.list_traces()
    assert expected.agent_name == "LangGraph"
    assert same_run_fields(got) == same_run_fields(expected)


async def test_async_runs_record_the_same_traces() -> None:
    handler_store, middleware_store = InMemoryTraceStore(), InMemoryTraceStore()
    graphs = {kind: _agent(kind, middleware=AriadneMiddleware(middleware_store, synchronous=True)) for kind in MODELS}
    handler = AriadneCallbackHandler(store=handler_store, synchronous=True)
    await asyncio.gather(  # the two threads concurrently: the middleware keeps their runs apart
        graphs["two_step"].ainvoke({"messages": [("user", TWO_STEP_QUESTION)]}, _config("thread-a", handler)),
        graphs["faithful"].ainvoke(
            {"messages": [("user", "How many apples are in 6 boxes of 7?")]}, _config("thread-b", handler)
        ),
    )
    by_thread = {t.thread_id: same_run_fields(t) for t in handler_store.list_traces()}
    assert len(by_thread) == 2 and len(by_thread["thread-a"]["steps"]) == 3
    assert {t.thread_id: same_run_fields(t) for t in middleware_store.list_traces()} == by_thread


def test_a_model_error_is_recorded_as_the_handler_records_it() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        if any(isinstance(m, AIMessage) for m in messages):
            raise RuntimeError("provider is down")
        return AIMessage(
            content="Every box holds 7, so I need to multiply 6 by 7.",
            tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c-0"}],
        )

    handler_store, middleware_store = InMemoryTraceStore(), InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=script),
        [calculator],
        checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(middleware_store, synchronous=True)],
    )
    with pytest.raises(RuntimeError, match="provider is down"):
        graph.invoke(
            {"messages": [("user", "6 boxes of 7?")]},
            _config("t-err", AriadneCallbackHandler(store=handler_store, synchronous=True)),
        )
    (expected,), (got,) = handler_store.list_traces(), middleware_store.list_traces()
    assert expected.error == "RuntimeError: provider is down" and expected.final_answer is None
    assert len(expected.steps) == 1
    assert same_run_fields(got) == same_run_fields(expected)


def test_a_new_turn_closes_a_turn_that_never_finished() -> None:
    class FailsOnce(AgentMiddleware):  # type: ignore[type-arg]
        failed = False

        def before_model(self, state: Any, runtime: Any) -> None:
            if not FailsOnce.failed:
                FailsOnce.failed = True
                raise RuntimeError("another middleware's hook failed")

    store = InMemoryTraceStore()
    middleware = AriadneMiddleware(store, synchronous=True)
    graph = create_agent(
        faithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver(), middleware=[middleware, FailsOnce()]
    )
    # a run that stops in another middleware's hook never reaches after_agent, and no hook of ours sees it stop
    with pytest.raises(RuntimeError, match="another middleware"):
        graph.invoke({"messages": [("user", "6 boxes of 7?")]}, _config("t-1"))
    assert store.list_traces() == [] and middleware.handler.runs_in_flight == 1
    graph.invoke({"messages": [("user", "How many apples are in 6 boxes of 7?")]}, _config("t-1"))
    unfinished, finished = store.list_traces()
    assert unfinished.error is not None and "stopped before the agent finished" in unfinished.error
    assert finished.error is None and finished.final_answer is not None
    assert middleware.handler.runs_in_flight == 0


def test_the_middleware_never_raises_into_the_agent() -> None:
    class BrokenStore(InMemoryTraceStore):
        def put(self, trace: Trace) -> None:
            raise OSError("disk full")

    middleware = AriadneMiddleware(BrokenStore(), synchronous=True)
    graph = _agent("faithful", middleware=middleware)
    out = graph.invoke({"messages": [("user", "How many apples are in 6 boxes of 7?")]}, _config("t-1"))
    assert out["messages"][-1].content == "Following my plan to multiply (6 * 7), the total is 42."
    assert middleware.handler.stats.errors == 1 and middleware.handler.stats.recorded == 1


def test_middleware_traces_are_audited_and_replays_are_not_recorded() -> None:
    store = InMemoryTraceStore()
    graph = _agent("faithful", middleware=AriadneMiddleware(store, synchronous=True))
    graph.invoke({"messages": [("user", "How many apples are in 6 boxes of 7?")]}, _config("t-1"))
    (trace,) = store.list_traces()
    head = graph.get_state({"configurable": {"thread_id": "t-1"}})
    results = Auditor(graph).audit(trace, step=0, interventions=["logic_flip"])
    (result,) = [r for r in results if r.link == "thought->answer"]
    assert result.phi is not None and result.phi > 0.5 and not result.violation
    assert result.counterfactual_answer != trace.final_answer
    assert len(store.list_traces()) == 1  # the replay ran through the middleware and was ignored
    assert graph.get_state({"configurable": {"thread_id": "t-1"}}).config == head.config


def test_exactly_one_of_store_and_handler() -> None:
    with pytest.raises(ConfigurationError, match="exactly one"):
        AriadneMiddleware()
    with pytest.raises(ConfigurationError, match="exactly one"):
        AriadneMiddleware(InMemoryTraceStore(), handler=AriadneCallbackHandler())
    handler = AriadneCallbackHandler(store=InMemoryTraceStore())
    assert AriadneMiddleware(handler=handler).handler is handler


def test_a_turn_paused_for_a_human_is_one_trace_once_resumed() -> None:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.types import Command

    store = InMemoryTraceStore()
    middleware = AriadneMiddleware(store)
    graph = create_agent(
        two_step_model(),
        [calculator],
        checkpointer=InMemorySaver(),
        middleware=[middleware, HumanInTheLoopMiddleware(interrupt_on={"calculator": True})],
    )
    config = _config("t-hitl")
    paused = graph.invoke({"messages": [("user", TWO_STEP_QUESTION)]}, config)
    assert middleware.handler.flush(timeout=60)
    assert paused["__interrupt__"] and store.list_traces() == []  # not a finished trace: nothing stored yet
    for _ in range(2):  # each calculator call waits for approval
        graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert middleware.handler.flush(timeout=60)  # the default handler builds traces on its own thread
    (trace,) = store.list_traces()
    assert trace.query == TWO_STEP_QUESTION and trace.error is None and not trace.interrupted
    assert [[c.output for c in s.tool_calls] for s in trace.steps] == [["42"], ["47"], []]
    assert trace.final_answer == "Following my steps, the total is 47 apples."
    assert middleware.handler.runs_in_flight == 0
    # The middleware never sees Command(resume=...), so the answers are not recorded (the handler and
    # record() record them): a replay that reaches the pause ends with a named error, never waits.
    assert trace.interrupts == ()
    results = Auditor(graph).audit(trace, step=0, interventions=["logic_flip"])
    (result,) = [r for r in results if r.link == "thought->answer"]
    assert result.status == "failed" and "UnansweredInterruptError" in (result.error or "")


def test_an_agent_used_as_a_node_is_recorded_as_its_own_turn_and_replays_through_the_parent() -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph

    def report(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content=f"Report: {state['messages'][-1].text}")]}

    handler_store, middleware_store = InMemoryTraceStore(), InMemoryTraceStore()
    researcher = create_agent(
        faithful_arithmetic_model(),
        [calculator],
        name="researcher",
        middleware=[AriadneMiddleware(middleware_store, synchronous=True)],
    )
    builder = StateGraph(MessagesState)
    builder.add_node("researcher", researcher)
    builder.add_node("report", report)
    builder.add_edge(START, "researcher")
    builder.add_edge("researcher", "report")
    builder.add_edge("report", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    handler = AriadneCallbackHandler(store=handler_store, synchronous=True)
    graph.invoke({"messages": [("user", "How many apples are in 6 boxes of 7?")]}, _config("t-sub", handler))
    (whole,), (own,) = handler_store.list_traces(), middleware_store.list_traces()
    # the handler on the parent records the parent's run; the middleware the agent's own turn, whose
    # steps are the same steps (same messages, same subgraph tasks)
    assert (
        own.agent_name == "researcher" and own.final_answer == "Following my plan to multiply (6 * 7), the total is 42."
    )
    assert [same_run_fields(s) for s in own.steps] == [same_run_fields(s) for s in whole.steps[:2]]
    assert own.steps[0].checkpoint.checkpoint_ns.startswith("researcher:")
    results = {r.link: r for r in Auditor(graph).audit(own, step=0, interventions=["logic_flip"])}
    result = results["thought->answer"]
    assert result.phi == 1.0
    # the step's own re-run answered at once (no call): its text, then the parent's report of it
    assert (result.counterfactual_answer or "").startswith("Report: ")
    assert (result.counterfactual_answer or "").endswith("Following my plan to divide (6 / 7), the total is 0.857143.")
    # the parent has no AriadneMiddleware, the agent does: its step's model is re-run through the parent graph
    action = results["thought->action"]
    assert action.status != "failed" and action.error is None, action.error
