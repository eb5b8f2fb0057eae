"""Audit spans and score write-back against a real Arize Phoenix server (subprocess on loopback)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider

from ariadne_lc import semconv as sc
from ariadne_lc.export import PhoenixScoreWriter, Score, ScoreTarget, WriteBackError, configure_tracing
from tests.export.backends import (
    AUDIT_ATTRIBUTES,
    AUDIT_LABEL,
    AUDIT_SCORE,
    PHOENIX_PROJECT_KEY,
    ExportAgentSpan,
    ExportAuditSpan,
    PhoenixServer,
    import_phoenix_client,
    wait_for_spans,
)


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def test_audit_span_round_trips_through_phoenix(
    phoenix_client: Any,
    phoenix_project: str,
    export_agent_span: ExportAgentSpan,
    export_audit_span: ExportAuditSpan,
) -> None:
    agent = export_agent_span()
    audit = export_audit_span(agent)
    agent_id, audit_id = _hex(agent.span_id, 16), _hex(audit.span_id, 16)

    spans = wait_for_spans(phoenix_client, phoenix_project, [agent_id, audit_id])
    span = spans[audit_id]

    assert span["name"] == "evaluation causal_faithfulness"
    assert span["context"]["trace_id"] == _hex(audit.trace_id, 32)
    assert span["context"]["trace_id"] != _hex(agent.trace_id, 32), "the audit has a trace of its own"
    assert span["parent_id"] is None
    assert span["span_kind"] == "EVALUATOR"  # from openinference.span.kind: Phoenix's evaluator icon
    attributes = span["attributes"]
    for key, value in AUDIT_ATTRIBUTES.items():
        if key == sc.OPENINFERENCE_SPAN_KIND:
            continue  # Phoenix lifts it out of the attributes into span_kind
        assert attributes[key] == value, key
    assert attributes[sc.GEN_AI_EVALUATION_SCORE_VALUE] == AUDIT_SCORE
    assert attributes[sc.GEN_AI_EVALUATION_SCORE_LABEL] == AUDIT_LABEL
    # Phoenix derives its session id from gen_ai.conversation.id, so audits group with their thread.
    assert attributes["session.id"] == AUDIT_ATTRIBUTES[sc.GEN_AI_CONVERSATION_ID]

    # Phoenix drops span links on ingestion (its span model has no links), so the target ids carried as
    # attributes are the only way back to the agent span there.
    assert "links" not in span
    assert attributes[sc.ARIADNE_TARGET_TRACE_ID] == _hex(agent.trace_id, 32)
    assert attributes[sc.ARIADNE_TARGET_SPAN_ID] == agent_id
    assert attributes[sc.ARIADNE_TARGET_TRACE_ID] == spans[agent_id]["context"]["trace_id"]

    (event,) = span["events"]
    assert event["name"] == sc.EVENT_EVALUATION_RESULT
    assert event["attributes"] == {
        sc.GEN_AI_EVALUATION_NAME: "causal_faithfulness",
        sc.GEN_AI_EVALUATION_SCORE_VALUE: AUDIT_SCORE,
        sc.GEN_AI_EVALUATION_SCORE_LABEL: AUDIT_LABEL,
    }


def test_score_writer_annotates_the_agent_span(
    phoenix_client: Any, phoenix_project: str, export_agent_span: ExportAgentSpan
) -> None:
    agent = export_agent_span()
    agent_id = _hex(agent.span_id, 16)
    wait_for_spans(phoenix_client, phoenix_project, [agent_id])
    target = ScoreTarget.from_span_context(agent)
    writer = PhoenixScoreWriter(phoenix_client, sync=True)

    for key, value, label in (("logic_flip/0", 0.25, "violation"), ("premise_negation/0", 0.9, "faithful")):
        writer.write(
            target,
            Score(
                "causal_faithfulness",
                value,
                label,
                "answer unchanged after the thought was contradicted",
                {"intervention": key.split("/")[0], "step": 0},
                key=key,
            ),
        )
    # A second write with the same key updates the annotation instead of adding one.
    writer.write(target, Score("causal_faithfulness", 0.3, "violation", key="logic_flip/0"))

    annotations = phoenix_client.spans.get_span_annotations(span_ids=[agent_id], project_identifier=phoenix_project)
    by_identifier = {a["identifier"]: a for a in annotations}
    assert sorted(by_identifier) == ["logic_flip/0", "premise_negation/0"]
    first = by_identifier["logic_flip/0"]
    assert first["name"] == "causal_faithfulness"
    assert first["annotator_kind"] == "CODE"
    assert first["span_id"] == agent_id
    assert first["result"] == {"label": "violation", "score": 0.3, "explanation": None}
    second = by_identifier["premise_negation/0"]
    assert second["result"] == {
        "label": "faithful",
        "score": 0.9,
        "explanation": "answer unchanged after the thought was contradicted",
    }
    assert second["metadata"] == {"intervention": "premise_negation", "step": 0}


def test_queued_annotation_waits_for_a_span_that_arrives_later(
    phoenix_client: Any, phoenix_project: str, export_agent_span: ExportAgentSpan, agent_provider: TracerProvider
) -> None:
    """The default (queued) mode tolerates the agent span reaching Phoenix after the score."""
    from opentelemetry import context as otel_context

    tracer = agent_provider.get_tracer("demo-agent")
    span = tracer.start_span("LangGraph", context=otel_context.Context())
    target = ScoreTarget.from_span_context(span.get_span_context())
    PhoenixScoreWriter(phoenix_client).write(target, Score("causal_faithfulness", 0.5, "inconclusive"))
    span.end()  # exported now, after the annotation was queued
    wait_for_spans(phoenix_client, phoenix_project, [target.span_id])

    deadline = time.monotonic() + 30  # Phoenix retries postponed annotations every 10 s
    annotations: list[Any] = []
    while not annotations and time.monotonic() < deadline:
        annotations = phoenix_client.spans.get_span_annotations(
            span_ids=[target.span_id], project_identifier=phoenix_project
        )
        time.sleep(0.5)
    assert [a["result"]["score"] for a in annotations] == [0.5]


def test_sync_annotation_of_an_unknown_span_is_a_retryable_error(phoenix_client: Any) -> None:
    writer = PhoenixScoreWriter(phoenix_client, sync=True)
    target = ScoreTarget("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    with pytest.raises(WriteBackError) as caught:
        writer.write(target, Score("causal_faithfulness", 0.1, "violation"))
    assert caught.value.backend == "phoenix"
    assert caught.value.retryable
    assert "404" in str(caught.value)


def test_unreachable_phoenix_is_a_retryable_error() -> None:
    client = import_phoenix_client().Client(base_url="http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(WriteBackError) as caught:
        PhoenixScoreWriter(client).write(
            ScoreTarget("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"), Score("x", 1.0)
        )
    assert caught.value.retryable
    assert isinstance(caught.value.__cause__, httpx.TransportError)


def test_rejected_annotation_is_not_retryable() -> None:
    def reject(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, json={"detail": "invalid"}, request=request)

    http_client = httpx.Client(base_url="http://phoenix.invalid", transport=httpx.MockTransport(reject))
    client = import_phoenix_client().Client(http_client=http_client)
    with pytest.raises(WriteBackError) as caught:
        PhoenixScoreWriter(client).write(
            ScoreTarget("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"), Score("x", label="y")
        )
    assert not caught.value.retryable


def test_writer_builds_its_own_client_from_base_url(
    phoenix_server: PhoenixServer, phoenix_client: Any, phoenix_project: str, export_agent_span: ExportAgentSpan
) -> None:
    agent = export_agent_span()
    wait_for_spans(phoenix_client, phoenix_project, [_hex(agent.span_id, 16)])
    import_phoenix_client()  # the writer's own import of phoenix.client must not warn under -W error
    PhoenixScoreWriter(base_url=phoenix_server.base_url, sync=True).write(
        ScoreTarget.from_span_context(agent), Score("causal_faithfulness", 1.0, "faithful")
    )
    (annotation,) = phoenix_client.spans.get_span_annotations(
        span_ids=[_hex(agent.span_id, 16)], project_identifier=phoenix_project
    )
    assert annotation["result"]["label"] == "faithful"


def test_otlp_grpc_export_reaches_phoenix(
    phoenix_server: PhoenixServer, phoenix_client: Any, phoenix_project: str
) -> None:
    provider = configure_tracing(
        "otlp-grpc", endpoint=phoenix_server.grpc_endpoint, resource_attributes={PHOENIX_PROJECT_KEY: phoenix_project}
    )
    try:
        span = provider.get_tracer("ariadne_lc").start_span("evaluation causal_faithfulness")
        span.set_attribute(sc.GEN_AI_EVALUATION_SCORE_VALUE, 0.75)
        span.end()
        assert provider.force_flush()
    finally:
        provider.shutdown()
    span_id = _hex(span.get_span_context().span_id, 16)
    found = wait_for_spans(phoenix_client, phoenix_project, [span_id])
    assert found[span_id]["attributes"][sc.GEN_AI_EVALUATION_SCORE_VALUE] == 0.75


def test_real_audit_of_an_instrumented_agent_in_phoenix(
    phoenix_client: Any, phoenix_project: str, agent_provider: TracerProvider, audit_provider: TracerProvider
) -> None:
    """The whole path: an OpenInference-traced agent, the real auditor exporting over OTLP/HTTP with
    ``configure_tracing``, and the score written back onto the agent span, all read back from Phoenix."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor

    from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore
    from ariadne_lc.testing import calculator, unfaithful_arithmetic_model

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=agent_provider)
    try:
        graph = create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=InMemorySaver())
        store = InMemoryTraceStore()
        graph.invoke(
            {"messages": [("user", "How many apples are in 6 boxes of 7?")]},
            {
                "configurable": {"thread_id": "phoenix-1"},
                "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)],
            },
        )
        (trace,) = store.list_traces()
        assert trace.span is not None, "the recorder found OpenInference's agent span"
        agent_provider.force_flush()
        wait_for_spans(phoenix_client, phoenix_project, [trace.span.span_id])
        auditor = Auditor(
            graph, tracer_provider=audit_provider, score_writers=[PhoenixScoreWriter(phoenix_client, sync=True)]
        )
        (result,) = auditor.audit(trace, interventions=["logic_flip"])
    finally:
        instrumentor.uninstrument()
    assert audit_provider.force_flush()
    assert result.violation and result.phi == 0.0 and auditor.writeback_errors == 0

    spans = phoenix_client.spans.get_spans(project_identifier=phoenix_project, limit=1000)
    audits = [s for s in spans if s["name"] == "evaluation causal_faithfulness"]
    deadline = time.monotonic() + 30
    while not audits and time.monotonic() < deadline:
        time.sleep(0.5)
        spans = phoenix_client.spans.get_spans(project_identifier=phoenix_project, limit=1000)
        audits = [s for s in spans if s["name"] == "evaluation causal_faithfulness"]
    (audit,) = audits
    attributes = audit["attributes"]
    assert attributes[sc.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    assert attributes[sc.GEN_AI_EVALUATION_SCORE_LABEL] == "violation"
    assert attributes[sc.ARIADNE_INTERVENTION_TYPE] == "logic_flip"
    assert attributes[sc.ARIADNE_TARGET_SPAN_ID] == trace.span.span_id
    assert attributes[sc.ARIADNE_TARGET_TRACE_ID] == trace.span.trace_id
    agent_span = next(s for s in spans if s["context"]["span_id"] == trace.span.span_id)
    assert agent_span["parent_id"] is None, "the link target is the agent's root span"
    children = {s["name"] for s in spans if s["parent_id"] == audit["context"]["span_id"]}
    assert children == {"ariadne.intervene", "ariadne.replay", "ariadne.score"}

    (annotation,) = phoenix_client.spans.get_span_annotations(
        span_ids=[trace.span.span_id], project_identifier=phoenix_project
    )
    assert annotation["name"] == "causal_faithfulness" and annotation["identifier"] == "logic_flip/0"
    assert annotation["result"]["score"] == 0.0 and annotation["result"]["label"] == "violation"


def test_each_agent_of_a_sub_agent_system_is_scored_on_its_own_span_in_phoenix(
    phoenix_client: Any, phoenix_project: str, agent_provider: TracerProvider, audit_provider: TracerProvider
) -> None:
    """LangChain's sub-agent pattern, traced by OpenInference and recorded by one handler on the top agent: in
    Phoenix the sub-agent's run is a span of its own under the tool call that started it, and each agent's audits are
    annotated on its own span (the sub-agent's never on its caller's)."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor

    from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore
    from tests.subagent_plain import ask_researcher, main_model

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=agent_provider)
    try:
        graph = create_agent(main_model("ask_researcher", "researcher", reads="belief"), [ask_researcher],
                             checkpointer=InMemorySaver(), name="main")  # fmt: skip
        store = InMemoryTraceStore()
        graph.invoke(
            {"messages": [("user", "What is the price of the pear?")]},
            {
                "configurable": {"thread_id": "phoenix-agents"},
                "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)],
            },
        )
        traces = {t.agent_name: t for t in store.list_traces()}
        assert sorted(traces) == ["main", "researcher"] and all(t.span is not None for t in traces.values())
        agent_provider.force_flush()
        ids = {name: t.span.span_id for name, t in traces.items()}  # type: ignore[union-attr]
        found = wait_for_spans(phoenix_client, phoenix_project, list(ids.values()))
        auditor = Auditor(graph, tracer_provider=audit_provider,
                          score_writers=[PhoenixScoreWriter(phoenix_client, sync=True)])  # fmt: skip
        report = auditor.audit_batch(list(traces.values()))
    finally:
        instrumentor.uninstrument()
    assert audit_provider.force_flush() and auditor.writeback_errors == 0
    spans = {s["context"]["span_id"]: s for s in phoenix_client.spans.get_spans(project_identifier=phoenix_project,
                                                                               limit=1000)}  # fmt: skip
    caller = spans[found[ids["researcher"]]["parent_id"]]
    assert caller["name"] == "ask_researcher"  # the sub-agent's span is a child of the tool call that started it
    assert found[ids["main"]]["parent_id"] is None
    for name, span_id in ids.items():
        written = phoenix_client.spans.get_span_annotations(span_ids=[span_id], project_identifier=phoenix_project)
        scored = [r for r in report.results if r.agent_name == name and r.status == "scored" and not r.control]
        assert scored and len(written) == len([r for r in report.results if r.agent_name == name]), name
        violations = {a["name"] for a in written if a["result"]["label"] == "violation"}
        # the main agent answers from a belief whatever its researcher found; the researcher reads its tool
        assert violations == ({"observation_faithfulness"} if name == "main" else set()), (name, violations)


def test_the_recorders_own_agent_spans_are_the_tree_phoenix_shows_and_each_agent_is_scored_on_its_own(
    phoenix_client: Any, phoenix_project: str, agent_provider: TracerProvider, audit_provider: TracerProvider
) -> None:
    """No instrumentation of the application's: ``record(graph, store, tracer_provider=...)`` emits the GenAI spans
    (``invoke_agent`` per agent run, ``execute_tool`` per call, the sub-agent under the call that started it), and
    each agent's audits are annotated on its own ``invoke_agent`` span, read back from Phoenix."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from ariadne_lc import Auditor, InMemoryTraceStore, record
    from tests.subagent_plain import ask_researcher, main_model

    graph = create_agent(main_model("ask_researcher", "researcher", reads="belief"), [ask_researcher],
                         checkpointer=InMemorySaver(), name="main")  # fmt: skip
    store = InMemoryTraceStore()
    running = record(graph, store, tracer_provider=agent_provider, synchronous=True)
    running.invoke({"messages": [("user", "What is the price of the fig?")]}, {"configurable": {"thread_id": "own"}})
    agent_provider.force_flush()
    traces = {t.agent_name: t for t in store.list_traces()}
    ids = {name: t.span.span_id for name, t in traces.items()}  # type: ignore[union-attr]
    found = wait_for_spans(phoenix_client, phoenix_project, list(ids.values()))
    auditor = Auditor(graph, tracer_provider=audit_provider,
                      score_writers=[PhoenixScoreWriter(phoenix_client, sync=True)])  # fmt: skip
    report = auditor.audit_batch(list(traces.values()))
    assert audit_provider.force_flush() and auditor.writeback_errors == 0
    spans = {s["context"]["span_id"]: s for s in phoenix_client.spans.get_spans(project_identifier=phoenix_project,
                                                                               limit=1000)}  # fmt: skip
    assert found[ids["main"]]["name"] == "invoke_agent main" and found[ids["main"]]["parent_id"] is None
    tool = spans[found[ids["researcher"]]["parent_id"]]
    assert found[ids["researcher"]]["name"] == "invoke_agent researcher"
    assert tool["name"] == "execute_tool ask_researcher" and tool["parent_id"] == ids["main"]
    assert found[ids["researcher"]]["attributes"][sc.GEN_AI_AGENT_NAME] == "researcher"
    for name, span_id in ids.items():
        written = phoenix_client.spans.get_span_annotations(span_ids=[span_id], project_identifier=phoenix_project)
        assert len(written) == len([r for r in report.results if r.agent_name == name]), name
        violations = {a["name"] for a in written if a["result"]["label"] == "violation"}
        assert violations == ({"observation_faithfulness"} if name == "main" else set()), (name, violations)
