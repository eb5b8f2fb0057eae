"""The ground-truth agents on a scripted model: truth by construction, checked through real audits."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, Auditor, Trace
from ariadne_lc.calibration.agents import (
    ANSWER_NODE,
    AUDITED_STEP,
    READ_NODE,
    THINK_NODE,
    build_ground_truth_agent,
    routes_to_bypass,
    routing_p,
    truth_of,
)
from ariadne_lc.calibration.decisive import answer_from_thought, question_kind
from ariadne_lc.demo import extract_final_answer
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.testing import ScriptedChatModel

from .scripts import calibration_model, questions

CONTRADICTIONS = ["logic_flip", "fact_reversal", "premise_negation", "causal_reversal"]


def _record(graph: Any, question: str, thread: str) -> Trace:
    traces: list[Trace] = []
    graph.invoke(
        {"messages": [("user", question)]},
        {
            "configurable": {"thread_id": thread},
            "callbacks": [AriadneCallbackHandler(on_trace=traces.append, synchronous=True)],
        },
    )
    return traces[-1]


def _auditor(graph: Any) -> Auditor:
    return Auditor(graph, answer_extractor=lambda text: extract_final_answer(text) or text, lam=0)


def test_coupled_answers_move_exactly_with_the_thought(saver: Any) -> None:
    model = calibration_model()
    graph = build_ground_truth_agent(model, "coupled", checkpointer=saver)
    moved = 0
    for q in questions(3, 2):
        trace = _record(graph, q.question, q.id)
        assert [s.node for s in trace.steps] == [THINK_NODE, READ_NODE]
        kind = question_kind(q.question)
        for r in _auditor(graph).audit(trace, AUDITED_STEP, CONTRADICTIONS):
            if r.status != "scored":
                assert r.status == "not_applicable"
                continue
            assert r.intervened_thought is not None and r.model_calls == 0  # the read path calls no model
            # the counterfactual answer is the one the intervened thought commits to, nothing else
            assert extract_final_answer(r.counterfactual_answer or "") == answer_from_thought(
                r.intervened_thought, kind
            )
            expected_same = answer_from_thought(r.intervened_thought, kind) == answer_from_thought(
                trace.steps[0].thought, kind
            )
            assert r.violation is expected_same
            moved += not r.violation
    assert moved > 0


def test_bypass_answers_never_move() -> None:
    model = calibration_model()
    graph = build_ground_truth_agent(model, "bypass", checkpointer=InMemorySaver())
    scored = 0
    for q in questions(3, 2):
        trace = _record(graph, q.question, q.id)
        assert [s.node for s in trace.steps] == [THINK_NODE, ANSWER_NODE]
        for r in _auditor(graph).audit(trace, AUDITED_STEP, [*CONTRADICTIONS, "rerun"]):
            if r.status == "scored":
                scored += 1
                assert r.violation and r.counterfactual_answer == trace.final_answer and r.model_calls == 1
    assert scored >= 10


def test_bypass_answer_call_never_sees_the_thought() -> None:
    seen: list[str] = []
    inner = calibration_model()

    def spy(messages: Any) -> Any:
        seen.append("\n".join(m.text for m in messages))
        return inner.script(messages)

    graph = build_ground_truth_agent(ScriptedChatModel(script=spy), "bypass", checkpointer=InMemorySaver())
    trace = _record(graph, questions(1)[0].question, "t")
    thought = trace.steps[0].thought
    assert thought and thought not in seen[1] and thought in trace.steps[0].thought


@pytest.mark.parametrize("p", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_mixture_routing_matches_p(p: float) -> None:
    texts = [q.question for q in questions(400)]
    routed = [routes_to_bypass(t, p) for t in texts]
    assert abs(sum(routed) / len(routed) - p) < 0.07
    if p in (0.0, 1.0):
        assert all(r == bool(p) for r in routed)
    # nested: a query routed at p is routed at every larger p
    assert all(routes_to_bypass(t, min(1.0, p + 0.25)) for t, r in zip(texts, routed, strict=True) if r)


def test_mixture_takes_the_path_its_truth_says() -> None:
    graph = build_ground_truth_agent(calibration_model(), "mixture", p=0.5, checkpointer=InMemorySaver())
    paths = set()
    for q in questions(12):
        trace = _record(graph, q.question, q.id)
        node = trace.steps[-1].node
        paths.add(node)
        assert node == (ANSWER_NODE if truth_of(q.question, 0.5) == "unfaithful" else READ_NODE)
    assert paths == {ANSWER_NODE, READ_NODE}


def test_bad_kinds_and_rates_are_named_errors() -> None:
    with pytest.raises(ConfigurationError, match="needs p"):
        routing_p("mixture")
    with pytest.raises(ConfigurationError, match="only for mixture"):
        routing_p("coupled", 0.5)
    with pytest.raises(ConfigurationError, match="unknown ground-truth agent"):
        build_ground_truth_agent(calibration_model(), "natural", checkpointer=InMemorySaver())  # type: ignore[arg-type]
