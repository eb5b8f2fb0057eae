"""Score write-back: the records, the protocol, and the Langfuse / LangSmith writers.

Langfuse and LangSmith cannot run here, so their writers are tested against loopback stand-ins that
record what the real client libraries send: the request shapes are checked, not the servers' answers.
The Phoenix writer runs against a real Phoenix in ``test_phoenix.py``.
"""

from __future__ import annotations

import base64
import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanContext, TraceFlags

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.export import (
    LangfuseScoreWriter,
    LangSmithScoreWriter,
    PhoenixScoreWriter,
    Score,
    ScoreTarget,
    ScoreWriter,
    WriteBackError,
)
from tests.export.backends import Recorded, RecordingServer, recording_server

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
TARGET = ScoreTarget(TRACE_ID, SPAN_ID)


# ------------------------------------------------------------------------------------------- records


@pytest.mark.parametrize(
    ("trace_id", "span_id"),
    [
        ("4BF92F3577B34DA6A3CE929D0E0E4736", SPAN_ID),  # upper case
        (TRACE_ID[:-1], SPAN_ID),
        ("0" * 32, SPAN_ID),
        (TRACE_ID, "0" * 16),
        (TRACE_ID, "xyz"),
    ],
)
def test_target_ids_are_validated(trace_id: str, span_id: str) -> None:
    with pytest.raises(ConfigurationError):
        ScoreTarget(trace_id, span_id)


def test_target_from_span_context() -> None:
    context = SpanContext(int(TRACE_ID, 16), int(SPAN_ID, 16), is_remote=False, trace_flags=TraceFlags(1))
    run_id = uuid.uuid4()
    assert ScoreTarget.from_span_context(context, run_id=run_id) == ScoreTarget(TRACE_ID, SPAN_ID, run_id)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": ""},
        {"name": "causal_faithfulness"},  # neither value nor label
        {"name": "causal_faithfulness", "value": math.nan},
        {"name": "causal_faithfulness", "value": math.inf},
    ],
)
def test_scores_are_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        Score(**kwargs)


def test_target_from_a_recorded_span_ref() -> None:
    from ariadne_lc.trace import SpanRef

    assert ScoreTarget.from_span_ref(SpanRef(trace_id=TRACE_ID, span_id=SPAN_ID)) == TARGET
    with pytest.raises(ConfigurationError, match="the trace has no agent span"):
        ScoreTarget.from_span_ref(None)  # a trace recorded with no span: said, not an AttributeError


def test_score_from_an_audit_result() -> None:
    from ariadne_lc import AuditResult

    result = AuditResult(
        trace_id="run-1",
        step_index=2,
        intervention_type="logic_flip",
        status="scored",
        label="violation",
        original_thought="6 boxes of 7, so multiply",
        explanation="the answer ignored the contradiction",
        phi=0.05,
        violation=True,
        strength=0.8,
    )
    score = Score.from_audit_result(result)
    assert (score.name, score.value, score.label, score.key) == (
        "causal_faithfulness",
        0.05,
        "violation",
        "logic_flip/2",
    )
    assert score.explanation is None  # content: only when the caller passes it
    assert score.metadata == {
        "intervention": "logic_flip",
        "step": 2,
        "violation": True,
        "status": "scored",
        "link": "thought->answer",
        "strength": 0.8,
    }
    inconclusive = Score.from_audit_result(result.model_copy(update={"phi": None, "label": "inconclusive"}))
    assert (inconclusive.value, inconclusive.label) == (None, "inconclusive")


def test_inconclusive_score_has_a_label_and_no_value() -> None:
    assert Score("causal_faithfulness", label="inconclusive").value is None


def test_stable_id_depends_on_target_name_and_key() -> None:
    score = Score("causal_faithfulness", 0.2, key="logic_flip/1")
    assert score.stable_id(TARGET) == Score("causal_faithfulness", 0.9, key="logic_flip/1").stable_id(TARGET)
    assert score.stable_id(TARGET) != Score("causal_faithfulness", 0.2, key="logic_flip/2").stable_id(TARGET)
    other = ScoreTarget(TRACE_ID, "00f067aa0ba902b8")
    assert score.stable_id(TARGET) != score.stable_id(other)


def test_writers_satisfy_the_protocol() -> None:
    client: Any = object()  # the writers only touch their client when writing
    writers: list[PhoenixScoreWriter | LangfuseScoreWriter | LangSmithScoreWriter] = [
        PhoenixScoreWriter(client),
        LangfuseScoreWriter(client),
        LangSmithScoreWriter(client),
    ]
    assert all(isinstance(writer, ScoreWriter) for writer in writers)
    assert [writer.backend for writer in writers] == ["phoenix", "langfuse", "langsmith"]


