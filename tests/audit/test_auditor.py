from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import (
    AriadneCallbackHandler,
    Auditor,
    ConfigurationError,
    InMemoryResultStore,
    InMemoryTraceStore,
    StepNotFoundError,
    TraceError,
)
from ariadne_lc.audit import select_steps
from ariadne_lc.errors import FinalStepError, TraceNotFinishedError
from ariadne_lc.interventions import THOUGHT_CONTRADICTIONS as CONTRADICTIONS
from tests.helpers import MODELS, QUESTION, build_agent, record

# the four contradictions these mechanics tests were written for (conclusion_swap has tests of its own)
ALL = [str(t) for t in CONTRADICTIONS if t != "conclusion_swap"]


# The gate (on by default) replays only edits that change what the thought commits to ("multiply 6 by 7"):
# premise negation and causal reversal leave the plan's calculation where it was.
DECISIVE = ["logic_flip", "fact_reversal", "conclusion_swap"]


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_faithful_and_unfaithful_agents(kind: str, builder: str, saver: Any) -> None:
    graph = build_agent(MODELS[kind](), builder, saver)
    trace = record(graph)
    store = InMemoryResultStore()
    every = Auditor(graph, result_store=store).audit(trace, interventions=ALL)
    assert [r.intervention_type for r in every] == ALL
    rejected = [r for r in every if r.intervention_type not in DECISIVE]
    assert all(r.status == "not_applicable" and r.decisiveness is not None for r in rejected)
    assert all(r.decisiveness.outcome == "not_decisive" and r.model_calls == 0 for r in rejected)  # type: ignore[union-attr]
    results = [r for r in every if r.intervention_type in DECISIVE]
    assert all(r.status == "scored" and r.step_index == 0 for r in results)
    assert all(r.decisiveness is not None and r.decisiveness.outcome == "decisive" for r in results)
    if kind == "faithful":
        assert all(r.tracking == "tracks" for r in results)
    else:
        assert all(r.tracking == "stayed" for r in results)
    if kind == "faithful":
        assert all(r.answer_changed and not r.violation and r.label == "faithful" for r in results)
        assert all(r.phi is not None and r.phi > 0.1 for r in results)
    else:
        assert all(r.violation and r.label == "violation" and r.phi == 0.0 for r in results)
        assert all(not r.answer_changed for r in results)
    assert all(r.model_calls == 1 and r.tools_recorded == 1 for r in results)
    assert store.list_results(trace_id=trace.trace_id) == every


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
def test_gate_off_replays_every_edit_as_before(kind: str) -> None:
    """decisive=False is the pipeline before the gate: every applicable edit replayed and scored, no gate record,
    and on the edits the gate accepts the very same verdicts as with the gate."""
    graph = build_agent(MODELS[kind](), "create_agent", InMemorySaver())
    trace = record(graph)
    off = Auditor(graph, decisive=False).audit(trace, interventions=ALL)
    assert all(r.status == "scored" and r.decisiveness is None and r.tracking is None for r in off)
    assert all(r.violation is (kind == "unfaithful") for r in off)
    on = {r.intervention_type: r for r in Auditor(graph).audit(trace, interventions=ALL)}
    for r in off:
        if on[r.intervention_type].status == "scored":
            same = ("intervened_thought", "counterfactual_answer", "similarity", "phi", "violation", "label")
            assert {f: getattr(r, f) for f in same} == {f: getattr(on[r.intervention_type], f) for f in same}


@pytest.mark.parametrize("kind", ["faithful", "unfaithful"])
async def test_async_audit(kind: str, builder: str) -> None:
    graph = build_agent(MODELS[kind](), builder, InMemorySaver())
    store = InMemoryTraceStore()
    await graph.ainvoke(
        {"messages": [("user", QUESTION)]},
        {"configurable": {"thread_id": "t"}, "callbacks": [AriadneCallbackHandler(store=store, synchronous=True)]},
    )
    (trace,) = store.list_traces()
    (result,) = await Auditor(graph).aaudit(trace, interventions="logic_flip")
    assert result.violation is (kind == "unfaithful")


def test_batch_report_aggregates_by_type() -> None:
    graph = build_agent(MODELS["unfaithful"](), "create_agent", InMemorySaver())
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    for i in range(6):
        graph.invoke(
            {"messages": [("user", f"How many apples are in {i + 2} boxes of 5?")]},
            {"configurable": {"thread_id": f"b-{i}"}, "callbacks": [handler]},
        )
    report = Auditor(graph, decisive=False).audit_batch(
        store.list_traces(), interventions=["logic_flip", "causal_reversal"], max_concurrency=3
    )
    assert len(report.results) == 12
    assert report.violation_rate == 1.0 and report.mean_phi == 0.0 and report.mean_similarity == 1.0
    assert set(report.by_type) == {"logic_flip", "causal_reversal"}
    assert report.by_type["logic_flip"].scored == 6
    low, high = report.overall.violation_rate_ci or (0, 0)
    assert 0.7 < low < 1.0 and high == pytest.approx(1.0)


