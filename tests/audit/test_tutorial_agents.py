"""Every default, on agents shaped like the public tutorials (``tests/tutorial_agents.py``): a verdict on at least 90%
of the units (each thought step, each tool output), every verdict right on every link, with and without a thought
before the call, no tool run by an audit, the production threads untouched."""

from __future__ import annotations

from typing import Any

import pytest

from ariadne_lc import Auditor
from ariadne_lc.audit import RecordedValues
from ariadne_lc.coverage import coverage_line
from tests.tutorial_agents import RUNS, SHAPES, Shape, run_shape

COMBINATIONS = [
    (True, "thought", "observation"),
    (True, "question", "question"),
    (True, "thought", "question"),
    (True, "question", "observation"),
    (False, "thought", "observation"),
    (False, "thought", "question"),
]


def _heads(graph: Any, traces: list[Any]) -> dict[str, str]:
    return {
        t.thread_id: graph.get_state({"configurable": {"thread_id": t.thread_id}}).config["configurable"][
            "checkpoint_id"
        ]
        for t in traces
    }


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
@pytest.mark.parametrize(("thought", "action", "answer"), COMBINATIONS)
def test_every_default_gives_right_verdicts_on_most_units(
    shape: Shape, thought: bool, action: str, answer: str
) -> None:
    _check(shape, thought, action, answer, "text")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
@pytest.mark.parametrize("place", ["reasoning_content", "think"])
@pytest.mark.parametrize(("action", "answer"), [("thought", "observation"), ("question", "question")])
def test_a_thought_where_reasoning_models_put_it_gets_the_same_verdicts(
    shape: Shape, place: str, action: str, answer: str
) -> None:
    """The thought in ``additional_kwargs["reasoning_content"]`` or in a ``<think>`` block: read without its tags,
    edited, and put back in the same place for the re-run (the scripted model reads it only from there)."""
    traces = _check(shape, True, action, answer, place)
    assert all(t.steps[0].thought and "<think>" not in t.steps[0].thought for t in traces)


def _check(shape: Shape, thought: bool, action: str, answer: str, place: str) -> list[Any]:
    graph, traces = run_shape(shape, thought=thought, action=action, answer=answer, thought_in=place)  # type: ignore[arg-type]
    heads, runs = _heads(graph, traces), dict(RUNS)
    # every default: no interventions, step, links (a passage, which no value of its own run can change, is served
    # another run's passage from the batch)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # no audit ran a tool: the re-runs make no call, the replays serve recorded outputs
    assert _heads(graph, traces) == heads  # every replay ran in an isolated thread
    coverage = report.coverage
    assert coverage is not None
    per_trace = len(shape.plan(shape.questions[0])[1]) + (1 if thought else 0)
    assert coverage.units == per_trace * len(traces)
    assert coverage.rate is not None and coverage.rate >= 0.9, coverage_line(coverage)
    if not thought:
        assert "thought->action" not in coverage.by_link  # no text before the call: no thought unit
    wrong = []
    for r in report.results:
        if r.status != "scored" or r.control:
            continue
        truth = {
            "thought->action": action == "question",
            "observation->answer": answer == "question",
            "thought->answer": None if (action, answer) != ("thought", "observation") else False,
        }[r.link]
        if truth is not None and r.violation != truth:
            wrong.append((r.link, r.intervention_type, r.intervention_method, r.tracking, r.counterfactual_answer))
    assert not wrong
    scored = [r for r in report.results if r.status == "scored"]
    assert all(r.input_checked for r in scored)  # every scored replay gave the model the recorded input but the edit
    flagged = {r.link for r in report.results if r.violation}
    assert ("thought->action" in flagged) == (thought and action == "question")
    assert ("observation->answer" in flagged) == (answer == "question")
    return traces


def test_a_faithful_agent_that_reads_only_the_sky_is_not_flagged_for_the_temperature() -> None:
    """The sky agent answers "The sky in Paris is sunny." from "Sunny, 21 C in Paris.": only the sky is swapped."""
    sky = next(s for s in SHAPES if s.name == "sky_conditions")
    graph, traces = run_shape(sky, thought=False)
    report = Auditor(graph).audit_batch(traces)
    swaps = [r for r in report.results if r.link == "observation->answer"]
    assert swaps and all(r.observation is not None and r.observation.mode == "value" for r in swaps)
    assert all(r.observation.old_values[0].lower() in {"sunny", "cloudy", "foggy", "snowy"} for r in swaps)  # type: ignore[union-attr]
    assert all(r.tracking == "tracks" and not r.violation and r.phi == 1.0 for r in swaps)


def test_a_plan_is_contradicted_by_another_argument_and_followed() -> None:
    """ "... the capital of Spain with the capital tool": the capital tool is named by its word in "the capital of", so
    another tool there ("... the capital of Spain with the population tool") would contradict itself; the country
    the plan states and the call carries is swapped instead."""
    lookup = next(s for s in SHAPES if s.name == "lookup_by_name")
    graph, traces = run_shape(lookup)
    (action,) = [r for r in Auditor(graph).audit(traces[0]) if r.link == "thought->action"]
    assert action.intervention_type == "plan_swap" and action.type_selection == "decisive"
    assert action.intervened_thought == traces[0].steps[0].thought.replace("Spain", "Italy")
    assert action.action is not None and [(c.name, c.args) for c in action.action.derived] == [
        ("capital", {"country": "Italy"})
    ]
    assert action.tracking == "tracks" and action.phi == 1.0 and not action.violation


def test_a_passage_is_served_another_runs_passage_only_in_a_batch_and_every_other_swap_is_the_same() -> None:
    [rag] = [s for s in SHAPES if s.name == "agentic_rag"]
    graph, traces = run_shape(rag, thought=True, action="thought", answer="observation", thought_in="content")
    alone = [r for t in traces for r in Auditor(graph).audit(t) if r.link == "observation->answer"]
    assert all(r.status == "not_applicable" and r.observation is not None for r in alone)
    assert all((r.observation.method or "").startswith("no value to swap") for r in alone)
    batch = [r for r in Auditor(graph).audit_batch(traces).results if r.link == "observation->answer"]
    methods = {r.observation.method for r in batch if r.observation}
    assert "values:other-passage in the batch" in methods and all(m.endswith(" in the batch") for m in methods)
    assert all(r.status == "scored" and not r.violation for r in batch)  # the agent reads its passage
    pool = RecordedValues.from_traces(traces)  # given as a reference: the same passages, said to be the pool's
    auditor = Auditor(graph, recorded_values=pool)
    given = [r for t in traces for r in auditor.audit(t) if r.link == "observation->answer"]
    swapped = {(r.trace_id, r.observation.swapped) for r in given if r.observation}
    assert swapped == {(r.trace_id, r.observation.swapped) for r in batch if r.observation}
    assert {r.observation.method for r in given if r.observation} == {m.removesuffix(" in the batch") for m in methods}
