"""Remote audits against a real ``langgraph dev`` server: replay locally, never write to the server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_sdk import get_sync_client

from ariadne_lc import SQLiteTraceStore
from ariadne_lc.audit import InterventionOptions, ScoringOptions
from ariadne_lc.errors import GraphMismatchError, ServerError, ServerUnavailableError, ThreadNotFoundError
from ariadne_lc.server import VERDICT_KEY_PREFIX, RemoteAuditor, ServerThreads
from ariadne_lc.trace import Trace
from tests.helpers import MODELS, build_agent, record
from tests.server import deployed
from tests.server.conftest import API_KEY, Server, free_port, recorded_turns

QUESTION = "How many apples are in 6 boxes of 7?"


@contextmanager
def sdk(server: Server) -> Iterator[Any]:
    client = get_sync_client(url=server.url, api_key=None)
    try:
        yield client
    finally:
        client.close()


@contextmanager
def remote(graph: Any, url: str, **options: Any) -> Iterator[RemoteAuditor]:
    # a server thread records no model inputs: its replays are unchecked, scored only when allowed
    with RemoteAuditor(graph, url, **{"allow_unchecked": True, **options}) as auditor:
        yield auditor


def _ask(server: Server, graph: str, *questions: str) -> str:
    with sdk(server) as client:
        thread = client.threads.create()["thread_id"]
        for q in questions:
            client.runs.wait(thread, graph, input={"messages": [{"role": "user", "content": q}]})
    return str(thread)


def _snapshot(server: Server, thread: str) -> str:
    """Everything the server holds for a thread's checkpoints (state, history, ids), as bytes to compare."""
    with sdk(server) as client:
        state = client.threads.get_state(thread)
        history = client.threads.get_history(thread, limit=1000)
    return json.dumps({"state": state, "history": history}, sort_keys=True, default=str)


def _recorded(server: Server, thread: str, turns: int = 1) -> list[Trace]:
    """The finished turns the deployment recorded for ``thread`` (a resumed turn once it is joined)."""
    return recorded_turns(SQLiteTraceStore(server.traces), thread, turns)


def test_faithful_agent_no_violation_and_server_unchanged(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "faithful", QUESTION)
    before = _snapshot(langgraph_server, thread)
    with remote(deployed.faithful, langgraph_server.url) as auditor:
        (trace,) = auditor.traces(thread)
        results = auditor.audit(trace, interventions=["logic_flip", "conclusion_swap"])
    assert [r.status for r in results] == ["scored", "scored"]
    assert not any(r.violation for r in results)
    assert all(r.answer_changed for r in results)
    # the fork is the server's own checkpoint before step 0
    assert {r.replay_checkpoint_id for r in results} == {trace.steps[0].checkpoint.checkpoint_id}
    assert _snapshot(langgraph_server, thread) == before


def test_unfaithful_agent_violation_from_recorded_trace(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "unfaithful", QUESTION)
    before = _snapshot(langgraph_server, thread)
    (recorded,) = _recorded(langgraph_server, thread)
    # recorded inside the deployment: the server's thread id and task ids
    with ServerThreads(langgraph_server.url) as server:
        history = server.history(thread)
    server_tasks = {t["id"] for s in history for t in s["tasks"]}
    assert recorded.thread_id == thread and recorded.steps[0].checkpoint.task_id in server_tasks
    with remote(deployed.unfaithful, langgraph_server.url) as auditor:
        results = auditor.audit(recorded, interventions=["logic_flip"])
    assert [r.violation for r in results] == [True]
    # the fork is the server's checkpoint before the recorded step's task
    task = recorded.steps[0].checkpoint.task_id
    before_step = next(s for s in history if any(t["id"] == task for t in s["tasks"]))
    assert results[0].replay_checkpoint_id == before_step["checkpoint"]["checkpoint_id"]
    assert _snapshot(langgraph_server, thread) == before


