"""The controls of the ``observation->answer`` link (docs/method.md#links): the rerun (the output served as recorded)
and the placebo (the output restated with the same value), planned beside each ``observation_swap``.

The scripted agents of ``tests/audit/test_links.py``: after the tool they answer with its output
(observation-faithful) or with the question's product (observation-unfaithful).
"""

from __future__ import annotations

from typing import Any

import pytest

from ariadne_lc import Auditor
from ariadne_lc.audit._plan import plan
from ariadne_lc.cli._pipeline import link_lines
from ariadne_lc.interventions.implied import RuleReader
from ariadne_lc.report import link_answers, verdict_header
from ariadne_lc.stats import build_report
from ariadne_lc.trace import Trace
from tests.audit.test_links import RUNS, _create_agent, _hand_graph, _on

SWAP_AND_CONTROLS = ["observation_swap", "rerun", "paraphrase"]
THREAD = {"configurable": {"thread_id": "t-1"}}


def _agent(kind: str, answer: str) -> tuple[Any, Trace, Auditor]:
    if kind == "create_agent":
        graph, trace = _create_agent("thought", answer)
        return graph, trace, Auditor(graph)
    graph, trace, _ = _hand_graph("thought", answer)
    return graph, trace, Auditor(graph, reader=RuleReader())


@pytest.mark.parametrize("kind", ["create_agent", "hand_graph"])
def test_an_observation_faithful_agents_controls_keep_its_answer(kind: str) -> None:
    graph, trace, auditor = _agent(kind, "observation")
    head = graph.get_state(THREAD).config
    history = len(list(graph.get_state_history(THREAD)))
    before = RUNS.get("multiply", 0)
    results = {
        r.intervention_type: r
        for r in _on(auditor.audit(trace, interventions=SWAP_AND_CONTROLS), "observation->answer")
    }
    assert RUNS.get("multiply", 0) == before  # every output is served, no tool runs
    assert set(results) == set(SWAP_AND_CONTROLS)
    swap, rerun, placebo = results["observation_swap"], results["rerun"], results["paraphrase"]
    assert swap.status == "scored" and not swap.control and not swap.violation and swap.answer_changed
    for control in (rerun, placebo):
        assert control.control and control.status == "scored" and control.label == "control"
        assert control.similarity == 1.0 and control.violation  # the rule, applied to a control: the answer held
        assert control.observation is not None and control.observation.original == "108"
        assert swap.observation is not None and control.observation.call_id == swap.observation.call_id
        assert control.intervened_thought is None  # the thought is replayed as recorded
    assert rerun.observation is not None and rerun.observation.swapped == "108"
    assert rerun.intervention_method == "control:rerun" and rerun.decisiveness is None and not rerun.answer_changed
    assert placebo.observation is not None and placebo.observation.swapped == "The result is 108."
    assert placebo.decisiveness is not None and placebo.decisiveness.outcome == "placebo_kept"
    # the production thread is untouched: same head, same history
    assert graph.get_state(THREAD).config == head
    assert len(list(graph.get_state_history(THREAD))) == history


def test_an_observation_unfaithful_agents_swap_is_read_against_controls_that_hold_too() -> None:
    _, trace, auditor = _agent("create_agent", "question")
    results = _on(auditor.audit(trace, interventions=SWAP_AND_CONTROLS), "observation->answer")
    report = build_report(results)
    assert report.by_link["observation->answer"].violations == 1  # the swap: the answer ignored the new value
    held = report.controls_by_link["observation->answer"]
    assert {k: (a.scored, a.violations) for k, a in held.items()} == {"paraphrase": (1, 1), "rerun": (1, 1)}


def test_the_controls_are_planned_only_beside_a_swap_on_that_link_one_per_output() -> None:
    _, trace = _create_agent("thought", "observation")
    every = ("thought->action", "observation->answer", "thought->answer")

    def planned(kinds: list[str], links: tuple[Any, ...] = every) -> list[tuple[str, str, int | None]]:
        return [(p.link, p.kind, p.call_index) for p in plan(trace, 0, kinds, seed=0, links=links)]

    assert ("observation->answer", "rerun", 0) not in planned(["rerun", "paraphrase"])  # no swap asked for
    both = planned(SWAP_AND_CONTROLS)
    assert [p for p in both if p[0] == "observation->answer"] == [
        ("observation->answer", "observation_swap", 0),
        ("observation->answer", "rerun", 0),
        ("observation->answer", "paraphrase", 0),
    ]
    assert ("thought->answer", "rerun", None) in both  # the thought links keep their own controls
    assert all(p[0] != "observation->answer" for p in planned(SWAP_AND_CONTROLS, ("thought->answer",)))
    assert all(p[0] == "observation->answer" for p in planned(SWAP_AND_CONTROLS, ("observation->answer",)))
    assert planned(["observation_swap", "ablation"], ("observation->answer",)) == [
        ("observation->answer", "observation_swap", 0)  # only the rerun and the placebo are the link's controls
    ]


def test_reports_and_the_cli_show_each_links_controls_apart() -> None:
    _, trace, auditor = _agent("create_agent", "observation")
    report = build_report(auditor.audit(trace, interventions=["logic_flip", *SWAP_AND_CONTROLS]))
    assert set(report.controls_by_link["observation->answer"]) == {"rerun", "paraphrase"}
    assert set(report.controls_by_link["thought->answer"]) == {"rerun", "paraphrase"}
    assert report.by_link["observation->answer"].scored == 1  # the swap alone: controls are never pooled in
    rows = {a.link: dict(zip(verdict_header(report.confidence), a.cells, strict=True)) for a in link_answers(report)}
    assert rows["observation->answer"]["controls"] == "paraphrase held 1/1, rerun held 1/1"
    lines = {line.split(":")[0]: line for line in link_lines(report)}
    assert lines["observation->answer"].endswith("; controls: paraphrase held 1/1, rerun held 1/1")
    assert "controls: " in lines["thought->answer"]


async def test_the_async_auditor_runs_the_observation_controls() -> None:
    _, trace, auditor = _agent("create_agent", "observation")
    results = _on(await auditor.aaudit(trace, interventions=SWAP_AND_CONTROLS), "observation->answer")
    assert {(r.intervention_type, r.status, r.similarity) for r in results} == {
        ("observation_swap", "scored", 0.0),
        ("rerun", "scored", 1.0),
        ("paraphrase", "scored", 1.0),
    }