def test_unexpected_client_failures_become_write_back_errors() -> None:
    client: Any = object()  # has none of the methods the writers call
    for writer in (PhoenixScoreWriter(client), LangfuseScoreWriter(client), LangSmithScoreWriter(client)):
        with pytest.raises(WriteBackError) as caught:
            writer.write(TARGET, Score("causal_faithfulness", 0.5))
        assert not caught.value.retryable
        assert isinstance(caught.value.__cause__, AttributeError)


# ------------------------------------------------------------------------------------------- Langfuse


def _langfuse_api(request: Recorded) -> tuple[int, Any]:
    if request.path.startswith("/api/public/scores"):
        return 200, {"accepted": len(request.json()), "rejected": 0, "errors": []}
    return 200, {}


@pytest.fixture
def langfuse_api() -> Iterator[RecordingServer]:
    with recording_server(_langfuse_api) as server:
        yield server


def _sent_scores(server: RecordingServer) -> list[dict[str, Any]]:
    scores: list[dict[str, Any]] = []
    for request in server.find("POST", "/api/public/scores"):
        body = request.json()
        scores.extend(body if isinstance(body, list) else body.get("scores", body.get("batch", [body])))
    return scores


def test_langfuse_numeric_score_on_the_observation(langfuse_api: RecordingServer) -> None:
    global_provider = trace.get_tracer_provider()
    writer = LangfuseScoreWriter(public_key="pk-lf-test", secret_key="sk-lf-test", base_url=langfuse_api.url)
    assert trace.get_tracer_provider() is global_provider, "the writer must not install a global provider"

    writer.write(
        TARGET,
        Score(
            "causal_faithfulness",
            0.25,
            "violation",
            "answer unchanged",
            {"intervention": "logic_flip", "step": 1},
            key="logic_flip/1",
        ),
    )
    writer.flush()

    (request,) = langfuse_api.find("POST", "/api/public/scores")
    assert request.headers["authorization"] == "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
    (sent,) = _sent_scores(langfuse_api)
    assert sent["name"] == "causal_faithfulness"
    assert sent["value"] == 0.25
    assert sent["dataType"] == "NUMERIC"
    assert sent["traceId"] == TRACE_ID
    assert sent["observationId"] == SPAN_ID
    assert sent["comment"] == "violation: answer unchanged"
    assert sent["metadata"] == {"intervention": "logic_flip", "step": 1, "label": "violation"}
    assert sent["id"] == Score("causal_faithfulness", 0.25, key="logic_flip/1").stable_id(TARGET).hex


def test_langfuse_label_only_score_is_categorical(langfuse_api: RecordingServer) -> None:
    writer = LangfuseScoreWriter(public_key="pk-lf-test2", secret_key="sk-lf-test2", base_url=langfuse_api.url)
    writer.write(TARGET, Score("causal_faithfulness", label="inconclusive"))
    writer.flush()
    (sent,) = _sent_scores(langfuse_api)
    assert (sent["value"], sent["dataType"]) == ("inconclusive", "CATEGORICAL")
    assert "id" in sent  # generated by the SDK when no key is given


def test_langfuse_writer_takes_a_client_or_keys_not_both() -> None:
    with pytest.raises(ConfigurationError):
        LangfuseScoreWriter(object(), public_key="pk")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ LangSmith

PROJECT_ID = uuid.UUID("0b7e4e2c-38f5-4a5f-8b1d-0d9e2f1f6a10")


def _langsmith_api(status: int = 200) -> Any:
    def respond(request: Recorded) -> tuple[int, Any]:
        if request.path.startswith("/info"):
            return 200, {"version": "0.10.0", "instance_flags": {}}
        if request.path.startswith("/feedback"):
            return status, {"id": str(uuid.uuid4())} if status < 400 else {"detail": "nope"}
        return 404, {"detail": "not found"}

    return respond


def _langsmith_client(url: str) -> Any:
    import langsmith
    from urllib3.util.retry import Retry

    # No transport-level retries: the writer's stop_after_attempt is what is under test, and urllib3's
    # default backoff on 429/5xx/refused connections would only make the tests slow.
    return langsmith.Client(api_url=url, api_key="lsv2-test", auto_batch_tracing=False, retry_config=Retry(total=0))


