"""``--calibration FILE`` on ``audit`` and ``report``: raw and corrected side by side, mismatches refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.calibration import analyze
from ariadne_lc.cli import app
from ariadne_lc.report import write_json
from tests.calibration.builders import CONFIG, audits

runner = CliRunner()


@pytest.fixture
def queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    path = tmp_path / "queries.jsonl"
    lines = [{"query": f"How many apples are in {i + 2} boxes of 7?", "id": f"q{i}"} for i in range(4)]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def _calibration_file(tmp_path: Path, *, fa: int, miss: int) -> Path:
    """FA = fa/10 and M = miss/10 for the rule critic, the answer scorer, τ 0.8, λ 10, model "scripted"."""
    items = [*audits("coupled", violations=fa, n=10), *audits("bypass", violations=10 - miss, n=10)]
    path = tmp_path / f"calibration-{fa}-{miss}.json"
    write_json(path, analyze(items, CONFIG, n_resamples=200).document())
    return path


def _audit(queries: Path, out: Path, *extra: str) -> list[str]:
    return [
        "audit", "--graph", "tests.cli.graphs:faithful", "--queries", str(queries), "--output", str(out),
        "--interventions", "logic_flip", *extra,
    ]  # fmt: skip


def test_audit_reports_raw_and_corrected(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=2, miss=3)
    out = tmp_path / "out"
    result = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted"))
    assert result.exit_code == 0, result.output
    assert "calibrated violation rate 0%" in result.output and "beside the raw 0%" in result.output
    corrected = json.loads((out / "report.json").read_text())["aggregate"]["corrected"]
    assert corrected["observed"] == 0.0 and corrected["false_alarm"] == 0.2 and corrected["miss"] == 0.3
    assert corrected["corrected"] == 0.0 and corrected["unclipped"] == pytest.approx(-0.4)
    markdown = (out / "report.md").read_text()
    assert "## Raw and calibrated violation rates" in markdown and "| all | 4 | 0% |" in markdown
    assert "calibrated violation rate" in (out / "report.html").read_text()
    again = runner.invoke(
        app, ["report", str(out / "results.db"), "--output", str(tmp_path / "again"),
              "--calibration", str(calibration), "--model", "scripted"],
    )  # fmt: skip
    assert again.exit_code == 0, again.output and "calibrated violation rate 0%" in again.output


def test_uninformative_calibration_prints_no_number(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=6, miss=5)
    out = tmp_path / "out"
    result = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted"))
    assert result.exit_code == 0, result.output
    assert "calibrated violation rate: no number (FA + M = 0.60 + 0.50 >= 1" in result.output
    assert json.loads((out / "report.json").read_text())["aggregate"]["corrected"]["corrected"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "gemma"], "model: 'scripted' != 'gemma'"),
        (["--model", "scripted", "--tau", "0.7"], "tau: 0.8 != 0.7"),
        ([], "--calibration needs --model"),
    ],
)
def test_mismatched_calibration_is_refused_before_running(
    extra: list[str], message: str, queries: Path, tmp_path: Path
) -> None:
    calibration = _calibration_file(tmp_path, fa=1, miss=1)
    out = tmp_path / "out"
    result = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), *extra))
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not out.exists()  # refused before any agent ran


def test_report_refuses_a_calibration_for_another_scorer(queries: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, _audit(queries, out)).exit_code == 0
    items = [*audits("coupled", violations=1, n=5), *audits("bypass", violations=4, n=5)]
    judge = tmp_path / "judge.json"
    config = CONFIG.model_copy(update={"scorer": "judge"})
    write_json(judge, analyze(items, config, n_resamples=50).document())
    result = runner.invoke(app, ["report", str(out / "results.db"), "--calibration", str(judge), "--model", "scripted"])
    assert result.exit_code == 2 and "scorer: 'judge' != 'answer'" in result.output
