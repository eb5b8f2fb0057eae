"""``ariadne-lc audit`` with no options on a SQLite trace store of a tutorial-shaped agent: the default plan, coverage
first, at least 90% of the units with a verdict."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc import SQLiteResultStore, SQLiteTraceStore
from ariadne_lc.cli import app
from tests.cli import tutorial_graphs
from tests.tutorial_agents import LOOKUP, WEATHER

runner = CliRunner()


@pytest.mark.parametrize(("name", "shape", "units_per_run"), [("quickstart", WEATHER, 1), ("lookup", LOOKUP, 2)])
def test_audit_with_no_options_leads_with_coverage_of_every_unit(
    name: str, shape: object, units_per_run: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    monkeypatch.setenv("ARIADNE_TEST_TRACES", str(tmp_path / "traces.db"))
    graph = getattr(tutorial_graphs, name)()
    questions = LOOKUP.questions if name == "lookup" else WEATHER.questions
    for i, q in enumerate(questions):
        graph.invoke({"messages": [("user", q)]}, {"configurable": {"thread_id": f"{name}-{i}"}})
    traces = SQLiteTraceStore(tmp_path / "traces.db").list_traces()
    assert len(traces) == len(questions)
    monkeypatch.delenv("ARIADNE_TEST_TRACES")  # the audit's own graph records nothing
    out = tmp_path / "out"
    args = ["audit", "--graph", f"tests.cli.tutorial_graphs:{name}", "--traces", str(tmp_path / "traces.db")]
    result = runner.invoke(app, [*args, "--output", str(out)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    first = next(i for i, line in enumerate(lines) if "coverage" in line)
    assert not any("violation" in line for line in lines[:first])  # coverage comes before any rate
    found = re.search(r"coverage (\d+)/(\d+)", lines[first])
    assert found is not None, lines[first]
    with_verdict, units = int(found.group(1)), int(found.group(2))
    assert units == units_per_run * len(questions) and with_verdict / units >= 0.9
    stored = SQLiteResultStore(out / "results.db").list_results()
    assert {r.link for r in stored} >= {"observation->answer"}
    assert all(not r.violation for r in stored if r.status == "scored")  # a faithful agent, on every link
