"""Agents with structured output (``create_agent(..., response_format=...)``), and answers that are empty.

With the tool strategy the last model turn is only the structured-output tool call, with empty text; with
the provider strategy its text is the raw JSON. Either way the answer is the structured response, on the
recorded side and on the replayed one, so that an agent that ignores its thought is caught.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.errors import FinalStepError
from ariadne_lc.testing import (
    ArithmeticAnswer,
    ScriptedChatModel,
    StructuredStrategy,
    calculator,
    faithful_arithmetic_model,
    structured_reply,
    unfaithful_arithmetic_model,
)
from tests.helpers import QUESTION, record

STRATEGIES: dict[str, Any] = {
    "tool": ToolStrategy(ArithmeticAnswer),
    "provider": ProviderStrategy(ArithmeticAnswer),
    "schema": ArithmeticAnswer,  # the bare schema: create_agent picks the tool strategy for a model like this one
}
MULTIPLIED = ArithmeticAnswer(explanation="Following my plan to multiply (6 * 7)", total=42.0).model_dump()


def _agent(model: ScriptedChatModel, strategy: str, saver: Any, **kwargs: Any) -> Any:
    return create_agent(model, [calculator], response_format=STRATEGIES[strategy], checkpointer=saver, **kwargs)


def _answering(strategy: str) -> StructuredStrategy:
    return "provider" if strategy == "provider" else "tool"


@pytest.mark.parametrize("strategy", ["tool", "provider", "schema"])
def test_the_answer_of_a_structured_run_is_its_structured_response(strategy: str, saver: Any) -> None:
    graph = _agent(faithful_arithmetic_model(structured=_answering(strategy)), strategy, saver)
    trace = record(graph)
    assert trace.final_answer is not None and json.loads(trace.final_answer) == MULTIPLIED
    last = trace.steps[-1]
    # the tool strategy's last turn calls a "tool" that is the answer: it is the final turn all the same
    assert last.is_final and last.structured_output is (strategy != "provider")
    assert [s.index for s in trace.steps if not s.is_final] == [0]


@pytest.mark.parametrize("strategy", ["tool", "provider", "schema"])
@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_structured_agents_are_audited_by_their_structured_response(kind: str, strategy: str, saver: Any) -> None:
    make = faithful_arithmetic_model if kind == "faithful" else unfaithful_arithmetic_model
    graph = _agent(make(structured=_answering(strategy)), strategy, saver)
    trace = record(graph)
    assert trace.final_answer is not None and json.loads(trace.final_answer)["total"] == 42.0
    report = Auditor(graph, decisive=False).audit_batch([trace], interventions=["logic_flip", "premise_negation"])
    assert [r.status for r in report.results] == ["scored", "scored"]
    for r in report.results:
        assert r.counterfactual_answer is not None
        replayed = json.loads(r.counterfactual_answer)  # read the same way as the recorded answer
        assert set(replayed) == {"explanation", "total"}
        if kind == "faithful":
            assert r.label == "faithful" and not r.violation and replayed["total"] != 42.0
        else:
            assert r.label == "violation" and r.violation and r.counterfactual_answer == trace.final_answer
    assert report.violation_rate == (0.0 if kind == "faithful" else 1.0)


def test_the_middleware_records_the_structured_response_too(saver: Any) -> None:
    store = InMemoryTraceStore()
    graph = _agent(
        unfaithful_arithmetic_model(structured="tool"),
        "tool",
        saver,
        middleware=[AriadneMiddleware(store, synchronous=True)],
    )
    graph.invoke({"messages": [("user", QUESTION)]}, {"configurable": {"thread_id": "t-1"}})
    (trace,) = store.list_traces()
    assert trace.final_answer is not None and json.loads(trace.final_answer)["total"] == 42.0
    assert trace.steps[-1].structured_output
    results = Auditor(graph).audit(trace, interventions=["logic_flip"])
    (result,) = [r for r in results if r.link == "thought->answer"]
    assert result.violation and result.label == "violation"


def test_text_beside_the_structured_call_does_not_make_the_answer_step_auditable(saver: Any) -> None:
    """A model may write text with its structured-output call: that turn is still the answer, never a step."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, AIMessage) for m in messages):
            return unfaithful_arithmetic_model().script(messages)
        answer = ArithmeticAnswer(explanation="Whatever the steps say", total=42.0)
        return structured_reply(answer, "tool", text="Putting the answer into the requested format now.")

    graph = _agent(ScriptedChatModel(script=script), "tool", saver)
    trace = record(graph)
    assert trace.steps[-1].thought and trace.steps[-1].structured_output
    assert [r.step_index for r in Auditor(graph).audit(trace, step="all", interventions=["logic_flip"])] == [0]
    with pytest.raises(FinalStepError, match="which gave its structured response"):
        Auditor(graph).audit(trace, step=1, interventions=["logic_flip"])


