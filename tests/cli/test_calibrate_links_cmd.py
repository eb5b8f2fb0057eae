"""``ariadne-lc calibrate-links``: bad options are refused in one line before any model starts.

The command end to end on the real local model is ``tests/calibration/test_link_calibration_local.py`` (through the
runner) and the committed run in ``docs/calibration/links/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.cli import app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "llama"], "unknown --model 'llama'"),
        (["--agents", "action_faithful,nope"], "--agents takes a comma-separated subset"),
        (["--reader", "judge"], "--reader takes rule or model"),
        (["--questions", "0"], "--questions must be at least 1"),
    ],
)
def test_bad_options_are_refused_before_a_model_starts(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["calibrate-links", "--out", str(tmp_path / "run"), *args])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "run").exists()


def test_report_only_summarises_a_stored_run_without_a_model(tmp_path: Path) -> None:
    from ariadne_lc.calibration.link_runner import LinkRunConfig, run_link_calibration
    from tests.calibration.link_scripts import planning_model

    run_link_calibration(planning_model(), tmp_path, LinkRunConfig(model="scripted", questions=1))
    result = CliRunner().invoke(app, ["calibrate-links", "--report-only", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "thought->action" in result.output and (tmp_path / "summary.md").is_file()
    assert "| thought->action | tracks" in (tmp_path / "summary.md").read_text()
    missing = CliRunner().invoke(app, ["calibrate-links", "--report-only", "--out", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "holds no run" in missing.output
