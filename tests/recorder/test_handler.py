from __future__ import annotations

import asyncio
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from ariadne_lc.testing import (
    ScriptedChatModel,
    arithmetic_tools,
    calculator,
    faithful_arithmetic_model,
    reasoning_content_model,
    think_tag_model,
)
from tests.helpers import QUESTION, build_agent, record


def test_records_steps_tools_and_answer(builder: str, saver: Any) -> None:
    graph = build_agent(faithful_arithmetic_model(), builder, saver)
    trace = record(graph)
    assert trace.query == QUESTION
    assert trace.thread_id == "t-1"
    assert [s.index for s in trace.steps] == [0, 1]
    first, last = trace.steps
    assert "multiply 6 by 7" in first.thought
    assert first.node == ("model" if builder == "create_agent" else "agent")
    assert first.langgraph_step == 1
    assert [(c.name, c.args, c.output, c.status) for c in first.tool_calls] == [
        ("calculator", {"expression": "6 * 7"}, "42", "success")
    ]
    assert first.checkpoint.thread_id == "t-1"
    assert first.checkpoint.task_id and first.checkpoint.task_path.endswith(first.checkpoint.task_id)
    assert first.message_id is not None
    assert last.is_final and trace.final_answer == last.thought
    assert "42" in (trace.final_answer or "")
    assert trace.error is None


def _parallel_script(messages: list[BaseMessage]) -> AIMessage:
    if not any(isinstance(m, AIMessage) for m in messages):
        return AIMessage(
            content="I will compute both products at once.",
            tool_calls=[
                {"name": "calculator", "args": {"expression": "2 * 3"}, "id": "a"},
                {"name": "calculator", "args": {"expression": "4 * 5"}, "id": "b"},
                {"name": "broken", "args": {"x": 1}, "id": "c"},
            ],
        )
    outputs = [m.text for m in messages if m.type == "tool"]
    return AIMessage(content="Results: " + ", ".join(outputs))


@tool
def broken(x: int) -> str:
    """A tool that always fails."""
    raise ToolException(f"broken tool got {x}")


broken.handle_tool_error = True


def test_parallel_tool_calls_and_tool_errors(builder: str) -> None:
    graph = build_agent(ScriptedChatModel(script=_parallel_script), builder, InMemorySaver(), [calculator, broken])
    trace = record(graph)
    calls = {c.id: c for c in trace.steps[0].tool_calls}
    assert calls["a"].output == "6" and calls["b"].output == "20"
    assert calls["c"].status == "error" and "broken tool got 1" in (calls["c"].output or "")
    assert trace.final_answer is not None and "6" in trace.final_answer


def test_concurrent_runs_do_not_mix(builder: str) -> None:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    graph = build_agent(faithful_arithmetic_model(), builder, InMemorySaver())

    def run(i: int) -> None:
        graph.invoke(
            {"messages": [("user", f"How many apples are in {i} boxes of {i + 1}?")]},
            {"configurable": {"thread_id": f"t-{i}"}, "callbacks": [handler]},
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(run, range(40)))
    assert handler.flush(timeout=30)
    traces = store.list_traces()
    assert len(traces) == 40
    for t in traces:
        i = int((t.thread_id or "").removeprefix("t-"))
        assert t.query == f"How many apples are in {i} boxes of {i + 1}?"
        assert t.steps[0].tool_calls[0].args == {"expression": f"{i} * {i + 1}"}
        assert t.final_answer is not None and f"{i * (i + 1)}" in t.final_answer
    assert handler.runs_in_flight == 0 and not handler._root_of
    assert handler.stats.recorded == 40 and handler.stats.errors == 0


async def test_async_runs(builder: str) -> None:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    graph = build_agent(faithful_arithmetic_model(), builder, InMemorySaver())
    await asyncio.gather(
        *(
            graph.ainvoke(
                {"messages": [("user", f"How many apples are in {i} boxes of 3?")]},
                {"configurable": {"thread_id": f"a-{i}"}, "callbacks": [handler]},
            )
            for i in range(10)
        )
    )
    assert handler.flush(timeout=30)
    traces = {t.thread_id: t for t in store.list_traces()}
    assert len(traces) == 10
    assert traces["a-4"].final_answer is not None and "12" in traces["a-4"].final_answer
    assert handler.runs_in_flight == 0


class _ExplodingStore(InMemoryTraceStore):
    def put(self, trace: Trace) -> None:
        raise RuntimeError("disk full")


def test_never_raises_into_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    handler = AriadneCallbackHandler(store=_ExplodingStore(), on_trace=lambda t: 1 / 0, synchronous=True)  # type: ignore[func-returns-value]
    graph = build_agent(faithful_arithmetic_model(), "create_agent", InMemorySaver())
    out = graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "x"}, "callbacks": [handler]})
    assert "42" in out["messages"][-1].text
    assert handler.stats.errors == 2
    assert "store.put failed" in caplog.text