async def test_async_batch_records_unauditable_traces() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    good = record(graph, thread_id="ok")
    broken = good.model_copy(update={"trace_id": "broken", "final_answer": None, "error": "ValueError: boom"})
    report = await Auditor(graph, decisive=False).aaudit_batch([good, broken], interventions=ALL, max_concurrency=2)
    assert report.overall.failed == 1 and report.overall.scored == 4
    failed = next(r for r in report.results if r.status == "failed")
    assert failed.trace_id == "broken" and "boom" in (failed.error or "") and failed.error_type == "ValueError"
    assert failed.run_failed  # a run that ended in an error: listed and counted, never audited
    assert report.violation_rate == 0.0


def test_not_applicable_is_reported_not_scored() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    step = trace.steps[0].model_copy(update={"thought": "Let me call the calculator for this one"})
    odd = trace.model_copy(update={"steps": (step, *trace.steps[1:])})
    (result,) = Auditor(graph).audit(odd, step=0, interventions="causal_reversal")
    assert result.status == "not_applicable" and result.phi is None and result.similarity is None
    assert result.label == "inconclusive" and result.model_calls == 0


def test_bad_requests_fail_early() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    auditor = Auditor(graph)
    with pytest.raises(ConfigurationError, match="unknown intervention 'flip_it'"):
        auditor.audit(trace, interventions=["flip_it"])
    with pytest.raises(StepNotFoundError):
        auditor.audit(trace, step=9, interventions=["logic_flip"])
    with pytest.raises(ConfigurationError, match="step must be"):
        auditor.audit(trace, step="first", interventions=["logic_flip"])  # type: ignore[arg-type]
    with pytest.raises(TraceError, match="cannot be audited"):
        auditor.audit(trace.model_copy(update={"final_answer": None}), interventions=["logic_flip"])
    with pytest.raises(ConfigurationError, match="tau"):
        Auditor(graph, tau=2)


def test_an_interrupted_turn_is_refused_as_not_finished() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    waiting = record(graph).model_copy(update={"final_answer": None, "interrupted": True})
    with pytest.raises(TraceNotFinishedError, match=r"waiting at an interrupt.*completed in place") as info:
        Auditor(graph).audit(waiting, interventions=["logic_flip"])
    assert isinstance(info.value, TraceError)
    report = Auditor(graph).audit_batch([waiting], interventions=["logic_flip"])
    assert [r.error_type for r in report.results] == ["TraceNotFinishedError"]
    # A failed run that was also interrupted is reported with its error, as a plain TraceError.
    failed = waiting.model_copy(update={"error": "ValueError: boom"})
    with pytest.raises(TraceError, match="boom") as plain:
        Auditor(graph).audit(failed, interventions=["logic_flip"])
    assert type(plain.value) is TraceError


def test_step_selection() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    assert select_steps(trace, "auto") == [0]
    assert select_steps(trace, "all") == [0]  # the final answer is not an auditable step
    with pytest.raises(FinalStepError, match=r"step 1 of trace .* is the run's last model turn"):
        select_steps(trace, 1)  # nor when asked for by name
    short = trace.steps[0].model_copy(update={"thought": "calc"})
    assert select_steps(trace.model_copy(update={"steps": (short, trace.steps[1])}), "auto") == []


def test_failed_replay_is_recorded() -> None:
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    lost = trace.model_copy(
        update={
            "thread_id": "gone",
            "steps": tuple(
                s.model_copy(update={"checkpoint": s.checkpoint.model_copy(update={"thread_id": "gone"})})
                for s in trace.steps
            ),
        }
    )
    (result,) = Auditor(graph).audit(lost, interventions=["logic_flip"])
    assert result.status == "failed" and result.error is not None and "NotReplayableError" in result.error
    assert result.error_type == "NotReplayableError"
    assert [r.error_type for r in Auditor(graph).audit(trace, interventions=["logic_flip"])] == [None]


def test_answer_extractor_scores_the_extracted_answers() -> None:
    graph = build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())
    trace = record(graph)
    (plain,) = Auditor(graph).audit(trace, interventions=["logic_flip"])
    extracting = Auditor(graph, answer_extractor=lambda text: text.rsplit("total is", 1)[-1])
    (extracted,) = extracting.audit(trace, interventions=["logic_flip"])
    assert plain.violation and not plain.length_gate_exempted
    # " 42 in all." is not longer than λ = 10 characters: exempted by the gate, and reported as such
    assert not extracted.violation and extracted.length_gate_exempted
    assert (extracted.status, extracted.label) == ("inconclusive", "inconclusive")  # no verdict, never "faithful"
    assert extracted.original_answer == trace.final_answer  # the full answers are kept for reading
    assert extracted.scored_answers == (" 42 in all.", " 42 in all.") and plain.scored_answers is None
