"""The ``evaluation cot_bypass`` span, read back from the SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc import semconv
from ariadne_lc.bypass import (
    BYPASS_SPAN_NAME,
    BypassExample,
    BypassMonitor,
    BypassResult,
    WhiteboxModel,
    bypass_attribute,
    export_bypass_result,
)
from tests.bypass.test_monitor_tiny import ANSWER, COT, PREFIX, PROMPT

Spans = tuple[TracerProvider, InMemorySpanExporter]


@pytest.fixture
def measured(tiny: Callable[..., WhiteboxModel], spans: Spans) -> BypassResult:
    provider, _ = spans
    monitor = BypassMonitor(tiny(), spans=2, tracer_provider=provider)
    return monitor.evaluate_ids(PROMPT, COT, ANSWER, PREFIX, example_id="ex-1", tags=["arithmetic"])


def test_monitor_emits_one_evaluation_span(measured: BypassResult, spans: Spans) -> None:
    _, exporter = spans
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert span.name == BYPASS_SPAN_NAME == "evaluation cot_bypass"
    assert span.kind == trace.SpanKind.INTERNAL
    assert attributes[semconv.GEN_AI_OPERATION_NAME] == "evaluation"
    assert attributes[semconv.GEN_AI_EVALUATION_NAME] == "cot_bypass"
    assert attributes[semconv.GEN_AI_EVALUATION_SCORE_VALUE] == measured.bypass
    assert attributes[semconv.GEN_AI_EVALUATION_SCORE_LABEL] == measured.label
    assert attributes[semconv.OPENINFERENCE_SPAN_KIND] == "EVALUATOR"
    assert attributes[semconv.OPENINFERENCE_EVAL_NAME] == "cot_bypass"
    assert attributes[semconv.OPENINFERENCE_EVAL_SCORE] == measured.bypass
    assert attributes[semconv.OPENINFERENCE_EVAL_LABEL] == measured.label
    assert attributes[bypass_attribute("cmi")] == measured.cmi
    assert attributes[bypass_attribute("example_id")] == "ex-1"
    assert tuple(attributes[bypass_attribute("tags")]) == ("arithmetic",)  # type: ignore[arg-type]
    assert tuple(attributes[bypass_attribute("span.cmi")]) == tuple(s.cmi for s in measured.spans)  # type: ignore[arg-type]
    for name in (
        "bypass",
        "placebo_cmi",
        "validity",
        "density",
        "sequentiality",
        "shuffled_cmi",
        "baseline_logp",
        "no_cot_effect",
        "sensitivity.relative",
        "sensitivity.robust",
        "density_curve.cmi",
    ):
        assert bypass_attribute(name) in attributes, name
    assert all(key.startswith(semconv.ARIADNE_BYPASS_PREFIX) for key in attributes if key.startswith("ariadne."))
    (event,) = span.events
    assert event.name == semconv.EVENT_EVALUATION_RESULT
    event_attributes = dict(event.attributes or {})
    assert event_attributes[semconv.GEN_AI_EVALUATION_SCORE_VALUE] == measured.bypass
    assert event_attributes[semconv.GEN_AI_EVALUATION_SCORE_LABEL] == measured.label
    assert semconv.GEN_AI_EVALUATION_EXPLANATION not in event_attributes


def test_content_only_when_captured(measured: BypassResult, spans: Spans) -> None:
    provider, exporter = spans
    example = BypassExample(prompt="Q: 2+2?\n", cot="2 and 2 make 4.\n", answer=" 4", answer_prefix="A:")
    export_bypass_result(measured, example=example, tracer_provider=provider)
    export_bypass_result(measured, example=example, tracer_provider=provider, capture_content=True)
    _, without, with_content = exporter.get_finished_spans()
    assert bypass_attribute("prompt") not in (without.attributes or {})
    assert bypass_attribute("cot") not in (without.attributes or {})
    captured = dict(with_content.attributes or {})
    assert captured[bypass_attribute("prompt")] == example.prompt
    assert captured[bypass_attribute("cot")] == example.cot
    assert captured[bypass_attribute("answer")] == example.answer
    assert semconv.GEN_AI_EVALUATION_EXPLANATION in dict(with_content.events[0].attributes or {})


def test_the_global_provider_is_never_set(tiny: Callable[..., WhiteboxModel], spans: Spans) -> None:
    before = trace.get_tracer_provider()
    result = BypassMonitor(tiny(), spans=1, tracer_provider=spans[0]).evaluate_ids(PROMPT, COT, ANSWER)
    export_bypass_result(result, tracer_provider=spans[0])
    assert trace.get_tracer_provider() is before


def test_failure_inside_the_span_is_recorded(tiny: Callable[..., WhiteboxModel], spans: Spans) -> None:
    provider, exporter = spans
    monitor = BypassMonitor(tiny(), spans=1, tracer_provider=provider)
    with pytest.raises(ValueError):
        monitor.evaluate_ids([3, 4], list(range(20, 30)), [30])
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code == trace.StatusCode.ERROR
    assert span.events[0].name == "exception"
