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


def _gated(
    items: list[CalibrationAudit], outcome: str = "decisive", form: str = "calculation"
) -> list[CalibrationAudit]:
    """``items`` as the gate recorded them: ``outcome`` (a rejection is not applicable), the thought's ``form``, and
    tracking for the scored ones (a faithful answer that moved tracks, a violation stayed)."""
    from ariadne_lc.records import Decisiveness

    out = []
    for a in items:
        record = Decisiveness(outcome=outcome, reader="rule", form=form, attempts=1)  # type: ignore[arg-type]
        update: dict[str, object] = {"decisiveness": record}
        if outcome == "decisive":
            update["tracking"] = "stayed" if a.result.violation else "tracks"
        else:
            update.update(status="not_applicable", label="inconclusive", similarity=None, phi=None, violation=False)
        out.append(a.model_copy(update={"result": a.result.model_copy(update=update)}))
    return out


def _gate_calibration() -> Calibration:
    """Gate off: FA 8/10, M 1/10 on logic_flip. Gate on, on the same traces: 6 of the 10 coupled edits rejected as
    not decisive, FA 0/4; 2 bypass edits rejected, M 1/8; a coupled_llm agent with FA 1/5."""
    items: list[CalibrationAudit] = []
    items += audits("coupled", violations=8, n=10, method="ariadne_ungated")
    items += audits("bypass", violations=9, n=10, method="ariadne_ungated")
    items += _gated(audits("coupled", violations=0, n=4, prefix="c"), form="calculation")
    items += _gated(audits("coupled", violations=0, n=6, prefix="cx"), outcome="not_decisive")
    items += _gated(audits("bypass", violations=7, n=8, prefix="b"), form="number")
    items += _gated(audits("bypass", violations=2, n=2, prefix="bx"), outcome="not_decisive")
    items += _gated(audits("coupled_llm", violations=1, n=5, truth="faithful", prefix="llm"), form="number")
    return analyze(items, CONFIG.model_copy(update={"decisive": True, "reader": "rule"}), n_resamples=100)


def test_gate_off_and_on_side_by_side() -> None:
    text = calibration_markdown(_gate_calibration())
    assert "## Decisiveness gate off and on, per type" in text
    # FA off 80%, on 0%; M off 10%, on 12.5%
    assert "| logic_flip | 80.0% [49.0%, 94.3%] (8/10) | 0.0% [0.0%, 49.0%] (0/4) |" in text
    assert "| 10.0% [1.8%, 40.4%] (1/10) | 12.5% [2.2%, 47.1%] (1/8) | 0.90 | 0.12 | 60.0%" in text


def test_not_decisive_shares_forms_tracking_and_further_agents() -> None:
    text = calibration_markdown(_gate_calibration())
    # per agent kind: the share of audits the gate rejected; tracking of the scored faithful ones
    assert "| logic_flip | 60.0% [31.3%, 83.2%] (6/10) | 20.0% [5.7%, 51.0%] (2/10) | 0.0%" in text
    assert "| 100.0% [51.0%, 100.0%] (4/4) |" in text  # the 4 scored coupled answers all tracked
    assert "| intervention | calculation |" in text  # FA by thought form (the coupled agent's were calculations)
    assert "| coupled_llm | logic_flip | 20.0% [3.6%, 62.4%] (1/5) |" in text


def test_calibration_html_has_the_gate_plot_in_type_colours(tmp_path: Path) -> None:
    from ariadne_lc.report._plots import TYPE_COLOURS

    page = write_calibration_reports(_gate_calibration(), tmp_path)[2].read_text()
    assert "decisiveness gate off and on" in page
    assert TYPE_COLOURS["logic_flip"] in page


def test_no_gate_table_for_the_ungated_method() -> None:
    text = calibration_markdown(_gate_calibration())
    ungated = text[text.index("## ariadne-lc, decisiveness gate off") :]
    assert "not decisive (coupled)" not in ungated


def test_incoherent_rejections_per_agent_kind() -> None:
    items = _gated(audits("coupled", violations=0, n=4, prefix="c"), form="calculation")
    items += _gated(audits("coupled", violations=0, n=2, prefix="ci"), outcome="incoherent")
    items += _gated(audits("bypass", violations=4, n=4, prefix="b"), form="number")
    calibration = analyze(items, CONFIG.model_copy(update={"decisive": True, "reader": "rule"}), n_resamples=100)
    errors = calibration.methods["ariadne"].errors["logic_flip"]
    assert (errors.incoherent["coupled"].k, errors.incoherent["coupled"].n) == (2, 6)
    assert (errors.not_decisive["coupled"].k, errors.incoherent["bypass"].k) == (0, 0)
    text = calibration_markdown(calibration)
    assert "| incoherent (coupled) |" in text and "| logic_flip | 0.0% [0.0%, 39.0%] (0/6) |" in text
    assert "| 33.3% [9.7%, 70.0%] (2/6) |" in text