def test_langsmith_feedback_on_the_run_derived_from_the_span_id() -> None:
    from langsmith.integrations.otel import langsmith_run_id_from_otel_span_id

    with recording_server(_langsmith_api()) as server:
        writer = LangSmithScoreWriter(_langsmith_client(server.url), project_id=PROJECT_ID)
        writer.write(TARGET, Score("causal_faithfulness", 0.25, "violation", "answer unchanged", {"step": 1}, key="k"))
    (request,) = server.find("POST", "/feedback")
    sent = request.json()
    assert sent["run_id"] == str(langsmith_run_id_from_otel_span_id(int(SPAN_ID, 16)))
    assert sent["run_id"].replace("-", "").endswith(SPAN_ID)
    assert sent["key"] == "causal_faithfulness"
    assert sent["score"] == 0.25
    assert sent["value"] == "violation"
    assert sent["comment"] == "answer unchanged"
    assert sent["extra"] == {"step": 1}
    assert sent["session_id"] == str(PROJECT_ID)
    assert sent["id"] == str(Score("causal_faithfulness", 0.25, key="k").stable_id(TARGET))


def test_langsmith_feedback_uses_the_langchain_run_id_when_given() -> None:
    run_id = uuid.uuid4()
    with recording_server(_langsmith_api()) as server:
        LangSmithScoreWriter(_langsmith_client(server.url), project_id=PROJECT_ID).write(
            ScoreTarget(TRACE_ID, SPAN_ID, run_id), Score("causal_faithfulness", label="inconclusive")
        )
    (request,) = server.find("POST", "/feedback")
    assert request.json()["run_id"] == str(run_id)
    assert "score" not in request.json()


@pytest.mark.parametrize(("status", "retryable"), [(503, True), (429, True), (400, False), (401, False)])
def test_langsmith_errors_become_write_back_errors(status: int, retryable: bool) -> None:
    with recording_server(_langsmith_api(status)) as server:
        writer = LangSmithScoreWriter(_langsmith_client(server.url), project_id=PROJECT_ID, stop_after_attempt=1)
        with pytest.raises(WriteBackError) as caught:
            writer.write(TARGET, Score("causal_faithfulness", 0.5))
    assert caught.value.backend == "langsmith"
    assert caught.value.retryable is retryable


def test_langsmith_unreachable_is_retryable() -> None:
    writer = LangSmithScoreWriter(_langsmith_client("http://127.0.0.1:9"), project_id=PROJECT_ID, stop_after_attempt=1)
    with pytest.raises(WriteBackError) as caught:
        writer.write(TARGET, Score("causal_faithfulness", 0.5))
    assert caught.value.retryable


def test_langsmith_attempts_must_be_positive() -> None:
    with pytest.raises(ConfigurationError):
        LangSmithScoreWriter(object(), stop_after_attempt=0)  # type: ignore[arg-type]


class _Kept:
    """A writer that keeps what it is given: the write-back's logic, apart from any backend."""

    def __init__(self) -> None:
        self.written: list[tuple[ScoreTarget, Score]] = []

    def write(self, target: ScoreTarget, score: Score) -> None:
        self.written.append((target, score))


def test_a_supervisors_workers_split_at_audit_time_are_written_back_onto_the_recorded_trace_span() -> None:
    """A supervisor recorded whole is one trace; its worker's run is split from it when audited (``<trace id>~1``), and
    its per-link scores go where the auditor's own write-back puts them: on the recorded trace's span."""
    from langgraph.checkpoint.memory import InMemorySaver

    from ariadne_lc import Auditor
    from ariadne_lc.export import link_scores, write_back
    from ariadne_lc.trace import SpanRef
    from tests.harness_agents import run_supervisor

    graph, traces = run_supervisor(InMemorySaver(), recorder="record")
    results = Auditor(graph).audit_batch(traces).results
    assert any("~" in r.trace_id for r in results) and all("~" not in t.trace_id for t in traces)
    spans = {t.trace_id: SpanRef(trace_id=f"{i + 1:032x}", span_id=f"{i + 1:016x}") for i, t in enumerate(traces)}
    kept = _Kept()

    summary = write_back(results, spans, [kept])

    assert summary.no_span == 0 and summary.failed == 0 and summary.written == len(link_scores(results))
    by_run = {s.metadata["result_ids"][0]: target for target, s in kept.written}
    for r in results:
        if r.result_id in by_run:
            assert by_run[r.result_id].span_id == spans[r.trace_id.split("~")[0]].span_id
    agents = {r.agent_name for r in results if r.result_id in by_run}
    assert {"supervisor", "shopper"} <= agents
