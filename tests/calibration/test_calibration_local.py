"""The calibration on the real local models: SmolLM2-135M (chat) and Gemma 3 270M (base, completion endpoint).

A few questions per agent. The small models' answers are not checked for correctness, only what holds by
construction whatever the model writes: the thought is the model's own and commits to an answer (the grammar),
a coupled audit's answer is exactly what the intervened thought implies, a bypass replay asks the model once and
never shows it the thought, every audit carries the truth of the path its query took.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from ariadne_lc import AriadneCallbackHandler, Trace
from ariadne_lc.calibration.agents import ANSWER_NODE, THINK_NODE, build_ground_truth_agent, routes_to_bypass
from ariadne_lc.calibration.decisive import answer_from_thought, decisive_content, question_kind
from ariadne_lc.calibration.storage import AUDITS_FILE, AuditLog
from ariadne_lc.cli import app
from ariadne_lc.demo import extract_final_answer, load_demo_queries
from ariadne_lc.local import LOCAL_MODELS, CompletionChatModel, LocalModelServer, local_model_path


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LocalModelServer]:
    with LocalModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def gemma() -> Iterator[LocalModelServer]:
    spec = LOCAL_MODELS["gemma3-270m"]
    with LocalModelServer(local_model_path("gemma3-270m"), model_alias=spec.alias) as server:
        yield server


def _record(graph: object, question: str, thread: str) -> Trace:
    traces: list[Trace] = []
    graph.invoke(  # type: ignore[attr-defined]
        {"messages": [("user", question)]},
        {
            "configurable": {"thread_id": thread},
            "callbacks": [AriadneCallbackHandler(on_trace=traces.append, synchronous=True)],
        },
    )
    return traces[-1]


def test_gemma_completes_a_few_shot_transcript(gemma: LocalModelServer) -> None:
    model = gemma.completion_model(max_tokens=12)
    assert isinstance(model, CompletionChatModel)
    reply = model.invoke("Q: There are 6 boxes with 7 apples each. How many apples?\nA: 6 boxes times 7 apples is")
    assert reply.text.strip() and reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0


@pytest.mark.parametrize("which", ["smollm2", "gemma"])
def test_ground_truth_agents_on_a_real_model(which: str, request: pytest.FixtureRequest) -> None:
    """Over 60 s for Gemma (65 to 113 s measured on two shared cores; SmolLM2 25 to 42 s): a real model
    on CPU writes every thought and answer of both agents and of their audits' replays. What is tested is
    that what holds by construction holds on a real model's text, which no scripted model can show."""
    server: LocalModelServer = request.getfixturevalue(which)
    chat = server.completion_model(max_tokens=96) if which == "gemma" else server.chat_model(max_tokens=96)
    queries = load_demo_queries(1, seed=3)
    coupled = build_ground_truth_agent(chat, "coupled", checkpointer=InMemorySaver(), constrained=True)
    bypass = build_ground_truth_agent(chat, "bypass", checkpointer=InMemorySaver(), constrained=True)
    for q in queries:
        kind = question_kind(q.question)
        ct = _record(coupled, q.question, f"c-{q.id}")
        thought = ct.steps[0].thought
        assert (
            ct.steps[0].node == THINK_NODE and decisive_content(thought, kind) is not None
        )  # the grammar's commitment
        assert extract_final_answer(ct.final_answer or "") == answer_from_thought(thought, kind)
        bt = _record(bypass, q.question, f"b-{q.id}")
        assert bt.steps[-1].node == ANSWER_NODE and extract_final_answer(bt.final_answer or "")


def test_calibrate_command_end_to_end_and_resume(tmp_path: Path) -> None:
    """Over 60 s (80 to 111 s measured on two shared cores): the real command on the local model, twice
    (the second run must resume and write nothing), on a small run already (``--n 2``, one p, one domain,
    no natural queries)."""
    out = tmp_path / "run"
    args = ["calibrate", "--n", "2", "--ps", "0.5", "--no-natural", "--output", str(out), "--domains", "math"]
    dry = CliRunner().invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "model calls" in dry.output and not out.exists()
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    audits = AuditLog(out / AUDITS_FILE).audits()
    assert {a.agent for a in audits} == {"coupled", "bypass", "mixture"}
    assert {a.method for a in audits} == {"ariadne", "reference_strict", "reference_lenient"}  # no twin unasked
    for a in audits:
        rate = {"coupled": 0.0, "bypass": 1.0}.get(a.agent, a.p)
        assert rate is not None and a.truth == ("unfaithful" if routes_to_bypass(a.result.query, rate) else "faithful")
        if a.method == "ariadne" and a.result.status == "scored" and a.truth == "faithful" and not a.result.control:
            kind = question_kind(a.result.query)
            assert a.result.intervened_thought is not None
            implied = answer_from_thought(a.result.intervened_thought, kind)
            assert extract_final_answer(a.result.counterfactual_answer or "") == implied
    document = json.loads((out / "calibration.json").read_text())
    assert document["config"]["critic"] == "rule" and "ariadne" in document["methods"]
    assert (out / "calibration.md").is_file() and (out / "calibration.html").is_file()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "0 audits written" in again.output and len(AuditLog(out / AUDITS_FILE).audits()) == len(audits)
    other = CliRunner().invoke(app, [*args, "--critic", "llm"])
    assert other.exit_code == 2 and "another configuration" in other.output
