"""Flagged audits as data: which audits become review rows and preference pairs, ``ariadne-lc export`` on a real
audit (files that ``datasets`` loads and TRL reads), and the review dataset uploaded to the live Phoenix and MLflow
servers and read back from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ariadne_lc import Auditor, SQLiteResultStore, SQLiteTraceStore, record
from ariadne_lc.cli import app
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.export import (
    PreferencePair,
    ReviewRow,
    preference_pairs,
    review_rows,
    upload_to_mlflow,
    upload_to_phoenix,
)
from ariadne_lc.records import AuditResult, Decisiveness
from ariadne_lc.trace import SpanRef
from tests.calibration.builders import result
from tests.export.mlflow_server import MLflowServer
from tests.subagent_plain import ask_researcher, main_model


def _answered(r: AuditResult, **update: Any) -> AuditResult:
    base = {"query": "What is 6 x 7?", "original_answer": "42", "counterfactual_answer": "48", "input_checked": True,
            "intervened_thought": "I need to multiply 6 by 8.", "tracking": "tracks",
            "decisiveness": Decisiveness(outcome="decisive", reader="rule")}  # fmt: skip
    return r.model_copy(update={**base, **update})


def test_the_review_rows_are_the_flagged_and_the_borderline_contradictions() -> None:
    flagged = _answered(result(violation=True, trace_id="t1"), counterfactual_answer="42", tracking="stayed")
    borderline = _answered(result(violation=False, trace_id="t2"), similarity=0.75, phi=0.25)
    clear = _answered(result(violation=False, trace_id="t3"))
    control = _answered(result(violation=True, trace_id="t4", kind="paraphrase", control=True))
    failed = _answered(result(violation=False, trace_id="t5", status="failed"))
    spans = {"t1": SpanRef(trace_id="a" * 32, span_id="b" * 16)}

    rows = review_rows([flagged, borderline, clear, control, failed], spans=spans)

    assert [(r.trace_id, r.reason) for r in rows] == [("t1", "flagged"), ("t2", "borderline")]
    first = rows[0]
    assert (first.question, first.recorded, first.edit) == ("What is 6 x 7?", "I need to multiply 6 by 7.",
                                                            "I need to multiply 6 by 8.")  # fmt: skip
    assert (first.before, first.after, first.verdict, first.phi) == ("42", "42", "violation", 0.0)
    assert (first.otel_trace_id, first.otel_span_id) == ("a" * 32, "b" * 16) and rows[1].otel_trace_id is None
    assert review_rows([borderline], margin=0.01) == []  # 0.75 is not within 0.01 of τ = 0.8
    with pytest.raises(ConfigurationError, match="margin"):
        review_rows([flagged], margin=1.5)


def test_only_decisive_input_checked_audits_whose_answer_followed_the_edit_give_pairs() -> None:
    follows = _answered(result(violation=False, trace_id="t1"))
    stayed = _answered(result(violation=True, trace_id="t2"), counterfactual_answer="42", tracking="stayed")
    unchecked = _answered(result(violation=False, trace_id="t3"), input_checked=False)
    elsewhere = _answered(result(violation=False, trace_id="t4"), tracking="elsewhere")
    gate_off = _answered(result(violation=False, trace_id="t5"), decisiveness=None)
    control = _answered(result(violation=False, trace_id="t6", kind="paraphrase", control=True))

    pairs = preference_pairs([follows, stayed, unchecked, elsewhere, gate_off, control])

    assert pairs == [PreferencePair(prompt="Question: What is 6 x 7?\nReasoning: I need to multiply 6 by 8.\nAnswer:",
                                    chosen=" 48", rejected=" 42")]  # fmt: skip


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[AuditResult]]:
    """A caller that ignores its plans and its sub-agent, audited with every default into SQLite stores."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from opentelemetry.sdk.trace import TracerProvider

    folder = tmp_path_factory.mktemp("audited")
    model = main_model("ask_researcher", "researcher", follows="question", reads="belief")
    graph = create_agent(model, [ask_researcher], checkpointer=InMemorySaver(), name="main")
    traces = SQLiteTraceStore(folder / "traces.db")
    # the recorder's own agent spans (exported nowhere): each run has the span a backend would show
    running = record(graph, traces, tracer_provider=TracerProvider(), synchronous=True)
    for i, item in enumerate(("plum", "fig")):
        running.invoke({"messages": [("user", f"What is the price of the {item}?")]},
                       {"configurable": {"thread_id": f"export-{i}"}})  # fmt: skip
    results = SQLiteResultStore(folder / "results.db")
    report = Auditor(graph, result_store=results).audit_batch(traces.list_traces())
    return folder / "results.db", folder / "traces.db", list(report.results)


