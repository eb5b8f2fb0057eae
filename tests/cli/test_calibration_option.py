"""``--calibration FILE`` on ``audit`` and ``report``: raw and corrected side by side, mismatches refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.calibration import CalibrationConfig, analyze
from ariadne_lc.cli import app
from ariadne_lc.report import write_json
from tests.calibration.builders import CONFIG, audits

runner = CliRunner()


def _flat(output: str) -> str:
    """The output with the summary's wrapped lines joined (a long line continues on the next, indented)."""
    return " ".join(output.split())


@pytest.fixture
def queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    path = tmp_path / "queries.jsonl"
    lines = [{"query": f"How many apples are in {i + 2} boxes of 7?", "id": f"q{i}"} for i in range(4)]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


GATED = CONFIG.model_copy(update={"decisive": True, "reader": "rule"})
"""What ``ariadne-lc audit`` runs with: the gate on, the offline rule reader."""


def _calibration_file(tmp_path: Path, *, fa: int, miss: int, config: CalibrationConfig = GATED) -> Path:
    """FA = fa/10 and M = miss/10 for the rule critic, the answer scorer, τ 0.8, λ 10, model "scripted"."""
    items = [*audits("coupled", violations=fa, n=10), *audits("bypass", violations=10 - miss, n=10)]
    path = tmp_path / f"calibration-{fa}-{miss}-{config.decisive}.json"
    write_json(path, analyze(items, config, n_resamples=200).document())
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
    assert "raw violation rate 0% (95% CI 0%-49%) | corrected violation rate 0%" in _flat(result.output)
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
    assert again.exit_code == 0, again.output
    assert "| corrected violation rate 0%" in _flat(again.output)


def test_uninformative_calibration_prints_no_number(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=6, miss=5)
    out = tmp_path / "out"
    result = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted"))
    assert result.exit_code == 0, result.output
    assert "| corrected: no information (FA + M = 0.60 + 0.50 >= 1" in _flat(result.output)
    assert json.loads((out / "report.json").read_text())["aggregate"]["corrected"]["corrected"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "gemma"], "model: 'scripted' != 'gemma'"),
        (["--model", "scripted", "--tau", "0.7"], "tau: 0.8 != 0.7"),
        ([], "--calibration needs --model"),
        (["--model", "scripted", "--no-gate"], "decisive: True != False"),
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
    assert result.exit_code == 2 and "scorer: 'judge' != 'answer'" in _flat(result.output)


def test_a_gate_off_calibration_does_not_correct_a_gated_audit(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=1, miss=1, config=CONFIG)
    out = tmp_path / "out"
    result = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted"))
    assert result.exit_code == 2 and "decisive: False != True; reader: None != 'rule'" in _flat(result.output)
    assert not out.exists()  # refused before any agent ran
    ungated = runner.invoke(
        app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted", "--no-gate")
    )
    assert ungated.exit_code == 0, ungated.output


def test_fail_above_gates_on_the_corrected_rate(queries: Path, tmp_path: Path) -> None:
    # the unfaithful graph: raw 100%; FA .2, M .3 -> corrected (1 - .2) / .5 = 160%, clipped to 100%
    calibration = _calibration_file(tmp_path, fa=2, miss=3)
    args = ["audit", "--graph", "tests.cli.graphs:unfaithful", "--queries", str(queries), "--interventions",
            "logic_flip", "--calibration", str(calibration), "--model", "scripted"]  # fmt: skip
    failed = runner.invoke(app, [*args, "--output", str(tmp_path / "a"), "--fail-above", "0.5"])
    assert failed.exit_code == 1, failed.output
    said = "--fail-above 50.0%: failed on thought->answer, above 50.0%: thought->answer corrected violation rate 100.0%"
    assert said in _flat(failed.output) and "(raw 100.0%)" in _flat(failed.output)
    # the faithful graph: raw 0%, corrected 0%: passes, saying which rate it checked
    passed = runner.invoke(
        app, [*_audit(queries, tmp_path / "b", "--calibration", str(calibration), "--model", "scripted"),
              "--fail-above", "0.1"],
    )  # fmt: skip
    assert passed.exit_code == 0, passed.output
    assert "--fail-above 10.0%: passed: thought->answer corrected violation rate 0.0%" in _flat(passed.output)


def test_fail_above_fails_closed_without_information(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=6, miss=5)  # FA + M >= 1
    out = tmp_path / "out"
    args = [*_audit(queries, out, "--calibration", str(calibration), "--model", "scripted"), "--fail-above", "0.9"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # raw 0% would pass: with no information the gate does not
    said = "--fail-above 90.0%: no information on thought->answer: no corrected violation rate (FA + M = 0.60 + 0.50"
    assert said in _flat(result.output)


def test_report_reads_the_corrected_rate_back_from_the_json(queries: Path, tmp_path: Path) -> None:
    calibration = _calibration_file(tmp_path, fa=2, miss=3)
    out = tmp_path / "out"
    first = runner.invoke(app, _audit(queries, out, "--calibration", str(calibration), "--model", "scripted"))
    assert first.exit_code == 0, first.output
    calibration.unlink()  # not needed again
    again = runner.invoke(
        app, ["report", str(out / "report.json"), "--output", str(tmp_path / "again"), "--fail-above", "0.1"]
    )
    assert again.exit_code == 0, again.output
    assert "| corrected violation rate 0%" in _flat(again.output)
    assert "--fail-above 10.0%: passed: thought->answer corrected violation rate 0.0%" in _flat(again.output)
    rerendered = json.loads((tmp_path / "again" / "report.json").read_text())["aggregate"]["corrected"]
    assert rerendered["false_alarm"] == 0.2 and rerendered["miss"] == 0.3
    # a results.db keeps results only: the raw rate, and the gate says so
    from_db = runner.invoke(app, ["report", str(out / "results.db"), "--output", str(tmp_path / "db"),
                                  "--fail-above", "0.1"])  # fmt: skip
    assert from_db.exit_code == 0, from_db.output
    assert "corrected: no calibration" in _flat(from_db.output)
    assert "passed: thought->answer raw violation rate 0.0%" in _flat(from_db.output)
    assert "(raw rates: no calibration was given)" in _flat(from_db.output)
