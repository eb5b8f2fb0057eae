"""The recorder's own GenAI spans (``ariadne_lc.recorder._spans``), given a tracer provider: each agent run an
``invoke_agent`` span, each tool call an ``execute_tool`` span under it, a sub-agent's span under the call that started
it, a hand-off naming the agent handed to; each trace names its agent's span (what audits score); a tool that runs
no agent exports no agent span; a tracer that raises never reaches the agent."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import ariadne_lc.recording as recording
from ariadne_lc import InMemoryTraceStore, record
from ariadne_lc import semconv as sc
from tests.subagent_plain import ask_manager, main_model


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _tree(spans: tuple[ReadableSpan, ...]) -> list[tuple[int, str]]:
    by_id = {s.context.span_id: s for s in spans}

    def depth(s: ReadableSpan) -> int:
        d = 0
        while s.parent is not None and s.parent.span_id in by_id:
            s, d = by_id[s.parent.span_id], d + 1
        return d

    return [(depth(s), s.name) for s in sorted(spans, key=lambda s: s.start_time or 0)]


def test_every_agent_of_a_two_level_system_is_a_span_under_the_tool_call_that_started_it() -> None:
    provider, exporter = _provider()
    store = InMemoryTraceStore()
    graph = create_agent(main_model("ask_manager", "manager"), [ask_manager], checkpointer=InMemorySaver(), name="main")
    asked = {"messages": [("user", "What is the price of the apple?")]}
    record(graph, store, tracer_provider=provider, synchronous=True).invoke(asked, {"configurable": {"thread_id": "s"}})
    spans = exporter.get_finished_spans()
    assert _tree(spans) == [
        (0, "invoke_agent main"),
        (1, "execute_tool ask_manager"),
        (2, "invoke_agent manager"),
        (3, "execute_tool ask_clerk"),
        (4, "invoke_agent clerk"),
        (5, "execute_tool price"),
    ]
    agents = {s.attributes[sc.GEN_AI_AGENT_NAME]: s for s in spans if s.name.startswith("invoke_agent")}  # type: ignore[index]
    assert all(s.attributes[sc.GEN_AI_OPERATION_NAME] == "invoke_agent" for s in agents.values())  # type: ignore[index]
    assert all(s.attributes[sc.GEN_AI_CONVERSATION_ID] == "s" for s in agents.values())  # type: ignore[index]
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert all(s.attributes[sc.GEN_AI_TOOL_CALL_ID] for s in tools)  # type: ignore[index]
    for trace in store.list_traces():  # each trace names its own agent's span: its audits are scored there
        span = agents[trace.agent_name]
        assert trace.span is not None and trace.span.span_id == format(span.context.span_id, "016x")
        assert len({s.context.trace_id for s in spans}) == 1  # one tree


def test_a_hand_off_names_the_agent_handed_to() -> None:
    from tests.harness_agents import run_supervisor

    provider, exporter = _provider()
    original = recording.record

    def traced(graph: Any, store: Any, **options: Any) -> Any:
        return original(graph, store, tracer_provider=provider, **options)

    with mock.patch("ariadne_lc.record", traced):  # the harness records with record(graph, store)
        run_supervisor(InMemorySaver(), recorder="record")
    handoffs = [s for s in exporter.get_finished_spans() if s.name == "execute_tool transfer_to_shopper"]
    assert handoffs and all(s.attributes[sc.ARIADNE_HANDOFF_TO] == "shopper" for s in handoffs)  # type: ignore[index]


def test_a_tool_that_runs_no_agent_exports_no_agent_span() -> None:
    from tests.subagent_plain import shouting_agent

    provider, exporter = _provider()
    running = record(shouting_agent(), InMemoryTraceStore(), tracer_provider=provider, synchronous=True)
    running.invoke({"messages": [("user", "Shout hello.")]}, {"configurable": {"thread_id": "p"}})
    assert _tree(exporter.get_finished_spans()) == [(0, "invoke_agent main"), (1, "execute_tool shout")]


class _Broken:
    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the tracer is down")


def test_a_tracer_that_raises_never_reaches_the_agent() -> None:
    store = InMemoryTraceStore()
    graph = create_agent(main_model("ask_manager", "manager"), [ask_manager], checkpointer=InMemorySaver(), name="main")
    running = record(graph, store, tracer_provider=_Broken(), synchronous=True)  # type: ignore[arg-type]
    out = running.invoke(
        {"messages": [("user", "What is the price of the fig?")]}, {"configurable": {"thread_id": "b"}}
    )
    assert out["messages"][-1].text and len(store.list_traces()) == 3  # every agent recorded all the same
    handler = running.config["callbacks"][0]
    assert handler.stats.errors > 0  # counted, never raised


@pytest.mark.parametrize("traced", [False, True])
def test_without_a_tracer_nothing_changes_and_with_one_the_trace_names_ours(traced: bool) -> None:
    provider, exporter = _provider()
    store = InMemoryTraceStore()
    graph = create_agent(main_model("ask_manager", "manager"), [ask_manager], checkpointer=InMemorySaver(), name="main")
    options: dict[str, Any] = {"tracer_provider": provider} if traced else {}
    record(graph, store, synchronous=True, **options).invoke(
        {"messages": [("user", "What is the price of the pear?")]}, {"configurable": {"thread_id": "n"}}
    )
    assert bool(exporter.get_finished_spans()) == traced
    assert all((t.span is not None) == traced for t in store.list_traces())
