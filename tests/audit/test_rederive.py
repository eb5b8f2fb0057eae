"""Audits of the tool-coupled ground-truth agent in both replay modes (``Auditor(tool_calls=...)``).

The ``coupled_tool`` agent's thought decides its own tool call (``commit(answer=<its calculation>)``) and its answer
is that tool's output: faithful by construction. Keeping the recorded call (``recorded``) leaves the answer where
it was after a decisive contradiction, a false alarm; re-deriving the call from the intervened thought
(``rederive``) moves the answer to the contradiction's value.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ariadne_lc import AriadneCallbackHandler, Auditor, Trace
from ariadne_lc.calibration.agents import (
    AUDITED_STEP,
    COMMIT_TOOL,
    build_ground_truth_agent,
    coupled_tool_deriver,
)
from ariadne_lc.calibration.decisive import answer_from_thought, question_kind
from ariadne_lc.demo import extract_final_answer
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.replay import UNAVAILABLE_TOOL_MESSAGE, ContinuationDeriver, StepContext
from ariadne_lc.semconv import ARIADNE_REPLAY_MODE
from tests.calibration.scripts import calibration_model, questions

DECISIVE = ["conclusion_swap", "logic_flip", "fact_reversal"]


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


def _auditor(graph: Any, **kwargs: Any) -> Auditor:
    return Auditor(graph, answer_extractor=lambda text: extract_final_answer(text) or text, lam=0, **kwargs)


def _rederive(graph: Any, **kwargs: Any) -> Auditor:
    return _auditor(graph, tool_calls="rederive", tool_call_deriver=coupled_tool_deriver(), **kwargs)


def _history(graph: Any, thread: str) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (s.config["configurable"]["checkpoint_id"], s.next)
        for s in graph.get_state_history({"configurable": {"thread_id": thread}})
    ]


@pytest.fixture
def graph(saver: Any) -> Any:
    return build_ground_truth_agent(calibration_model(), "coupled_tool", checkpointer=saver)


def test_the_deriver_is_the_agents_own_derivation(graph: Any) -> None:
    for q in questions(2, 2):
        trace = _record(graph, q.question, q.id)
        (recorded,) = trace.steps[AUDITED_STEP].tool_calls
        context = StepContext(query=q.question, step=trace.steps[AUDITED_STEP], messages=(), tools={})
        assert coupled_tool_deriver().derive(trace.steps[AUDITED_STEP].thought, context) == [
            {"name": recorded.name, "args": recorded.args}
        ]
        assert recorded.name == COMMIT_TOOL and extract_final_answer(trace.final_answer or "") == recorded.output


def test_recorded_mode_calls_a_decisive_contradiction_a_violation(graph: Any) -> None:
    """The false alarm this mode cannot avoid: the answer comes from the recorded tool output."""
    flagged = 0
    for q in questions(2, 2):
        trace = _record(graph, q.question, q.id)
        for r in _auditor(graph).audit(trace, AUDITED_STEP, DECISIVE):
            assert r.replay_mode == "recorded" and r.tool_call_deriver is None
            if r.status != "scored":
                continue
            assert r.decisiveness is not None and r.decisiveness.outcome == "decisive"
            assert r.counterfactual_answer == trace.final_answer and r.tools_recorded == 1
            assert r.violation and r.tracking == "stayed"
            flagged += 1
    assert flagged >= 4


def test_rederive_moves_the_answer_to_the_contradictions_value(graph: Any) -> None:
    scored = 0
    for q in questions(2, 2):
        trace = _record(graph, q.question, q.id)
        kind = question_kind(q.question)
        for r in _rederive(graph, safe_tools=[COMMIT_TOOL]).audit(trace, AUDITED_STEP, DECISIVE):
            assert r.replay_mode == "rederive" and r.tool_call_deriver == f"function:{COMMIT_TOOL}"
            if r.status != "scored":
                continue
            assert r.intervened_thought is not None and r.decisiveness is not None
            moved_to = extract_final_answer(r.counterfactual_answer or "")
            assert moved_to == answer_from_thought(r.intervened_thought, kind) == r.decisiveness.intervened_implied
            assert not r.violation and r.tracking == "tracks"
            (call,) = r.counterfactual_steps[0].tool_calls  # the re-derived call, run live (declared safe)
            assert call.id is not None and call.id.startswith("ariadne-rederived-") and call.output == moved_to
            assert (r.tools_live, r.tools_recorded, r.tools_unavailable) == (1, 0, ())
            scored += 1
    assert scored >= 4


def test_rederive_refuses_a_tool_not_declared_safe(graph: Any) -> None:
    q = questions(1)[0]
    trace = _record(graph, q.question, q.id)
    (r,) = _rederive(graph).audit(trace, AUDITED_STEP, ["conclusion_swap"])
    refusal = UNAVAILABLE_TOOL_MESSAGE.format(name=COMMIT_TOOL)
    assert r.counterfactual_answer == f"Final Answer: {refusal}"
    assert r.tools_unavailable == (COMMIT_TOOL,) and r.tools_live == 0
    # never a verdict computed from the refusal: the link could not be tested
    assert r.status == "not_applicable" and r.tracking is None and not r.violation
    assert r.not_testable is not None and f"tool {COMMIT_TOOL} not run" in r.not_testable


def test_rederive_serves_the_unchanged_call_its_recorded_output(graph: Any) -> None:
    q = questions(1)[0]
    trace = _record(graph, q.question, q.id)
    (r,) = _rederive(graph).audit(trace, AUDITED_STEP, ["rerun"])
    assert r.label == "control" and r.violation and r.counterfactual_answer == trace.final_answer
    assert (r.tools_recorded, r.tools_live, r.tools_unavailable) == (1, 0, ())


def test_rederive_leaves_the_production_thread_alone(graph: Any) -> None:
    q = questions(1)[0]
    trace = _record(graph, q.question, "prod")
    before = _history(graph, "prod")
    head = graph.get_state({"configurable": {"thread_id": "prod"}})
    (r,) = _rederive(graph, safe_tools=[COMMIT_TOOL]).audit(trace, AUDITED_STEP, ["conclusion_swap"])
    assert not r.violation
    assert _history(graph, "prod") == before
    assert graph.get_state({"configurable": {"thread_id": "prod"}}).values == head.values


def test_the_mode_is_on_the_span_and_on_every_result(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = spans
    graph = build_ground_truth_agent(calibration_model(), "coupled_tool", checkpointer=InMemorySaver())
    q = questions(1)[0]
    trace = _record(graph, q.question, q.id)
    auditor = _rederive(graph, safe_tools=[COMMIT_TOOL], tracer_provider=provider)
    auditor.audit(trace, AUDITED_STEP, ["conclusion_swap"])
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("evaluation")]
    assert span.attributes is not None and span.attributes[ARIADNE_REPLAY_MODE] == "rederive"
    # a trace with nothing to audit, and one that fails, say the mode too
    (nothing,) = _rederive(graph, min_thought_chars=10_000).audit(trace, "auto", ["logic_flip"])
    assert nothing.nothing_to_audit and nothing.replay_mode == "rederive"
    (failed,) = auditor.audit_batch([trace.model_copy(update={"final_answer": None})]).results
    assert failed.status == "failed" and failed.replay_mode == "rederive"


def test_a_deriver_that_fails_fails_the_audit_by_name(graph: Any) -> None:
    q = questions(1)[0]
    trace = _record(graph, q.question, q.id)

    def broken(thought: str, context: StepContext) -> list[dict[str, Any]]:
        raise RuntimeError("no model")

    (r,) = _auditor(graph, tool_calls="rederive", tool_call_deriver=broken).audit(
        trace, AUDITED_STEP, ["conclusion_swap"]
    )
    assert r.status == "failed" and r.error_type == "ToolCallDerivationError" and r.replay_mode == "rederive"


def test_the_auditor_checks_the_mode_and_takes_a_chat_model(graph: Any) -> None:
    assert _auditor(graph).replay_mode == "recorded" and _auditor(graph).tool_call_deriver is None
    chat = _auditor(graph, tool_calls="rederive", tool_call_deriver=calibration_model())
    assert isinstance(chat.tool_call_deriver, ContinuationDeriver) and chat.replay_mode == "rederive"
    with pytest.raises(ConfigurationError, match="needs a tool_call_deriver"):
        _auditor(graph, tool_calls="rederive")
    with pytest.raises(ConfigurationError, match="only used with tool_calls='rederive'"):
        _auditor(graph, tool_call_deriver=coupled_tool_deriver())
