"""The terminal summary of ``audit`` (and ``demo``, ``report``: the same code) at 100 columns: coverage, one line per
link, the gate and the controls in a line each; the per-intervention tables behind ``--detail``; no interval split.

The audits are real: a scripted tool-calling agent (``tests.cli.graphs:planning_unfaithful``: its thoughts plan the
call it makes, its answer ignores the tool's output) recorded into a SQLite trace store, audited on every link.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.cli._summary import wrap
from tests.cli.graphs import planning_unfaithful

runner = CliRunner()
INTERVENTIONS = (
    "logic_flip,fact_reversal,premise_negation,causal_reversal,conclusion_swap,observation_swap,rerun,paraphrase"
)
INTERVAL = re.compile(r"\[\d+%, \d+%\]")


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four recorded runs of the planning agent (the graph module reads both paths from the environment)."""
    monkeypatch.setenv("ARIADNE_TEST_TRACES", str(tmp_path / "traces.db"))
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    graph = planning_unfaithful()
    for i, (floors, rooms) in enumerate([(12, 9), (7, 8), (5, 11), (6, 4)]):
        question = f"A hotel has {floors} floors with {rooms} rooms each. How many rooms?"
        graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"t{i}"}})
    return tmp_path / "traces.db"


def _audit(traces: Path, out: Path, *extra: str) -> str:
    args = ["audit", "--graph", "tests.cli.graphs:planning_unfaithful", "--traces", str(traces), "--output", str(out)]
    args += ["--step", "all", "--interventions", INTERVENTIONS, *extra]
    result = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


def _too_long(output: str) -> list[str]:
    return [line for line in output.splitlines() if len(line) > 100]


def test_the_audit_summary_fits_100_columns_with_one_line_per_link(traces: Path, tmp_path: Path) -> None:
    output = _audit(traces, tmp_path / "out")
    assert _too_long(output) == []
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("coverage "))
    summary = lines[start:]
    assert "coverage 8/8 (100%) units with a verdict (thought steps 4/4, tool outputs 4/4)" in summary[0]
    header = next(i for i, line in enumerate(summary) if line.startswith("link "))
    # the reports' first table (link_answers), as text; the controls have their own line
    assert summary[header].split() == ["link", "verdict", "violation", "rate", "95%", "CI", "N", "scored", "coverage"]
    rows = {line.split()[0]: line for line in summary[header + 1 : header + 4]}
    # the thought plans the call and the call follows it: tracked 12 of 12; the answer ignores the tool's output
    # 0 of 12 ignored, [0%, 24%]: the interval still holds the 20% tolerance, so no verdict yet (the reports' rule)
    assert rows["thought->action"].split()[1:4] == ["no", "verdict", "0%"]
    assert rows["thought->action"].split()[-3:] == ["12", "4/4", "(100%)"]
    assert rows["observation->answer"].split()[1:3] == ["flagged", "100%"]
    assert rows["thought->answer"].split()[1:4] == ["no", "verdict", "-"]
    why = " ".join(line for line in summary if not line.startswith("controls"))
    # the cause and its fix, under the table (they were in report.json only)
    assert "thought->answer, why no verdict: not testable: tool multiply not run" in " ".join(why.split())
    assert "declare it in safe_tools" in why
    assert INTERVAL.search(rows["thought->action"]) and INTERVAL.search(rows["observation->answer"])
    at = next(i for i, line in enumerate(summary) if line.startswith("gate "))
    gate = summary[at : at + 2]  # wrapped at 100 columns
    # the observation swaps are read on their values (reader "values"), the thoughts by the rule reader
    expected = (
        "gate (readers: rule for thoughts, values for tool outputs): 16 of 44 edits rejected: not decisive 0, "
        "incoherent 16, no commitment 0"
    )
    assert " ".join(" ".join(gate).split()).startswith(expected)
    controls = next(i for i, line in enumerate(summary) if line.startswith("controls: "))
    assert "observation->answer: paraphrase held 4/4, rerun held 4/4" in " ".join(summary[controls : controls + 2])
    assert not any(line.split()[:2] == ["intervention", "domain"] for line in lines)  # the tables wait for --detail


def test_detail_prints_the_table_per_link_within_100_columns(traces: Path, tmp_path: Path) -> None:
    output = _audit(traces, tmp_path / "out", "--detail")
    assert _too_long(output) == []
    lines = output.splitlines()
    for link in ("thought->action", "observation->answer", "thought->answer"):
        assert link in [line.strip() for line in lines]  # each link's table has its title line
    header = [line.split() for line in lines if line.split()[:2] == ["intervention", "domain"]]
    columns = ["intervention", "domain", "N", "rate", "95%", "CI", "φ", "rejected", "t/e/s", "n/a", "failed"]
    assert header == [columns] * 3
    swap = next(line for line in lines if line.split()[:1] == ["observation_swap"])
    assert swap.split()[2:4] == ["4", "100%"] and "[51%, 100%]" in swap and swap.split()[-3] == "0/0/4"
    assert "decisiveness gate (reader rule" in output  # the long lines come with the table
    assert output.count("coverage 8/8") == 1  # then the short summary, once


@pytest.mark.parametrize("width", [40, 60, 100])
def test_wrapping_never_splits_an_interval_or_exceeds_the_width(width: int) -> None:
    text = (
        "coverage 22/24 (92%) units with a verdict (thought steps 12/12, tool outputs 10/12) | thought->action 10/12 "
        "[60%, 95%] | observation->answer 10/12 [55%, 95%] | thought->answer 2/12 (17%); 2 without a verdict "
        "(no value to swap 2); 1 of 9 runs failed (GraphRecursionError 1), not audited"
    )
    lines = wrap(text, width)
    assert all(len(line) <= width for line in lines)
    assert " ".join(line.strip() for line in lines) == text
    assert len(INTERVAL.findall("\n".join(lines))) == 2
    assert wrap("short enough", width) == ["short enough"]