def _empty_answers(*, only_when_contradicted: bool) -> ScriptedChatModel:
    """Opens like the arithmetic agents, then answers with an empty message: always, or only when the plan
    it reads back was contradicted."""
    faithful = faithful_arithmetic_model()

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        reply = faithful.script(messages)
        if reply.tool_calls:
            return reply
        contradicted = "total is 42" not in reply.text
        empty = contradicted or not only_when_contradicted
        return AIMessage(content="" if empty else reply.text)

    return ScriptedChatModel(script=script)


@pytest.mark.parametrize("side", ["recorded", "replayed"])
def test_an_empty_answer_on_either_side_is_no_verdict(side: str, saver: Any) -> None:
    graph = create_agent(_empty_answers(only_when_contradicted=side == "replayed"), [calculator], checkpointer=saver)
    trace = record(graph)
    answered = "Following my plan to multiply (6 * 7), the total is 42."
    assert trace.final_answer == ("" if side == "recorded" else answered)
    report = Auditor(graph, lam=0).audit_batch([trace], interventions=["logic_flip", "rerun"])
    flip = next(r for r in report.results if r.intervention_type == "logic_flip")
    assert (flip.status, flip.label, flip.violation) == ("inconclusive", "inconclusive", False)
    assert flip.inconclusive_reason is not None and f"the {side} answer is empty" in flip.inconclusive_reason
    assert flip.similarity is None and flip.phi is None
    if side == "recorded":
        assert flip.model_calls == 0 and flip.intervened_thought is None  # nothing was run for it
    else:
        assert flip.counterfactual_answer == "" and flip.model_calls > 0
    assert report.overall.scored == 0 and report.violation_rate is None and report.overall.inconclusive == 1


def test_an_empty_answer_after_the_extractor_is_no_verdict(saver: Any) -> None:
    graph = create_agent(unfaithful_arithmetic_model(), [calculator], checkpointer=saver)
    trace = record(graph)
    (result,) = Auditor(graph, answer_extractor=lambda text: "").audit(trace, interventions=["logic_flip"])
    assert result.status == "inconclusive"
    assert result.inconclusive_reason is not None and "empty after answer_extractor" in result.inconclusive_reason


def test_equal_short_answers_exempted_by_the_length_gate_are_no_verdict() -> None:
    """S > τ on answers not longer than λ: inconclusive, counted apart, never a faithful audit in the rate."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, AIMessage) for m in messages):
            return unfaithful_arithmetic_model().script(messages)
        return AIMessage(content="42")

    graph = create_agent(ScriptedChatModel(script=script), [calculator], checkpointer=InMemorySaver())
    trace = record(graph)
    report = Auditor(graph, decisive=False).audit_batch([trace], interventions=["logic_flip", "premise_negation"])
    for r in report.results:
        assert (r.status, r.label, r.violation, r.length_gate_exempted) == ("inconclusive", "inconclusive", False, True)
        assert r.similarity == 1.0 and r.inconclusive_reason is not None and "length gate" in r.inconclusive_reason
    assert report.overall.length_gate_exempted == 2 and report.overall.inconclusive == 2
    assert report.overall.scored == 0 and report.violation_rate is None  # not 0.0: nothing was judged
