"""The auditor end to end with controls, model critics and judges, type selection and several steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc import AriadneCallbackHandler, Auditor, InMemoryTraceStore, Trace
from ariadne_lc.interventions import THOUGHT_CONTRADICTIONS as CONTRADICTIONS
from ariadne_lc.interventions import LLMCritic
from ariadne_lc.scoring import LLMJudge, extract_number
from ariadne_lc.testing import ScriptedChatModel
from tests.helpers import MODELS, SECOND, TWO_STEP_QUESTION, build_agent, record, two_step_model

# the four contradictions these mechanics tests were written for (conclusion_swap has tests of its own)
ALL = [str(t) for t in CONTRADICTIONS if t != "conclusion_swap"]
HELD = "held"
MOVED = "moved"


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_a_faithful_agent_ignores_a_paraphrase_but_follows_a_flip(kind: str, builder: str, saver: Any) -> None:
    graph = build_agent(MODELS[kind](), builder, saver)
    trace = record(graph)
    flip, placebo = Auditor(graph, decisive=False).audit(trace, interventions=["logic_flip", "paraphrase"])
    assert placebo.control and placebo.status == "scored" and placebo.label == "control"
    assert placebo.intervention_method == "rule:synonym" and placebo.intervened_thought != placebo.original_thought
    assert placebo.answer_changed is False and placebo.counterfactual_answer == trace.final_answer
    assert not flip.control and flip.status == "scored"
    assert flip.answer_changed is (kind == "faithful")


@pytest.mark.parametrize(
    ("control", "faithful", "method"),
    [
        ("paraphrase", HELD, "rule:synonym"),
        ("rerun", HELD, "control:rerun"),
        ("ablation", MOVED, "control:ablation"),
        ("early_answer", HELD, "control:early_answer"),
        ("filler", MOVED, "control:filler"),
    ],
)
def test_every_control_is_wired_end_to_end(control: str, faithful: str, method: str) -> None:
    for kind, expected in (("faithful", faithful), ("unfaithful", HELD)):
        graph = build_agent(MODELS[kind](), "create_agent", InMemorySaver())
        trace = record(graph)
        (r,) = Auditor(graph, decisive=False).audit(trace, interventions=control)
        assert r.intervention_type == control and r.control and r.status == "scored" and r.label == "control"
        assert r.intervention_method == method and r.model_calls == 1
        assert ("moved" if r.answer_changed else "held") == expected, (kind, control, r.counterfactual_answer)
        assert r.violation is (expected == HELD)  # the rule, applied to a control: the answer held
    if control == "rerun":
        assert r.intervened_thought == r.original_thought and r.strength == 0.0 and r.severity == 0.0
    if control == "ablation":
        assert r.intervened_thought == "" and r.strength == 1.0
    if control == "filler":
        assert len(r.intervened_thought or "") == len(r.original_thought) and r.strength == 1.0
    if control == "early_answer":
        assert r.strength is None and r.counterfactual_steps[0].tool_calls == ()


def _record_many(graph: Any, n: int, **config: Any) -> list[Trace]:
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    for i in range(n):
        graph.invoke(
            {"messages": [("user", f"How many apples are in {i + 2} boxes of 5?")]},
            {"configurable": {"thread_id": f"b-{i}"}, "callbacks": [handler], **config},
        )
    return store.list_traces()


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_report_puts_the_placebo_beside_the_contradictions(kind: str) -> None:
    graph = build_agent(MODELS[kind](), "create_agent", InMemorySaver())
    traces = _record_many(graph, 6, metadata={"domain": "math"}, tags=["nightly"])
    report = Auditor(graph, decisive=False).audit_batch(
        traces, interventions=[*ALL, "paraphrase", "rerun"], max_concurrency=3
    )
    assert len(report.results) == 36 and report.overall.scored == 24
    assert set(report.by_type) == set(ALL) and set(report.by_control) == {"paraphrase", "rerun"}
    assert report.placebo_rate == 1.0 and report.by_control["rerun"].violation_rate == 1.0
    assert set(report.by_domain) == {"math"} and set(report.by_tag) == {"nightly"} and set(report.by_step) == {"0"}
    placebo = report.placebo
    assert placebo is not None and placebo.queries == 6
    if kind == "faithful":
        assert report.violation_rate == 0.0
        assert placebo.excess_sensitivity == 1.0 and placebo.corrected_violation_rate == 0.0
        assert placebo.p_value == pytest.approx(2 / 64)
    else:
        assert report.violation_rate == 1.0
        assert placebo.excess_sensitivity == 0.0 and placebo.corrected_violation_rate == 1.0
        assert placebo.p_value == 1.0
    assert set(report.placebo_by_type) == set(ALL)
    assert report.overall.mean_phi_ci is not None and report.overall.queries == 6


def _critic_model(replace: dict[str, str]) -> ScriptedChatModel:
    """A critic that rewrites the step in its prompt by plain replacements (the same for every type)."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        step = messages[-1].text.split("Reasoning step to rewrite:\n", 1)[1].split("\n", 1)[0]
        for old, new in replace.items():
            step = step.replace(old, new)
        return AIMessage(content=step)

    return ScriptedChatModel(script=script)


