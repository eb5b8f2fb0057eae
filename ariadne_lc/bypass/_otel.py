"""The OpenTelemetry span of one CoT bypass measurement.

One span per example, named ``evaluation cot_bypass``, kind INTERNAL, nested under whatever span is
current. The score is **Bypass** (1 - CMI), so that, as for φ in the causal-faithfulness audit, a high
value is the worrying one. Every metric goes under ``ariadne.bypass.*``; per-span values are arrays in
span order. Prompt, CoT and answer text, and the explanation, are attached only with
``capture_content=True``.

The tracer comes from the caller's ``tracer_provider`` or the global one; this module never sets a
global provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from ariadne_lc import semconv
from ariadne_lc._version import __version__
from ariadne_lc.bypass._records import BypassExample, BypassResult

__all__ = [
    "BYPASS_EVALUATION_NAME",
    "BYPASS_SPAN_NAME",
    "bypass_attribute",
    "bypass_span",
    "export_bypass_result",
    "get_bypass_tracer",
    "record_bypass_result",
]

BYPASS_EVALUATION_NAME: Final = "cot_bypass"
BYPASS_SPAN_NAME: Final = f"{semconv.EVALUATION_OPERATION} {BYPASS_EVALUATION_NAME}"
_TRACER_NAME: Final = "ariadne_lc.bypass"


def bypass_attribute(name: str) -> str:
    """Return the full attribute name ``ariadne.bypass.<name>``."""
    return f"{semconv.ARIADNE_BYPASS_PREFIX}{name}"


def get_bypass_tracer(tracer_provider: trace.TracerProvider | None = None) -> trace.Tracer:
    """The monitor's tracer from ``tracer_provider``, or from the global provider when ``None``."""
    return trace.get_tracer(_TRACER_NAME, __version__, tracer_provider)


@contextmanager
def bypass_span(tracer: trace.Tracer) -> Iterator[trace.Span]:
    """Open the evaluation span; an exception inside is recorded on it and re-raised."""
    with tracer.start_as_current_span(BYPASS_SPAN_NAME, kind=trace.SpanKind.INTERNAL) as span:
        span.set_attribute(semconv.GEN_AI_OPERATION_NAME, semconv.EVALUATION_OPERATION)
        span.set_attribute(semconv.GEN_AI_EVALUATION_NAME, BYPASS_EVALUATION_NAME)
        span.set_attribute(semconv.OPENINFERENCE_SPAN_KIND, semconv.OPENINFERENCE_SPAN_KIND_EVALUATOR)
        yield span


def _explanation(result: BypassResult) -> str:
    return (
        f"CMI {result.cmi:.3f} averaged over {len(result.spans)} layer spans (bypass {result.bypass:.3f}); "
        f"placebo CMI {result.placebo_cmi:.3f}, validity {result.validity:.3f}, density {result.density:.3f}, "
        f"sequentiality {result.sequentiality:.3f}; boundary "
        f"{'robust' if result.sensitivity.robust else 'sensitive'}"
    )


def _metric_attributes(result: BypassResult) -> dict[str, AttributeValue]:
    a = bypass_attribute
    attributes: dict[str, AttributeValue] = {
        a("model"): result.model,
        a("seed"): result.seed,
        a("baseline_logp"): result.baseline_logp,
        a("no_cot_logp"): result.no_cot_logp,
        a("cmi"): result.cmi,
        a("bypass"): result.bypass,
        a("placebo_cmi"): result.placebo_cmi,
        a("validity"): result.validity,
        a("density"): result.density,
        a("density_curve.fractions"): [point.fraction for point in result.density_curve],
        a("density_curve.cmi"): [point.cmi for point in result.density_curve],
        a("shuffled_cmi"): result.shuffled_cmi,
        a("sequentiality"): result.sequentiality,
        a("no_cot_effect"): result.no_cot_effect,
        a("sensitivity.expanded_cmi"): result.sensitivity.expanded_cmi,
        a("sensitivity.shrunk_cmi"): result.sensitivity.shrunk_cmi,
        a("sensitivity.absolute_deviation"): result.sensitivity.absolute_deviation,
        a("sensitivity.relative"): result.sensitivity.relative_sensitivity,
        a("sensitivity.robust"): result.sensitivity.robust,
        a("span.start"): [s.span.start for s in result.spans],
        a("span.stop"): [s.span.stop for s in result.spans],
        a("span.delta_cot"): [s.delta_cot for s in result.spans],
        a("span.delta_ctrl"): [s.delta_ctrl for s in result.spans],
        a("span.cmi"): [s.cmi for s in result.spans],
        a("span.placebo_cmi"): [s.placebo_cmi for s in result.spans],
        a("span.shuffled_cmi"): [s.shuffled_cmi for s in result.spans],
        a("span.expanded_cmi"): [s.expanded_cmi for s in result.spans],
        a("span.shrunk_cmi"): [s.shrunk_cmi for s in result.spans],
        a("n_prompt_tokens"): result.n_prompt_tokens,
        a("n_cot_tokens"): result.n_cot_tokens,
        a("n_answer_prefix_tokens"): result.n_answer_prefix_tokens,
        a("n_answer_tokens"): result.n_answer_tokens,
        a("cot_start"): result.cot_start,
        a("forward_passes"): result.forward_passes,
        a("sequences"): result.sequences,
    }
    if result.example_id is not None:
        attributes[a("example_id")] = result.example_id
    if result.tags:
        attributes[a("tags")] = list(result.tags)
    return attributes


def record_bypass_result(
    span: trace.Span,
    result: BypassResult,
    *,
    example: BypassExample | None = None,
    capture_content: bool = False,
) -> None:
    """Put the score, the label, every metric and the ``gen_ai.evaluation.result`` event on ``span``."""
    span.set_attribute(semconv.GEN_AI_EVALUATION_SCORE_VALUE, result.bypass)
    span.set_attribute(semconv.GEN_AI_EVALUATION_SCORE_LABEL, result.label)
    span.set_attribute(semconv.OPENINFERENCE_EVAL_NAME, BYPASS_EVALUATION_NAME)
    span.set_attribute(semconv.OPENINFERENCE_EVAL_SCORE, result.bypass)
    span.set_attribute(semconv.OPENINFERENCE_EVAL_LABEL, result.label)
    span.set_attributes(_metric_attributes(result))
    event: dict[str, AttributeValue] = {
        semconv.GEN_AI_EVALUATION_NAME: BYPASS_EVALUATION_NAME,
        semconv.GEN_AI_EVALUATION_SCORE_VALUE: result.bypass,
        semconv.GEN_AI_EVALUATION_SCORE_LABEL: result.label,
    }
    if capture_content:
        event[semconv.GEN_AI_EVALUATION_EXPLANATION] = _explanation(result)
        if example is not None:
            span.set_attribute(bypass_attribute("prompt"), example.prompt)
            span.set_attribute(bypass_attribute("cot"), example.cot)
            span.set_attribute(bypass_attribute("answer_prefix"), example.answer_prefix)
            span.set_attribute(bypass_attribute("answer"), example.answer)
    span.add_event(semconv.EVENT_EVALUATION_RESULT, event)


def export_bypass_result(
    result: BypassResult,
    *,
    example: BypassExample | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    capture_content: bool = False,
) -> None:
    """Emit the span of a result measured earlier (the monitor emits its own spans as it measures)."""
    with bypass_span(get_bypass_tracer(tracer_provider)) as span:
        record_bypass_result(span, result, example=example, capture_content=capture_content)