def test_failed_run_is_kept_with_its_error() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        raise ValueError("provider down")

    store = InMemoryTraceStore()
    graph = build_agent(ScriptedChatModel(script=script), "hand", InMemorySaver())
    with pytest.raises(ValueError, match="provider down"):
        graph.invoke(
            {"messages": [("user", QUESTION)]},
            {"configurable": {"thread_id": "e"}, "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)]},
        )
    (trace,) = store.list_traces()
    assert trace.error is not None and "provider down" in trace.error
    assert trace.final_answer is None


def test_run_cap_drops_and_counts() -> None:
    handler = AriadneCallbackHandler(max_runs_in_flight=1)
    first, second = uuid.uuid4(), uuid.uuid4()
    handler.on_chain_start({}, {"messages": []}, run_id=first, metadata={})
    handler.on_chain_start({}, {"messages": []}, run_id=second, metadata={})
    assert handler.runs_in_flight == 1 and handler.stats.dropped == 1
    handler.on_chain_end({}, run_id=first)
    handler.on_chain_end({}, run_id=second)
    assert handler.runs_in_flight == 0


def test_malformed_callbacks_are_absorbed() -> None:
    handler = AriadneCallbackHandler()
    root = uuid.uuid4()
    handler.on_chain_start({}, object(), run_id=root, metadata={"thread_id": "m"})
    node = uuid.uuid4()
    handler.on_chain_start({}, {}, run_id=node, parent_run_id=root, metadata={"langgraph_node": "model"}, name="model")
    handler.on_chain_end(object(), run_id=node, parent_run_id=root)
    handler.on_chain_end(object(), run_id=root)
    handler.on_chain_end({}, run_id=uuid.uuid4(), parent_run_id=uuid.uuid4())
    assert handler.stats.errors == 0 and handler.runs_in_flight == 0


def test_ignores_replays_and_non_graph_runs() -> None:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store)
    graph = build_agent(faithful_arithmetic_model(), "create_agent", InMemorySaver())
    graph.invoke(
        {"messages": [("user", QUESTION)]},
        {"configurable": {"thread_id": "r"}, "callbacks": [handler], "metadata": {"ariadne.is_replay": True}},
    )
    faithful_arithmetic_model().invoke("6 and 7", {"callbacks": [handler]})  # a model run: not a chain
    RunnableLambda(lambda x: x).invoke(1, {"callbacks": [handler]})  # a chain without graph nodes
    assert handler.flush(timeout=30)
    assert store.list_traces() == [] and handler.stats.ignored == 2


def test_records_the_current_span_context() -> None:
    provider = TracerProvider()
    tracer = provider.get_tracer("app")
    graph = build_agent(faithful_arithmetic_model(), "create_agent", InMemorySaver())
    with tracer.start_as_current_span("agent request") as span:
        trace = record(graph)
    ctx = span.get_span_context()
    assert trace.span is not None
    assert trace.span.trace_id == f"{ctx.trace_id:032x}" and trace.span.span_id == f"{ctx.span_id:016x}"


def test_reasoning_blocks_are_part_of_the_thought() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        if any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(content="done: 42")
        return AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "Six boxes of seven means multiplying."},
                {"type": "text", "text": "Let me use the calculator."},
            ],
            tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "r1"}],
        )

    trace = record(build_agent(ScriptedChatModel(script=script), "hand", InMemorySaver()))
    assert trace.steps[0].thought == "Six boxes of seven means multiplying.\nLet me use the calculator."


@pytest.mark.parametrize("model", [reasoning_content_model, think_tag_model])
def test_reasoning_content_and_think_blocks_are_the_thought_without_tags(model: Any, builder: str) -> None:
    graph = build_agent(model(), builder, InMemorySaver(), arithmetic_tools())
    trace = record(graph, question="How many rooms do 12 floors of 9 rooms have?")
    plan, answer = trace.steps
    assert plan.thought == "The hotel has 12 floors and 9 rooms per floor, so I should multiply 12 by 9."
    assert answer.thought == "The answer is 108.\nThe hotel has 108 rooms in all."
    assert trace.final_answer == "The hotel has 108 rooms in all."


def test_handler_is_thread_safe_under_contention() -> None:
    handler = AriadneCallbackHandler()
    barrier = threading.Barrier(4)

    def hammer() -> None:
        barrier.wait()
        for _ in range(500):
            root = uuid.uuid4()
            handler.on_chain_start({}, {"messages": [("user", "q")]}, run_id=root, metadata={})
            child = uuid.uuid4()
            handler.on_chain_start({}, {}, run_id=child, parent_run_id=root, metadata={"langgraph_node": "n"}, name="n")
            handler.on_chain_end({"messages": [AIMessage(content="a")]}, run_id=child, parent_run_id=root)
            handler.on_chain_end({"messages": []}, run_id=root)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert handler.stats.recorded == 2000 and handler.stats.errors == 0
    assert handler.runs_in_flight == 0 and not handler._root_of