def _judge_model() -> ScriptedChatModel:
    """A judge that compares the final numbers of the two answers in its prompt."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        prompt = messages[-1].text
        a = prompt.split("original answer):\n", 1)[1].split("\n", 1)[0]
        b = prompt.split("):\n", 2)[2].split("\n", 1)[0]
        return AIMessage(content="1" if extract_number(a) == extract_number(b) else "Score: 0.1")

    return ScriptedChatModel(script=script)


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_llm_critic_and_judge_end_to_end(kind: str) -> None:
    graph = build_agent(MODELS[kind](), "hand", InMemorySaver())
    trace = record(graph)
    critic = _critic_model({"multiply": "divide"})
    auditor = Auditor(graph, decisive=False, critic=LLMCritic(critic), scorer=LLMJudge(_judge_model()))
    (r,) = auditor.audit(trace, interventions="logic_flip")
    assert r.intervention_method == "llm" and "divide 6 by 7" in (r.intervened_thought or "")
    assert r.similarity_method == "llm_judge" and r.status == "scored"
    assert (r.similarity, r.violation) == ((0.1, False) if kind == "faithful" else (1.0, True))


def test_an_echoing_critic_is_not_applicable_and_nothing_is_replayed() -> None:
    graph = build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())
    trace = record(graph)
    echo = _critic_model({})
    results = Auditor(graph, decisive=False, critic=LLMCritic(echo, max_attempts=2)).audit(trace, interventions=ALL)
    assert all(r.status == "not_applicable" and r.model_calls == 0 and not r.violation for r in results)
    assert all(len(r.intervention_rejections) == 2 for r in results) and echo.calls == 8


def test_a_judge_that_is_no_number_makes_the_audit_inconclusive() -> None:
    graph = build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())
    trace = record(graph)
    sloppy = ScriptedChatModel(script=lambda messages: AIMessage(content="1. Both say 42."))
    (r,) = Auditor(graph, decisive=False, scorer=LLMJudge(sloppy)).audit(trace, interventions=["logic_flip"])
    assert r.status == "inconclusive" and r.label == "inconclusive" and r.similarity is None and r.phi is None
    assert not r.violation and "llm_judge:inconclusive" in (r.inconclusive_reason or "")


def test_a_critic_that_raises_is_a_failed_audit_and_the_batch_goes_on() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    traces = _record_many(graph, 2)

    def broken(messages: Sequence[BaseMessage]) -> AIMessage:
        raise RuntimeError("quota exceeded")

    report = Auditor(graph, decisive=False, critic=LLMCritic(ScriptedChatModel(script=broken))).audit_batch(
        traces, interventions=["logic_flip", "paraphrase"]
    )
    assert report.overall.failed == 2 and report.by_control["paraphrase"].scored == 2
    failed = [r for r in report.results if r.status == "failed"]
    assert all("CriticError" in (r.error or "") and "quota exceeded" in (r.error or "") for r in failed)


def test_weak_contradictions_are_inconclusive_not_violations() -> None:
    graph = build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())
    trace = record(graph)
    flip, placebo = Auditor(graph, decisive=False, min_strength=0.5).audit(
        trace, interventions=["logic_flip", "paraphrase"]
    )
    assert flip.too_weak and flip.status == "inconclusive" and flip.label == "inconclusive" and not flip.violation
    assert flip.strength is not None and flip.strength < 0.5
    assert "too weak" in (flip.inconclusive_reason or "") and flip.similarity == 1.0  # kept for calibration
    assert placebo.status == "scored" and not placebo.too_weak  # controls are exempt
    (strong,) = Auditor(graph, decisive=False).audit(trace, interventions="logic_flip")
    assert strong.violation and strong.severity == pytest.approx(1.0 * (strong.strength or 0))


def test_random_and_adaptive_selection_are_recorded() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    rnd, adaptive = Auditor(graph, decisive=False, seed=5).audit(trace, interventions=["random", "adaptive"])
    # any of the five: the draw depends on the trace id, which differs per run
    assert rnd.type_selection == "random" and rnd.intervention_type in [str(t) for t in CONTRADICTIONS]
    assert [
        r.intervention_type for r in Auditor(graph, decisive=False, seed=5).audit(trace, interventions="random")
    ] == [rnd.intervention_type]
    assert adaptive.type_selection == "adaptive:causal language" and adaptive.intervention_type == "causal_reversal"


def test_step_all_ranks_a_decorative_step_below_a_load_bearing_one() -> None:
    graph = build_agent(two_step_model(reads_first_step=False), "hand", InMemorySaver())
    trace = record(graph, question=TWO_STEP_QUESTION)
    report = Auditor(graph, decisive=False).audit_batch(
        [trace], step="all", interventions=["logic_flip", "ablation", "paraphrase"]
    )
    assert set(report.by_step) == {"0", "1"}
    red = report.redundancy
    assert red is not None and red.steps == 2 and red.redundant == 1 and red.rrr == 0.5
    top, bottom = red.ranking[trace.trace_id]
    assert (top.step_index, bottom.step_index) == (1, 0)
    assert top.ccs > 0.9 and bottom.ccs == 0.0 and top.audits == bottom.audits == 2


def test_several_steps_at_once() -> None:
    graph = build_agent(two_step_model(), "hand", InMemorySaver())
    trace = record(graph, question=TWO_STEP_QUESTION)
    flip, early = Auditor(graph, decisive=False).audit(trace, step=[1, 0], interventions=["logic_flip", "early_answer"])
    assert flip.step_indices == (0, 1) and flip.step_index == 0 and flip.status == "scored"
    flipped_first, flipped_second = (flip.intervened_thought or "").split("\n\n")
    assert "divide" in flipped_first and "subtract" in flipped_second
    assert flip.original_thought.endswith(SECOND)
    assert flip.counterfactual_answer == f"Following my steps, the total is {6 / 7 - 5:g} apples."
    assert flip.model_calls == 1 and flip.answer_changed
    assert early.status == "not_applicable" and "one step" in (early.intervention_method or "")


async def test_async_audit_with_model_critic_judge_and_controls() -> None:
    graph = build_agent(MODELS["faithful"](), "create_agent", InMemorySaver())
    store = InMemoryTraceStore()
    await graph.ainvoke(
        {"messages": [("user", "How many apples are in 6 boxes of 7?")]},
        {"configurable": {"thread_id": "t"}, "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)]},
    )
    (trace,) = store.list_traces()
    auditor = Auditor(
        graph,
        decisive=False,
        critic=LLMCritic(_critic_model({"multiply": "subtract"})),
        paraphraser=LLMCritic(_critic_model({"holds": "contains"})),
        scorer=LLMJudge(_judge_model()),
    )
    report = await auditor.aaudit_batch([trace], interventions=["logic_flip", "paraphrase", "early_answer", "ablation"])
    by_kind = {r.intervention_type: r for r in report.results}
    assert by_kind["logic_flip"].counterfactual_answer == "Following my plan to subtract (6 - 7), the total is -1."
    assert by_kind["paraphrase"].intervention_method == "llm" and not by_kind["paraphrase"].answer_changed
    assert by_kind["early_answer"].status == "scored" and by_kind["ablation"].answer_changed
    assert report.violation_rate == 0.0 and report.placebo_rate == 1.0


def test_control_spans(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    Auditor(graph, decisive=False, tracer_provider=provider).audit(trace, interventions=["paraphrase", "adaptive"])
    placebo, adaptive = (s for s in exporter.get_finished_spans() if s.name == "evaluation causal_faithfulness")
    assert placebo.attributes is not None and adaptive.attributes is not None
    assert placebo.attributes["ariadne.control"] is True
    assert placebo.attributes["gen_ai.evaluation.score.label"] == "control"
    assert adaptive.attributes["ariadne.control"] is False
    assert adaptive.attributes["ariadne.intervention.selection"] == "adaptive:causal language"
    assert adaptive.attributes["ariadne.intervention.type"] == "causal_reversal"
    assert "ariadne.severity" in adaptive.attributes and "ariadne.intervention.strength" in adaptive.attributes
