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
