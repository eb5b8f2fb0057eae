"""The per-link ground-truth agents, runner and summary on a scripted model that writes planning thoughts.

Truth by construction, checked through real audits of real graphs (``StateGraph`` + ``ToolNode`` + checkpointer):
the faithful agent of each link gives no violation, the unfaithful one a violation on every scored contradiction.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, Auditor, Trace
from ariadne_lc.calibration.link_agents import (
    FINAL_NODE,
    LINK_AGENTS,
    THINK_NODE,
    TOOL_NODE,
    build_link_agent,
    call_from_thought,
    link_deriver,
)
from ariadne_lc.calibration.link_questions import OPERATIONS, evaluate, link_questions, question_call
from ariadne_lc.calibration.link_runner import (
    ACTION_CONTRADICTIONS,
    RESULTS_FILE,
    LinkJob,
    LinkRunConfig,
    load_jobs,
    load_sessions,
    run_link_calibration,
)
from ariadne_lc.calibration.link_summary import SUMMARY_JSON, SUMMARY_MD, summarize, write_summary
from ariadne_lc.calibration.storage import RunMismatchError
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult
from ariadne_lc.stats import wilson_interval
from ariadne_lc.testing import ScriptedChatModel

from .link_scripts import plan, planning_model


def _model() -> ScriptedChatModel:
    return planning_model()


def _record(graph: Any, question: str) -> Trace:
    traces: list[Trace] = []
    handler = AriadneCallbackHandler(on_trace=traces.append, synchronous=True)
    graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": "t"}, "callbacks": [handler]})
    return traces[-1]


def test_questions_are_prefix_stable_and_their_call_reads_back() -> None:
    small, large = link_questions(12, seed=3), link_questions(40, seed=3)
    assert large[:12] == small
    assert {q.operation for q in small} == set(OPERATIONS)
    assert len({q.text for q in large}) == 40
    for q in large:
        assert question_call(q.text) == (q.operation, q.a, q.b)
        assert float(q.answer) == float(evaluate(q.operation, q.a, q.b))
        assert "." not in q.answer  # whole numbers only
    assert question_call("How many apples?") is None


@pytest.mark.parametrize(
    ("thought", "call"),
    [
        ("12 floors of 9 rooms, so I should multiply 12 by 9.", ("multiply", 12.0, 9.0)),
        ("Sam gave 6 of 15 away, so I should subtract 6 from 15.", ("subtract", 15.0, 6.0)),
        ("I should subtract 15 and 6 now.", ("subtract", 15.0, 6.0)),
        ("24 go to 4 friends, so I should divide 24 by 4.", ("divide", 24.0, 4.0)),
        ("So I will not multiply 3 by 4.", None),
        ("It is false that I should add 3 and 4.", None),
        ("I should add 3.", None),
        ("There are 14 boxes with 8 apples each, so I should multiply that by 8.", ("multiply", 14.0, 8.0)),
        ("The class has 13 girls and 14 boys, so I should add them.", ("add", 13.0, 14.0)),
        ("The school has 84 pupils, so I should divide the number by 4.", ("divide", 84.0, 4.0)),
        ("The hotel is big.", None),
        ("I thought to add, but I should multiply 3 by 4.", ("multiply", 3.0, 4.0)),
    ],
)
def test_the_agents_own_parser_reads_the_thoughts_call(thought: str, call: Any) -> None:
    assert call_from_thought(thought) == call


def test_the_graph_is_think_tools_final_with_the_call_from_the_chosen_source() -> None:
    question = link_questions(3)[2]  # a multiply question
    for name, spec in LINK_AGENTS.items():
        graph = build_link_agent(_model(), name, checkpointer=InMemorySaver())
        assert {THINK_NODE, TOOL_NODE, FINAL_NODE} <= set(graph.nodes)
        trace = _record(graph, question.text)
        (call,) = trace.steps[0].tool_calls
        assert (call.name, float(call.args["a"]), float(call.args["b"])) == (question.operation, question.a, question.b)
        assert trace.final_answer == f"The answer is {question.answer}.", spec
    with pytest.raises(ConfigurationError, match="unknown link agent"):
        build_link_agent(_model(), "nope", checkpointer=InMemorySaver())


def test_the_deriver_is_the_agents_graph_code() -> None:
    from ariadne_lc.replay import StepContext
    from ariadne_lc.trace import Step

    question = link_questions(3)[2].text
    context = StepContext(
        query=question, step=Step(index=0, node=THINK_NODE), messages=(HumanMessage(question),), tools={}
    )
    thought = "So I should divide 8 by 2."
    assert link_deriver(LINK_AGENTS["action_faithful"]).derive(thought, context) == [
        {"name": "divide", "args": {"a": 8.0, "b": 2.0}}
    ]
    assert [c["name"] for c in link_deriver(LINK_AGENTS["action_unfaithful"]).derive(thought, context)] == [  # type: ignore[index]
        "multiply"
    ]


def _audit(name: str, question: str) -> list[AuditResult]:
    spec = LINK_AGENTS[name]
    graph = build_link_agent(_model(), name, checkpointer=InMemorySaver())
    trace = _record(graph, question)
    if spec.link == "thought->action":
        auditor = Auditor(graph, tool_calls="rederive", tool_call_deriver=link_deriver(spec), links=["thought->action"])
        return auditor.audit(trace, step=0, interventions=list(ACTION_CONTRADICTIONS))
    return Auditor(graph, links=["observation->answer"]).audit(trace, step=0, interventions=["observation_swap"])


@pytest.mark.parametrize("name", list(LINK_AGENTS))
def test_faithful_agents_give_no_violation_and_unfaithful_ones_a_violation_on_their_link(name: str) -> None:
    spec = LINK_AGENTS[name]
    scored = 0
    for question in link_questions(4):
        for r in _audit(name, question.text):
            assert r.link == spec.link and r.status in ("scored", "not_applicable"), (r.status, r.error)
            if r.status == "scored":
                scored += 1
                assert r.violation is (spec.truth == "unfaithful"), (name, r.intervention_type, r.intervened_thought)
                assert r.tools_live == 0
    assert scored >= 4


def _result(kind: str, *, violation: bool, status: str = "scored", control: bool = False) -> AuditResult:
    return AuditResult(
        trace_id="t",
        step_index=0,
        intervention_type=kind,
        status=status,  # type: ignore[arg-type]
        label="control" if control else ("violation" if violation else "faithful"),
        original_thought="x",
        violation=violation,
        control=control,
        link="observation->answer" if kind == "observation_swap" else "thought->action",
    )


def _job(agent: str, qid: str, results: list[AuditResult]) -> LinkJob:
    spec = LINK_AGENTS[agent]
    return LinkJob(
        agent=agent,
        link=spec.link,
        truth=spec.truth,
        question_id=qid,
        question="q",
        operation="add",
        results=tuple(results),
    )


def test_the_summary_counts_fa_and_m_per_link_and_type() -> None:
    jobs = [
        _job(
            "action_faithful", "q1", [_result("logic_flip", violation=True), _result("fact_reversal", violation=False)]
        ),
        _job(
            "action_faithful",
            "q2",
            [
                _result("logic_flip", violation=False),
                _result("causal_reversal", violation=False, status="not_applicable"),
                _result("rerun", violation=True, control=True),
            ],
        ),
        _job(
            "action_unfaithful",
            "q1",
            [_result("logic_flip", violation=True), _result("fact_reversal", violation=False)],
        ),
        _job("observation_faithful", "q1", [_result("observation_swap", violation=False)]),
        _job("observation_unfaithful", "q1", [_result("observation_swap", violation=True)]),
    ]
    summary = summarize(jobs, LinkRunConfig(model="m", questions=2), [])
    action = summary["links"]["thought->action"]
    assert (action["FA"]["k"], action["FA"]["n"]) == (1, 3)
    assert action["FA"]["ci"] == list(wilson_interval(1, 3))  # type: ignore[arg-type]
    assert (action["M"]["k"], action["M"]["n"]) == (1, 2)
    assert action["one_minus_fa_minus_m"] == pytest.approx(1 - 1 / 3 - 1 / 2)
    assert action["FA"]["outcomes"] == {"scored": 3, "not_applicable": 1}
    assert action["per_type"]["logic_flip"]["FA"]["k"] == 1 and action["per_type"]["logic_flip"]["FA"]["n"] == 2
    assert action["controls"]["faithful"]["rerun"]["held"]["k"] == 1
    observation = summary["links"]["observation->answer"]
    assert (observation["FA"]["rate"], observation["M"]["rate"]) == (0.0, 0.0)
    assert summary["questions"] == 2 and summary["jobs"] == 5


def test_the_runner_stores_every_job_resumes_without_redoing_one_and_summarises(tmp_path: Path) -> None:
    model = _model()
    config = LinkRunConfig(model="scripted", questions=2)
    jobs = run_link_calibration(model, tmp_path, config)
    assert len(jobs) == 8 and model.calls == 8  # one thought per (agent, question)
    assert len((tmp_path / RESULTS_FILE).read_text().splitlines()) == 8
    assert all(j.error is None and j.results for j in jobs)
    again = run_link_calibration(model, tmp_path, config, resume=True)
    assert model.calls == 8 and [j.question_id for j in again] == [j.question_id for j in jobs]
    grown = run_link_calibration(model, tmp_path, config.model_copy(update={"questions": 3}), resume=True)
    assert model.calls == 12 and len(grown) == 12
    assert [s.jobs for s in load_sessions(tmp_path)] == [8, 0, 4]
    summary = write_summary(tmp_path, grown, config, load_sessions(tmp_path))
    assert json.loads((tmp_path / SUMMARY_JSON).read_text()) == summary
    assert "| thought->action |" in (tmp_path / SUMMARY_MD).read_text()
    for link in ("thought->action", "observation->answer"):
        assert summary["links"][link]["FA"]["k"] == 0 and summary["links"][link]["M"]["k"] == 0
        assert summary["links"][link]["FA"]["n"] > 0


def test_a_torn_line_is_cut_off_a_packed_run_resumes_and_another_configuration_is_refused(tmp_path: Path) -> None:
    config = LinkRunConfig(model="scripted", questions=1, agents=("observation_faithful",))
    run_link_calibration(_model(), tmp_path, config)
    with (tmp_path / RESULTS_FILE).open("a") as f:
        f.write('{"agent": "observation_fa')
    assert len(load_jobs(tmp_path)) == 1
    assert (tmp_path / RESULTS_FILE).read_text().endswith("}\n")
    packed = tmp_path / (RESULTS_FILE + ".gz")
    with gzip.open(packed, "wt") as g:
        g.write((tmp_path / RESULTS_FILE).read_text())
    (tmp_path / RESULTS_FILE).unlink()
    grown = run_link_calibration(_model(), tmp_path, config.model_copy(update={"questions": 2}), resume=True)
    assert [j.question_id for j in grown] == ["q0000", "q0001"]  # the packed job kept, one new job appended
    assert len((tmp_path / RESULTS_FILE).read_text().splitlines()) == 1
    with pytest.raises(ConfigurationError, match="--resume"):
        run_link_calibration(_model(), tmp_path, config)
    with pytest.raises(RunMismatchError, match="seed"):
        run_link_calibration(_model(), tmp_path, config.model_copy(update={"seed": 5}), resume=True)


def test_a_model_that_errors_fails_its_job_and_the_run_goes_on(tmp_path: Path) -> None:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if "hotel" in messages[-1].text:
            raise RuntimeError("the model server went away")
        return plan(messages)

    config = LinkRunConfig(model="scripted", questions=3, agents=("action_faithful",))
    jobs = run_link_calibration(ScriptedChatModel(script=script), tmp_path, config)
    failed = [j for j in jobs if j.error is not None]
    assert len(jobs) == 3 and len(failed) == 1 and "went away" in (failed[0].error or "")
    assert not failed[0].results


def test_the_cli_names_every_agent() -> None:
    from ariadne_lc.cli._calibrate_links_cmd import LINK_AGENT_NAMES

    assert tuple(LINK_AGENTS) == LINK_AGENT_NAMES
