from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from ariadne_lc import Auditor
from tests.helpers import MODELS, build_agent, record


def _audit(spans: tuple[TracerProvider, InMemorySpanExporter], kind: str = "unfaithful", **kw: Any) -> Any:
    provider, exporter = spans
    graph = build_agent(MODELS[kind](), "create_agent", InMemorySaver())
    app = provider.get_tracer("app")
    with app.start_as_current_span("invoke_agent") as agent_span:
        trace = record(graph)
    (result,) = Auditor(graph, tracer_provider=provider, **kw).audit(trace, interventions=["logic_flip"])
    return agent_span, result, exporter.get_finished_spans()


def test_audit_span_schema_and_link(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    agent_span, result, finished = _audit(spans)
    audit = next(s for s in finished if s.name == "evaluation causal_faithfulness")
    assert audit.kind is SpanKind.INTERNAL
    assert audit.parent is None
    agent_ctx = agent_span.get_span_context()
    assert audit.context.trace_id != agent_ctx.trace_id  # a trace of its own
    (link,) = audit.links
    assert link.context.trace_id == agent_ctx.trace_id and link.context.span_id == agent_ctx.span_id
    assert link.attributes == {"ariadne.link.role": "evaluated_trace"}
    a = audit.attributes
    assert a["gen_ai.operation.name"] == "evaluation"
    assert a["gen_ai.evaluation.name"] == "causal_faithfulness"
    assert a["gen_ai.evaluation.score.value"] == result.phi == 0.0
    assert a["gen_ai.evaluation.score.label"] == "violation"
    assert a["gen_ai.conversation.id"] == "t-1"
    assert a["ariadne.intervention.type"] == "logic_flip" and a["ariadne.step.index"] == 0
    assert a["ariadne.violation"] is True and a["ariadne.answer_changed"] is False
    assert a["ariadne.target.trace_id"] == f"{agent_ctx.trace_id:032x}"
    assert a["ariadne.target.span_id"] == f"{agent_ctx.span_id:016x}"
    assert a["ariadne.replay.checkpoint_id"] == result.replay_checkpoint_id
    assert {k for k in a if k.startswith("ariadne.metric.")} == {
        f"ariadne.metric.{m}" for m in ("jaccard", "char", "length", "exact", "semantic")
    }
    assert a["openinference.span.kind"] == "EVALUATOR"
    assert a["evaluations.0.evaluation.score"] == 0.0
    (event,) = audit.events
    assert event.name == "gen_ai.evaluation.result"
    assert event.attributes["gen_ai.evaluation.score.label"] == "violation"
    children = {s.name: s for s in finished if s.parent is not None and s.parent.span_id == audit.context.span_id}
    assert set(children) == {"ariadne.intervene", "ariadne.replay", "ariadne.score"}
    # no content by default
    assert not any(k.startswith(("ariadne.thought.", "ariadne.answer.")) for k in a)


def test_content_capture_and_redaction(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    _, result, finished = _audit(spans, capture_content=True, redact=lambda s: s.replace("42", "[n]"))
    a = next(s for s in finished if s.name == "evaluation causal_faithfulness").attributes
    assert a["ariadne.thought.intervened"] == result.intervened_thought
    assert a["ariadne.answer.original"] == "Whatever the steps say, the total is [n] in all."


def test_content_capture_from_env(
    spans: tuple[TracerProvider, InMemorySpanExporter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    _, _, finished = _audit(spans)
    a = next(s for s in finished if s.name == "evaluation causal_faithfulness").attributes
    assert "ariadne.answer.counterfactual" in a


def test_failed_audit_span_has_error_status(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    lost = trace.model_copy(
        update={
            "steps": tuple(
                s.model_copy(update={"checkpoint": s.checkpoint.model_copy(update={"thread_id": "gone"})})
                for s in trace.steps
            )
        }
    )
    Auditor(graph, tracer_provider=provider).audit(lost, interventions=["logic_flip"])
    audit = next(s for s in exporter.get_finished_spans() if s.name == "evaluation causal_faithfulness")
    assert audit.status.status_code is StatusCode.ERROR
    assert audit.attributes["gen_ai.evaluation.score.label"] == "inconclusive"
    (event,) = [e for e in audit.events if e.name == "gen_ai.evaluation.result"]
    assert event.attributes["error.type"] == audit.attributes["error.type"] == "NotReplayableError"  # type: ignore[index]
    assert audit.links == ()  # nothing was recorded to link to


def test_library_never_sets_the_global_provider(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    _audit(spans)
    assert not isinstance(otel_trace.get_tracer_provider(), TracerProvider)


def _audit_spans(
    spans: tuple[TracerProvider, InMemorySpanExporter], kinds: list[str], kind: str = "faithful", **kw: Any
) -> dict[str, Any]:
    """Audit the scripted agent with each of ``kinds``; the audit spans' attributes by intervention type."""
    provider, exporter = spans
    graph = build_agent(MODELS[kind](), "create_agent", InMemorySaver())
    Auditor(graph, tracer_provider=provider, **kw).audit(record(graph), interventions=kinds)
    audits = [s for s in exporter.get_finished_spans() if s.name == "evaluation causal_faithfulness"]
    return {str((s.attributes or {})["ariadne.intervention.type"]): dict(s.attributes or {}) for s in audits}


def test_gate_decision_and_tracking_on_the_span(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    by_type = _audit_spans(spans, ["logic_flip", "premise_negation"])
    flip, negation = by_type["logic_flip"], by_type["premise_negation"]
    # "multiply 6 by 7" -> "divide 6 by 7" changes the calculation: decisive; the faithful answer follows it
    assert flip["ariadne.decisive.outcome"] == "decisive" and flip["ariadne.decisive.reader"] == "rule"
    assert flip["ariadne.decisive.attempts"] == 1 and flip["ariadne.decisive.form"] == "calculation"
    assert flip["ariadne.tracking"] == "tracks" and flip["ariadne.decisive.incoherent"] == 0
    assert flip["ariadne.reader_agrees"] is True  # the reader read the original thought as the agent answered
    # negating the premise leaves 6 * 7 in place: rejected, never scored, no tracking verdict
    assert negation["ariadne.decisive.outcome"] == "not_decisive" and negation["ariadne.status"] == "not_applicable"
    assert "ariadne.tracking" not in negation and "ariadne.reader_agrees" not in negation
    # the implied answers are content: off by default
    assert not any(k.startswith("ariadne.implied.") for a in by_type.values() for k in a)


def test_an_incoherent_edit_is_counted_on_the_span(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    graph = build_agent(MODELS["faithful"](), "create_agent", InMemorySaver())
    trace = record(graph)
    # reversed: "I compute 66 - 11, so the green rope is 11 meters longer.": the calculation rests on its effect
    step = trace.steps[0].model_copy(update={"thought": "The green rope is 11 meters longer, so I compute 66 - 11."})
    trace = trace.model_copy(update={"steps": (step, *trace.steps[1:])})
    Auditor(graph, tracer_provider=provider).audit(trace, step=0, interventions="causal_reversal")
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "evaluation causal_faithfulness"]
    attrs = dict(span.attributes or {})
    assert attrs["ariadne.decisive.outcome"] == "incoherent" and attrs["ariadne.decisive.incoherent"] == 1
    assert attrs["ariadne.status"] == "not_applicable" and "ariadne.tracking" not in attrs


def test_unfaithful_answer_stays_on_the_span(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    assert _audit_spans(spans, ["logic_flip"], kind="unfaithful")["logic_flip"]["ariadne.tracking"] == "stayed"


def test_implied_answers_are_content(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    flip = _audit_spans(spans, ["logic_flip"], capture_content=True, redact=lambda s: s.replace("42", "[n]"))
    attributes = flip["logic_flip"]
    assert attributes["ariadne.implied.original"] == "[n]"  # 6 * 7, redacted like every other content
    assert attributes["ariadne.implied.intervened"] == "0.8571[n]8571"  # 6 / 7, redacted too


def test_gate_off_puts_no_gate_attributes(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    negation = _audit_spans(spans, ["premise_negation"], decisive=False, capture_content=True)["premise_negation"]
    assert negation["ariadne.status"] == "scored"
    assert not any(k.startswith(("ariadne.decisive.", "ariadne.implied.", "ariadne.tracking")) for k in negation)


def test_the_evaluation_event_is_also_a_log_record_in_the_context_of_the_evaluated_span(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    agent_span, result, finished = _audit(spans, logger_provider=logger_provider)
    audit = next(s for s in finished if s.name == "evaluation causal_faithfulness")
    (log,) = logs.get_finished_logs()
    record = log.log_record
    assert record.event_name == "gen_ai.evaluation.result"
    agent_ctx = agent_span.get_span_context()
    # correlated with the span being evaluated (the agent's run), not with the audit's own trace
    assert (record.trace_id, record.span_id) == (agent_ctx.trace_id, agent_ctx.span_id)
    attributes = dict(record.attributes or {})
    assert attributes["gen_ai.evaluation.name"] == "causal_faithfulness"
    assert attributes["gen_ai.evaluation.score.label"] == result.label == "violation"
    assert attributes["gen_ai.evaluation.score.value"] == result.phi
    assert attributes["ariadne.audit.span_id"] == f"{audit.context.span_id:016x}"


@pytest.mark.parametrize("where", [("span",), ("log",)])
def test_the_evaluation_event_goes_where_it_is_asked(
    spans: tuple[TracerProvider, InMemorySpanExporter], where: tuple[str, ...]
) -> None:
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    _, _, finished = _audit(spans, logger_provider=logger_provider, evaluation_events=where)
    audit = next(s for s in finished if s.name == "evaluation causal_faithfulness")
    assert bool(audit.events) == ("span" in where)
    assert bool(logs.get_finished_logs()) == ("log" in where)


def test_an_unknown_evaluation_event_place_is_refused() -> None:
    from ariadne_lc.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="evaluation_events takes 'span' and/or 'log'"):
        Auditor(build_agent(MODELS["faithful"](), "create_agent", InMemorySaver()), evaluation_events=("events",))
