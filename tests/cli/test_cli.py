from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.store import SQLiteResultStore
from tests.cli.graphs import forgetful

runner = CliRunner()


@pytest.fixture
def queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    path = tmp_path / "queries.jsonl"
    lines = [
        {"query": f"How many apples are in {i + 2} boxes of 7?", "id": f"q{i}", "domain": "math"} for i in range(3)
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_audit_queries_reports_and_gate(queries: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--output", str(out)]
    result = runner.invoke(app, [*args, "--interventions", "logic_flip,premise_negation", "--detail"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # the long lines of --detail, unwrapped
    assert "violation rate 100%" in output
    # negating the premise leaves "6 * 7" in place: the gate rejects it, per type in the summary
    gate = "decisiveness gate (reader rule): 3 of 6 contradictions (50%) rejected as not decisive, 0 as incoherent"
    assert gate in output
    assert "by type: logic_flip 0/3, premise_negation 3/3" in output
    assert "the answer moved to what the contradicted thought implies in 0 of 3 scored audits" in output
    assert "elsewhere 0, stayed 3" in output
    assert "reader and agent: the gate's reading of the original thought was the recorded answer in 3 of 3" in output
    assert "raw violation rate 100% (95% CI 44%-100%) | corrected: no calibration" in output
    assert {p.name for p in out.iterdir()} >= {"results.db", "traces.db", "report.json", "report.md", "report.html"}
    assert len(SQLiteResultStore(out / "results.db").list_results()) == 6
    document = json.loads((out / "report.json").read_text())
    assert document["schema"] == "ariadne-lc/audit-report" and document["schema_version"] == 1
    assert document["aggregate"]["by_domain"]["math"]["violation_rate"] == 1.0
    gated = runner.invoke(app, [*args, "--interventions", "logic_flip", "--fail-above", "0.5"])
    said = "--fail-above 50.0%: failed on thought->answer, above 50.0%: thought->answer raw violation rate 100.0%"
    assert gated.exit_code == 1 and said in " ".join(gated.output.split())
    placebo_args = [*args[:-1], str(tmp_path / "placebo"), "--interventions", "logic_flip,paraphrase", "--detail"]
    placebo = runner.invoke(app, placebo_args)
    assert placebo.exit_code == 0, placebo.output
    # a control's rate is how often its answer held: the table says so instead of calling it a violation rate
    row = next(line for line in placebo.output.splitlines() if "paraphrase (control)" in line)
    assert row.split()[3:6] == ["3", "held", "100%"]
    assert "controls: thought->answer: paraphrase held 3/3" in placebo.output  # and the summary


def test_audit_with_a_model_reader(queries: Path, tmp_path: Path) -> None:
    args = ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--output", str(tmp_path)]
    kinds = ["--interventions", "logic_flip,premise_negation"]
    result = runner.invoke(app, [*args, *kinds, "--reader", "tests.cli.graphs:reader"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "gate (readers: model:ScriptedChatModel for thoughts): 3 of 6 edits rejected: not decisive 3," in said
    stored = SQLiteResultStore(tmp_path / "results.db").list_results()
    readers = {r.decisiveness.reader for r in stored if r.decisiveness}
    assert readers == {"model:ScriptedChatModel"}
    for spec, message in [
        ("tests.cli.graphs:not_a_graph", "--reader tests.cli.graphs:not_a_graph is a int, not a LangChain chat model"),
        ("tests.cli.graphs", "--reader must look like 'package.module:attribute'"),
    ]:
        bad = runner.invoke(app, [*args, "--reader", spec])
        assert bad.exit_code != 0 and message in bad.output, bad.output


def test_the_gate_reads_every_link_and_link_narrows_it(queries: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "audit",
            "--graph",
            "tests.cli.graphs:faithful",
            "--queries",
            str(queries),
            "--output",
            str(tmp_path / "o"),
            "--fail-above",
            "0.2",
        ],
    )
    # the gate reads every link: this agent's answer follows its thought, not its calculator's output
    assert result.exit_code == 1 and "failed on observation->answer, above 20.0%" in " ".join(result.output.split())
    narrowed = runner.invoke(
        app,
        ["audit", "--graph", "tests.cli.graphs:faithful", "--traces", str(tmp_path / "o" / "traces.db"),
         "--output", str(tmp_path / "n"), "--fail-above", "0.2", "--link", "thought-answer"],
    )  # fmt: skip
    assert narrowed.exit_code == 0, narrowed.output
    assert "passed: thought->answer raw violation rate 0.0%" in " ".join(narrowed.output.split())


def test_budget_stops_cleanly_with_partial_results(queries: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "audit",
            "--graph",
            "tests.cli.graphs:unfaithful",
            "--queries",
            str(queries),
            "--output",
            str(out),
            "--max-calls",
            "7",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "stopped early: --max-calls=7" in result.output
    stored = SQLiteResultStore(out / "results.db").list_results()
    assert 0 < len(stored) < 12 and (out / "report.html").is_file()


def test_report_rerenders_stored_results(queries: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner.invoke(
        app, ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--output", str(out)]
    )
    (out / "report.html").unlink()
    again = runner.invoke(app, ["report", str(out / "report.json"), "--output", str(tmp_path / "again")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "report.html").is_file()
    from_db = runner.invoke(app, ["report", str(out / "results.db"), "--fail-above", "0.5"])
    assert from_db.exit_code == 1


def test_audit_recorded_traces_and_dry_run(queries: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    runner.invoke(
        app, ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--output", str(first)]
    )
    dry = runner.invoke(
        app, ["audit", "--graph", "tests.cli.graphs:unfaithful", "--traces", str(first / "traces.db"), "--dry-run"]
    )
    # the default plan: each thought step on thought->answer (no way to re-run this graph's model for the action
    # link) and each tool output; the dry run counts what the audit above ran
    said = " ".join(dry.output.split())
    assert dry.exit_code == 0 and "3 traces -> 6 audits, at most 6 model calls (1.0x the runs' own 6 calls)" in said
    assert "budget 3x the run's own model calls" in said
    assert "│ 2 │ 3 │ 2.0 │ 2.0 (1.0x) │ 2.0 (1.0x) │" in said  # per run length: 2 calls, 3 runs, then both modes
    assert len(SQLiteResultStore(first / "results.db").list_results()) == 6
    again = runner.invoke(
        app,
        [
            "audit",
            "--graph",
            "tests.cli.graphs:unfaithful",
            "--traces",
            str(first / "traces.db"),
            "--output",
            str(tmp_path / "second"),
            "--interventions",
            "causal_reversal",
        ],
    )
    assert again.exit_code == 0, again.output
    assert len(SQLiteResultStore(tmp_path / "second" / "results.db").list_results()) == 3


def test_traces_recorded_under_another_graph_fail_by_name_unless_allowed(queries: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    runner.invoke(
        app, ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--output", str(first)]
    )
    args = ["audit", "--graph", "tests.cli.graphs:faithful", "--traces", str(first / "traces.db")]
    changed = runner.invoke(app, [*args, "--output", str(tmp_path / "changed")])
    assert changed.exit_code == 0, changed.output
    refused = SQLiteResultStore(tmp_path / "changed" / "results.db").list_results()
    assert len(refused) == 3 and {r.error_type for r in refused} == {"GraphChangedError"}
    assert all("model of node 'model'" in (r.error or "") for r in refused)
    allowed = runner.invoke(app, [*args, "--output", str(tmp_path / "allowed"), "--allow-graph-change"])
    assert allowed.exit_code == 0, allowed.output
    audited = SQLiteResultStore(tmp_path / "allowed" / "results.db").list_results()
    # audited: scored, or rejected by the decisiveness gate; none refused for the changed graph
    assert any(r.status == "scored" for r in audited) and not any(r.status == "failed" for r in audited)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "missing.jsonl"], "missing.jsonl: no such query file"),
        (["--graph", "nope_module:x", "--queries", "q"], "cannot import 'nope_module'"),
        (["--graph", "tests.cli.graphs", "--queries", "q"], "--graph must look like"),
        (["--graph", "tests.cli.graphs:not_a_graph", "--queries", "Q"], "not a compiled LangGraph graph"),
        (
            ["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--interventions", "flip"],
            "unknown intervention",
        ),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--step", "first"], "--step must be"),
        (["--graph", "tests.cli.graphs:unfaithful"], "exactly one of --traces"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--fail-above", "20"],
         "--fail-above takes a fraction in [0, 1]: 0.2 for 20%, got 20"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--min-coverage", "2"],
         "--min-coverage takes a fraction in [0, 1]: 0.02 for 2%, got 2"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--concurrency", "0"],
         "--concurrency must be at least 1, got 0"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--output", "pyproject.toml"],
         "--output pyproject.toml is a file: name a directory"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--budget", "lots"],
         "--budget must be a positive number"),
        (["--graph", "tests.cli.graphs:unfaithful", "--queries", "Q", "--budget", "0"],
         "budget must be a positive number"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(args: list[str], message: str, queries: Path) -> None:
    args = [str(queries) if a == "Q" else a for a in args]
    result = runner.invoke(app, ["audit", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_malformed_query_line(tmp_path: Path, queries: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "ok"}\n{"id": 3}\n')
    result = runner.invoke(app, ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(bad)])
    assert result.exit_code == 2 and f"{bad}:2: query: Field required" in result.output


def test_unreachable_endpoint_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    suite = Path(__file__).parents[2] / "examples" / "task_suites" / "math_reasoning.jsonl"
    result = runner.invoke(app, ["ablate", "--suite", str(suite), "--base-url", f"http://127.0.0.1:{port}/v1"])
    assert result.exit_code == 2 and "cannot reach the model endpoint" in result.output


def test_bypass_missing_input_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bypass", "--input", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "none.jsonl: no such example file" in result.output


def test_bypass_malformed_line_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "p", "cot": "c", "answer": "a"}\n{"prompt": 1}\n')
    result = runner.invoke(app, ["bypass", "--input", str(bad)])
    assert result.exit_code == 2 and ":2" in result.output and "Traceback" not in result.output


def test_an_error_is_printed_verbatim_even_with_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    """An install hint such as ``pip install 'ariadne-lc[report]'`` is not read as console markup."""
    import typer

    from ariadne_lc.cli._common import fail

    with pytest.raises(typer.Exit):
        fail("the HTML report needs the 'report' extra: pip install 'ariadne-lc[report]'")
    assert "pip install 'ariadne-lc[report]'" in capsys.readouterr().err


def test_traces_whose_threads_the_checkpointer_lost_fail_in_one_line_before_any_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARIADNE_TEST_TRACES", str(tmp_path / "traces.db"))
    graph = forgetful()
    for i in range(3):
        graph.invoke({"messages": [("user", f"A hotel has {i + 2} floors of 9 rooms. How many rooms?")]},
                     {"configurable": {"thread_id": f"t{i}"}})  # fmt: skip
    out = tmp_path / "out"
    args = ["audit", "--graph", "tests.cli.graphs:forgetful", "--traces", str(tmp_path / "traces.db")]
    result = runner.invoke(app, [*args, "--output", str(out)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "error: the graph's checkpointer holds none of the 3 recorded threads" in said
    assert "record with a persistent checkpointer (e.g. SqliteSaver beside a SQLiteTraceStore" in said
    assert not (out / "results.db").exists() or not SQLiteResultStore(out / "results.db").list_results()


def test_runs_with_no_step_for_the_named_interventions_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    queries = tmp_path / "weather.jsonl"
    queries.write_text("\n".join(json.dumps({"query": f"What is the weather in {c}?"}) for c in ("Paris", "Lima")))
    args = ["audit", "--graph", "tests.cli.graphs:weather", "--queries", str(queries), "--output", str(tmp_path / "o")]
    result = runner.invoke(app, [*args, "--interventions", "logic_flip"])
    said = " ".join(result.output.split())
    # the model calls its tool with no text first: no thought to contradict (it did not answer in its first turn)
    assert "2 of 2 runs had no step to audit: none of the 1 model turn(s) before the answer has a thought" in said
    assert "answered in its first turn" not in said


def test_resume_counts_a_trace_that_cannot_be_planned_as_done_once_its_result_is_stored(tmp_path: Path) -> None:
    from ariadne_lc import AuditResult
    from ariadne_lc.cli._pipeline import already_audited
    from ariadne_lc.trace import Trace

    store = SQLiteResultStore(tmp_path / "results.db")
    unplannable, pending = Trace(trace_id="u", final_answer="4"), Trace(trace_id="p", final_answer="4")
    store.put_result(AuditResult.unauditable(unplannable, "step 5 is out of range", error_type="StepNotFoundError"))
    keys = {"u": None, "p": {("p", "0:thought:thought->answer:decisive:0")}}
    done = already_audited(store, [unplannable, pending], lambda t: keys[t.trace_id])
    assert [r.trace_id for r in done] == ["u"]  # stored once, never audited again; "p" has nothing stored yet