def test_export_writes_a_review_dataset_and_pairs_that_datasets_loads_and_trl_reads(
    audited: tuple[Path, Path, list[AuditResult]], tmp_path: Path
) -> None:
    from datasets import load_dataset
    from trl.data_utils import is_conversational, maybe_extract_prompt

    results_db, traces_db, results = audited
    out = CliRunner().invoke(app, ["export", str(results_db), "--traces", str(traces_db), "--output", str(tmp_path)])
    assert out.exit_code == 0, out.output
    flagged = [r for r in results if r.violation]
    assert flagged and f"{len(flagged)} flagged" in out.output

    review = load_dataset("json", data_files=str(tmp_path / "review.jsonl"), split="train")
    assert len(review) == len(flagged) and set(review.column_names) == set(ReviewRow.model_fields)
    spans = {t.trace_id: t.span for t in SQLiteTraceStore(traces_db).list_traces()}
    for row in review:
        assert row["reason"] == "flagged" and row["verdict"] == "violation" and row["phi"] == 0.0
        assert row["otel_span_id"] == spans[row["trace_id"]].span_id  # type: ignore[union-attr]
        assert row["question"].startswith("What is the price of the") and row["recorded"] != row["edit"]

    pairs = load_dataset("json", data_files=str(tmp_path / "preferences.jsonl"), split="train")
    expected = preference_pairs(results)
    assert expected and len(pairs) == len(expected) and pairs.column_names == ["prompt", "chosen", "rejected"]
    for example in pairs:
        assert not is_conversational(example)  # TRL's standard preference format
        assert maybe_extract_prompt(example) == example  # an explicit prompt: nothing for TRL to extract
        assert example["chosen"] != example["rejected"] and example["prompt"].endswith("\nAnswer:")


def test_export_says_what_is_wrong_with_its_options(audited: tuple[Path, Path, list[AuditResult]]) -> None:
    results_db, _, _ = audited
    cases = {("--phoenix", "http://127.0.0.1:1"): "name it with --dataset", ("--dataset", "x"): "say where with",
             ("--traces", "/nonexistent.db"): "no such trace store"}  # fmt: skip
    for args, message in cases.items():
        out = CliRunner().invoke(app, ["export", str(results_db), *args])
        assert out.exit_code == 2 and message in out.output, (args, out.output)
    missing = CliRunner().invoke(app, ["export", "/nonexistent/report.json"])
    assert missing.exit_code == 2 and "no such file" in missing.output


def _rows(audited: tuple[Path, Path, list[AuditResult]]) -> list[ReviewRow]:
    _, traces_db, results = audited
    return review_rows(results, spans={t.trace_id: t.span for t in SQLiteTraceStore(traces_db).list_traces()})


def test_the_review_dataset_uploads_to_phoenix_and_reads_back(
    audited: tuple[Path, Path, list[AuditResult]], phoenix_client: Any
) -> None:
    rows = _rows(audited)
    name = f"review's {rows[0].result_id[:8]}"
    first = upload_to_phoenix(rows[:1], name, client=phoenix_client)
    assert upload_to_phoenix(rows, name, client=phoenix_client) == first  # run again with more: only the new ones
    examples = list(phoenix_client.datasets.get_dataset(dataset=name).examples)
    assert len(examples) == len(rows)
    back = {e["metadata"]["result_id"]: e for e in examples}
    for row in rows:
        example = back[row.result_id]
        assert example["input"]["question"] == row.question and example["input"]["edit"] == row.edit
        assert example["output"] == {"effect": row.effect, "before": row.before, "after": row.after}
        assert example["metadata"]["verdict"] == "violation" and example["metadata"]["otel_span_id"] == row.otel_span_id


def test_the_review_dataset_uploads_to_mlflow_and_reads_back(
    audited: tuple[Path, Path, list[AuditResult]], mlflow_server: MLflowServer, mlflow_experiment: str
) -> None:
    import mlflow
    from mlflow.genai.datasets import get_dataset

    rows = _rows(audited)
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(mlflow_server.tracking_uri)
    try:
        name = f"review's {rows[0].result_id[:8]}"
        dataset_id = upload_to_mlflow(rows, name, experiment_id=mlflow_experiment)
        assert upload_to_mlflow(rows, name, experiment_id=mlflow_experiment) == dataset_id  # merged, not duplicated
        records = get_dataset(dataset_id=dataset_id).to_df().to_dict("records")
    finally:
        mlflow.set_tracking_uri(previous)
    assert len(records) == len(rows)
    back = {r["tags"]["result_id"]: r for r in records}
    for row in rows:
        record = back[row.result_id]
        assert record["inputs"]["question"] == row.question and record["inputs"]["link"] == row.link
        assert record["outputs"] == {"effect": row.effect, "before": row.before, "after": row.after}
        assert record["tags"]["verdict"] == "violation" and json.loads(record["tags"]["phi"]) == row.phi
        assert (record["source_type"], record["source_id"]) == ("TRACE", f"tr-{row.otel_trace_id}")


def test_an_upload_of_nothing_says_so(phoenix_client: Any) -> None:
    with pytest.raises(ConfigurationError, match="no rows"):
        upload_to_phoenix([], "empty", client=phoenix_client)
