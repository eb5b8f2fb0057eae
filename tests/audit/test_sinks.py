"""One result path: every record goes to the auditor's sinks, in order, and a failing sink loses nothing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider

from ariadne_lc import Auditor, ConfigurationError, InMemoryResultStore, Trace
from ariadne_lc.audit import AuditSink, FinishedAudit, ResultStoreSink, ScoreWriteBackSink, SpanSink
from ariadne_lc.export.writeback import Score, ScoreTarget, WriteBackError
from ariadne_lc.otel import AuditSpans
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import SpanRef
from tests.helpers import MODELS, build_agent, record


class Collect:
    def __init__(self) -> None:
        self.seen: list[FinishedAudit] = []
        self.span_open: list[bool] = []

    def accept(self, finished: FinishedAudit) -> None:
        self.seen.append(finished)
        self.span_open.append(finished.span is not None and finished.span.is_recording())


class Explode:
    def accept(self, finished: FinishedAudit) -> None:
        raise RuntimeError("sink down")


class FailingWriter:
    def __init__(self) -> None:
        self.calls = 0

    def write(self, target: ScoreTarget, score: Score) -> None:
        self.calls += 1
        raise WriteBackError("test", "backend down", retryable=True)


def _graph() -> Any:
    return build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())


def test_default_sinks_follow_the_convenience_arguments() -> None:
    graph = _graph()
    extra = Collect()
    auditor = Auditor(graph, result_store=InMemoryResultStore(), score_writers=[FailingWriter()], sinks=[extra])
    assert [type(s) for s in auditor.sinks] == [SpanSink, ResultStoreSink, ScoreWriteBackSink, Collect]
    assert [type(s) for s in Auditor(graph).sinks] == [SpanSink]
    with pytest.raises(ConfigurationError, match="accept"):
        Auditor(graph, sinks=[object()])  # type: ignore[list-item]


def test_each_record_reaches_every_sink_with_its_open_span(spans: tuple[TracerProvider, Any]) -> None:
    provider, exporter = spans
    graph = _graph()
    trace = record(graph)
    first, second = Collect(), Collect()
    store = InMemoryResultStore()
    auditor = Auditor(graph, tracer_provider=provider, result_store=store, sinks=[first, Explode(), second])
    results = auditor.audit(trace, interventions=["logic_flip", "paraphrase"])
    # the exploding sink between them lost nothing: the later sink, the store and the caller all have everything
    assert [f.result for f in first.seen] == [f.result for f in second.seen] == results
    assert store.list_results(trace_id=trace.trace_id) == results
    assert all(f.trace is trace for f in first.seen) and first.span_open == [True, True]
    finished = exporter.get_finished_spans()
    audit_spans = [s for s in finished if s.name == "evaluation causal_faithfulness"]
    assert len(audit_spans) == 2 and all(s.attributes and "ariadne.status" in s.attributes for s in audit_spans)


async def test_unauditable_traces_reach_the_sinks_without_a_span() -> None:
    graph = _graph()
    good = record(graph)
    broken = good.model_copy(update={"trace_id": "broken", "final_answer": None})
    sink = Collect()
    report = await Auditor(graph, sinks=[sink]).aaudit_batch([good, broken], interventions=["logic_flip"])
    assert {f.result.result_id for f in sink.seen} == {r.result_id for r in report.results}
    (unauditable,) = [f for f in sink.seen if f.result.trace_id == "broken"]
    assert unauditable.span is None and unauditable.result.error_type == "TraceError"


def test_with_sinks_runs_the_same_audit_into_other_sinks() -> None:
    graph = _graph()
    trace = record(graph)
    store = InMemoryResultStore()
    auditor = Auditor(graph, result_store=store)
    mine = Collect()
    other = auditor.with_sinks([*(s for s in auditor.sinks if not isinstance(s, ResultStoreSink)), mine])
    (result,) = other.audit(trace, interventions=["logic_flip"])
    assert result.violation and [f.result for f in mine.seen] == [result]
    assert store.list_results() == []  # the store was dropped from the copy...
    assert [type(s) for s in auditor.sinks] == [SpanSink, ResultStoreSink]  # ...and kept by the original
    (again,) = auditor.audit(trace, interventions=["logic_flip"])
    assert store.list_results() == [again]
    with pytest.raises(ConfigurationError, match="accept"):
        auditor.with_sinks([lambda finished: None])  # type: ignore[list-item]


def test_write_back_failures_are_counted_exactly_across_threads() -> None:
    writer = FailingWriter()
    sink = ScoreWriteBackSink([writer], AuditSpans(TracerProvider()))
    trace = Trace(trace_id="t", final_answer="42", span=SpanRef(trace_id="1" * 32, span_id="2" * 16))
    result = AuditResult(
        trace_id="t", step_index=0, intervention_type="logic_flip", status="scored", label="violation",
        original_thought="x", phi=0.0, similarity=1.0,
    )  # fmt: skip
    start = threading.Barrier(8)

    def hammer() -> None:
        start.wait()
        for _ in range(250):
            sink.accept(FinishedAudit(result, trace, None))

    with ThreadPoolExecutor(8) as pool:
        for f in [pool.submit(hammer) for _ in range(8)]:
            f.result()
    assert writer.calls == sink.errors == 2000


def test_write_back_skips_controls_failures_and_traces_without_a_span() -> None:
    writer = FailingWriter()
    sink = ScoreWriteBackSink([writer], AuditSpans(TracerProvider()))
    spanned = Trace(trace_id="t", final_answer="42", span=SpanRef(trace_id="1" * 32, span_id="2" * 16))
    base = AuditResult(
        trace_id="t", step_index=0, intervention_type="logic_flip", status="scored", label="violation",
        original_thought="x", phi=0.0, similarity=1.0,
    )  # fmt: skip
    sink.accept(FinishedAudit(base.model_copy(update={"control": True}), spanned, None))
    sink.accept(FinishedAudit(base.model_copy(update={"status": "failed"}), spanned, None))
    sink.accept(FinishedAudit(base, spanned.model_copy(update={"span": None}), None))
    assert writer.calls == 0
    sink.accept(FinishedAudit(base, spanned, None))
    assert writer.calls == 1 and sink.errors == 1


def test_auditor_counts_write_back_errors_of_a_batch() -> None:
    graph = _graph()
    store_traces = [record(graph, thread_id=f"w-{i}") for i in range(3)]
    spanned = [t.model_copy(update={"span": SpanRef(trace_id="1" * 32, span_id="2" * 16)}) for t in store_traces]
    writer = FailingWriter()
    auditor = Auditor(graph, score_writers=[writer])
    report = auditor.audit_batch(spanned, max_concurrency=3, interventions=["logic_flip"])
    assert report.overall.scored == 3 and auditor.writeback_errors == writer.calls == 3


def test_sinks_satisfy_the_protocol() -> None:
    spans_ = AuditSpans(TracerProvider())
    for sink in (SpanSink(spans_), ResultStoreSink(InMemoryResultStore()), ScoreWriteBackSink([], spans_), Collect()):
        assert isinstance(sink, AuditSink)