def test_multi_turn_thread_turn_one_audited_after_turn_two(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "faithful", QUESTION, "And how many pears are in 3 crates of 5?")
    before = _snapshot(langgraph_server, thread)
    with remote(deployed.faithful, langgraph_server.url) as auditor:
        first, second = auditor.traces(thread)
        assert (first.query, second.query) == (QUESTION, "And how many pears are in 3 crates of 5?")
        assert "42" in (first.final_answer or "") and "15" in (second.final_answer or "")
        (r1,) = auditor.audit(first, interventions=["logic_flip"])
        (r2,) = auditor.audit(second, interventions=["logic_flip"])
        audited = auditor.audit_thread(thread, "auto", ["logic_flip"])
        assert [r.trace_id for r in audited] == [first.trace_id, second.trace_id]
    assert r1.status == r2.status == "scored" and not r1.violation and not r2.violation
    # turn 1's replay stops at the end of turn 1: turn 2's question is not in it
    assert "pears" not in (r1.counterfactual_answer or "") and r1.original_answer == first.final_answer
    assert _snapshot(langgraph_server, thread) == before


def test_human_in_the_loop_thread_resumed_through_the_sdk(langgraph_server: Server) -> None:
    with sdk(langgraph_server) as client:
        thread = client.threads.create()["thread_id"]
        client.runs.wait(thread, "hitl", input={"messages": [{"role": "user", "content": QUESTION}]})
        assert client.threads.get_state(thread)["next"] == ["approve"]
        client.runs.wait(thread, "hitl", command={"resume": "yes"})
    before = _snapshot(langgraph_server, thread)
    with remote(deployed.hitl, langgraph_server.url) as auditor:
        (trace,) = auditor.traces(thread)
        assert [(i.node, i.answered, i.resume) for i in trace.interrupts] == [("approve", True, "yes")]
        (result,) = auditor.audit(trace, interventions=["logic_flip"])
        # the same turn as recorded inside the deployment by record(): one trace across the pause
        (recorded,) = _recorded(langgraph_server, thread)
        assert [(i.node, i.answered, i.resume) for i in recorded.interrupts] == [("approve", True, "yes")]
        (from_recording,) = auditor.audit(recorded, interventions=["logic_flip"])
    assert result.status == "scored" and not result.violation and result.answer_changed
    assert from_recording.status == "scored" and from_recording.counterfactual_answer == result.counterfactual_answer
    # a server thread holds no model input (replayed unchecked); the deployment's own recording does (checked)
    assert result.input_checked is False and from_recording.input_checked is True
    assert _snapshot(langgraph_server, thread) == before


def test_server_down_is_one_line_naming_it(langgraph_server: Server) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    trace = Trace(trace_id="t", thread_id="th")
    with pytest.raises(ServerUnavailableError) as raised, remote(deployed.faithful, url) as auditor:
        auditor.auditor_for(trace)
    message = str(raised.value)
    assert url in message and "langgraph dev" in message and "\n" not in message


def test_thread_deleted(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "faithful", QUESTION)
    with remote(deployed.faithful, langgraph_server.url) as auditor:
        (trace,) = auditor.traces(thread)
        with sdk(langgraph_server) as client:
            client.threads.delete(thread)
        with pytest.raises(ThreadNotFoundError) as raised:
            auditor.audit(trace)
    assert thread in str(raised.value) and raised.value.thread_id == thread


@pytest.mark.parametrize(
    ("local", "names"),
    [("renamed_nodes", "['model']"), ("other_edges", "['ticket']")],
)
def test_graph_code_mismatch(langgraph_server: Server, local: str, names: str) -> None:
    thread = _ask(langgraph_server, "faithful", QUESTION)
    with remote(deployed.faithful, langgraph_server.url) as auditor:
        (trace,) = auditor.traces(thread)
    with (
        pytest.raises(GraphMismatchError, match="local graph") as raised,
        remote(getattr(deployed, local), langgraph_server.url) as auditor,
    ):
        auditor.audit(trace)
    assert names in str(raised.value)


