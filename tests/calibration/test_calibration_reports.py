"""calibration.json round-trips and is refused when foreign; Markdown and HTML show every table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ariadne_lc.calibration import Calibration, CalibrationAudit, analyze
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.report import calibration_markdown, load_calibration, write_calibration_reports
from tests.calibration.builders import CONFIG, audits


def _calibration() -> Calibration:
    items: list[CalibrationAudit] = []
    for method in ("ariadne", "reference_strict"):
        items += audits("coupled", violations=1 if method == "ariadne" else 4, n=10, method=method)
        items += audits("bypass", violations=9 if method == "ariadne" else 2, n=10, method=method)
        for p in (0.0, 0.5, 1.0):
            items += audits(
                "mixture",
                p=p,
                truth="unfaithful",
                violations=4,
                n=int(10 * p),
                split="validate",
                method=method,
                prefix=f"mu{p}",
            )
            items += audits(
                "mixture",
                p=p,
                truth="faithful",
                violations=1,
                n=10 - int(10 * p),
                split="validate",
                method=method,
                prefix=f"mf{p}",
            )
        items += audits("bypass", violations=8, n=10, kind="rerun", control=True, method=method, prefix="br")
    return analyze(items, CONFIG, n_resamples=300)


def test_markdown_has_the_comparison_rates_causes_noise_and_coverage() -> None:
    text = calibration_markdown(_calibration())
    assert "model=scripted, critic=rule, scorer=answer, tau=0.8, lambda=10" in text
    assert "| ariadne-lc (graph replay) | 10.0% | 10.0% |" in text
    assert "| reference re-prompt, strict judge | 40.0% | 80.0% |" in text
    assert "FA + M" in text and "1.20 (no information)" in text
    assert "| rerun | - | 20.0%" in text  # 2 of 10 reruns on the bypass agent moved the answer
    assert "covers p" in text and "no number (FA + M = 1.20 ≥ 1: no information)" in text


def test_json_round_trips_and_foreign_files_are_refused(tmp_path: Path) -> None:
    calibration = _calibration()
    paths = write_calibration_reports(calibration, tmp_path)
    assert [p.name for p in paths] == ["calibration.json", "calibration.md", "calibration.html"]
    document = json.loads(paths[0].read_text())
    assert (document["schema"], document["schema_version"]) == ("ariadne-lc/calibration", 1)
    assert load_calibration(paths[0]) == calibration
    html = paths[2].read_text()
    assert "<svg" in html and "estimated against true rate" in html and "<script" not in html
    document["schema_version"] = 99
    (tmp_path / "v99.json").write_text(json.dumps(document))
    with pytest.raises(ConfigurationError, match="version 99 is not supported"):
        load_calibration(tmp_path / "v99.json")
    (tmp_path / "audit.json").write_text(json.dumps({"schema": "ariadne-lc/audit-report"}))
    with pytest.raises(ConfigurationError, match="not an ariadne-lc calibration"):
        load_calibration(tmp_path / "audit.json")
    with pytest.raises(ConfigurationError, match="no such calibration file"):
        load_calibration(tmp_path / "missing.json")