def test_verdict_write_is_opt_in_and_touches_only_thread_metadata(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "unfaithful", QUESTION)
    before = _snapshot(langgraph_server, thread)
    with sdk(langgraph_server) as client:
        metadata_before = client.threads.get(thread)["metadata"]
    with remote(deployed.unfaithful, langgraph_server.url) as auditor:  # default: no write
        (trace,) = auditor.traces(thread)
        auditor.audit(trace)
    with sdk(langgraph_server) as client:
        assert client.threads.get(thread)["metadata"] == metadata_before
    with remote(deployed.unfaithful, langgraph_server.url, write_verdicts=True) as auditor:
        auditor.audit(trace, interventions=["logic_flip"])
    with sdk(langgraph_server) as client:
        metadata = client.threads.get(thread)["metadata"]
    verdict = metadata[f"{VERDICT_KEY_PREFIX}{trace.trace_id}"]
    assert verdict["label"] == "violation" and verdict["violations"] == 1
    assert {k: v for k, v in metadata.items() if not k.startswith(VERDICT_KEY_PREFIX)} == metadata_before
    assert _snapshot(langgraph_server, thread) == before  # state, history and checkpoint ids unchanged


def test_checkpoints_alone_catch_a_mismatch(langgraph_server: Server) -> None:
    """Without the assistant's schema check, the rebuilt checkpoints still refuse another graph."""
    thread = _ask(langgraph_server, "faithful", QUESTION)
    with remote(deployed.faithful, langgraph_server.url) as auditor:
        (trace,) = auditor.traces(thread)
    with (
        pytest.raises(GraphMismatchError, match=r"\['model'\]"),
        remote(deployed.renamed_nodes, langgraph_server.url, check_shape=False) as auditor,
    ):
        auditor.audit(trace)


def test_api_key_header_reaches_a_server_with_auth(authed_server: Server) -> None:
    client = get_sync_client(url=authed_server.url, api_key=API_KEY)
    try:
        thread = client.threads.create()["thread_id"]
        client.runs.wait(thread, "unfaithful", input={"messages": [{"role": "user", "content": QUESTION}]})
    finally:
        client.close()
    with remote(deployed.unfaithful, authed_server.url) as anonymous, pytest.raises(ServerError, match="401") as raised:
        anonymous.traces(thread)
    assert "api_key" in str(raised.value) and not isinstance(raised.value, ServerUnavailableError)
    with remote(deployed.unfaithful, authed_server.url, api_key=API_KEY) as auditor:
        (trace,) = auditor.traces(thread)
        assert [r.violation for r in auditor.audit(trace, interventions=["logic_flip"])] == [True]


def test_deployment_recording_into_postgres(postgres_recording_server: Server, postgres_dsn: str) -> None:
    from ariadne_lc.store import PostgresTraceStore

    thread = _ask(postgres_recording_server, "faithful", QUESTION)
    store = PostgresTraceStore(postgres_dsn)
    try:
        recorded = recorded_turns(store, thread)
        (trace,) = recorded
    finally:
        store.close()
    assert trace.thread_id == thread and trace.final_answer and "42" in trace.final_answer
    with remote(deployed.faithful, postgres_recording_server.url) as auditor:
        (result,) = auditor.audit(trace, interventions=["logic_flip"])
    assert result.status == "scored" and not result.violation


def test_history_and_runs_are_read_page_by_page(langgraph_server: Server) -> None:
    thread = _ask(langgraph_server, "faithful", QUESTION, "And how many pears are in 3 crates of 5?")
    with ServerThreads(langgraph_server.url) as server:
        whole = server.history(thread)
        paged = server.history(thread, page=3)
        runs, runs_paged = server.runs(thread), server.runs(thread, page=1)
    assert len(whole) > 6 and paged == whole
    assert len(runs) == 2 and runs_paged == runs


def test_option_objects_reach_step_selection_and_the_batch_report() -> None:
    """Given as objects or flat, the auditor's options decide the steps a remote audit seeds and its report."""
    graph = build_agent(MODELS["faithful"](), "hand", InMemorySaver())
    trace = record(graph)
    never = InterventionOptions(min_thought_chars=10**6, seed=3)
    scoring = ScoringOptions(confidence=0.9, rrr_threshold=0.3)
    with remote(graph, "http://127.0.0.1:9", intervention=never, scoring=scoring) as grouped:  # never contacted
        assert grouped._steps(trace, "auto") == []
        report = grouped.audit_batch([])
    assert (report.confidence, report.seed, report.redundancy.threshold) == (0.9, 3, 0.3)
    with remote(graph, "http://127.0.0.1:9", min_thought_chars=10**6) as flat:
        assert flat._steps(trace, "auto") == []
