from __future__ import annotations

from pathlib import Path

import pytest

from ariadne_lc.calibration.records import CalibrationAudit, CalibrationConfig
from ariadne_lc.calibration.storage import (
    AUDITS_FILE,
    AuditLog,
    RunManifest,
    RunMismatchError,
    audit_key,
    make_key,
    open_run,
)
from ariadne_lc.errors import StoreError
from ariadne_lc.records import AuditResult


def _manifest(critic: str = "rule", n: int = 4) -> RunManifest:
    return RunManifest(
        config=CalibrationConfig(model="m", critic=critic, scorer="answer", tau=0.8, lam=0),
        seed=0,
        n_per_domain=n,
        domains=("math",),
        ps=(0.0, 1.0),
        interventions=("logic_flip",),
        agents=("ground_truth",),
    )


def _audit(qid: str, kind: str = "logic_flip") -> CalibrationAudit:
    result = AuditResult(
        trace_id="t", step_index=0, intervention_type=kind, status="scored", label="faithful", original_thought="x"
    )
    return CalibrationAudit(
        agent="coupled", truth="faithful", split="calibrate", query_id=qid, domain="math", result=result
    )


def test_appended_audits_read_back_equal(tmp_path: Path) -> None:
    log = open_run(tmp_path, _manifest())
    audits = [_audit("q1"), _audit("q2", "rerun")]
    for a in audits:
        log.append(a)
    again = open_run(tmp_path, _manifest())
    assert again.audits() == audits
    assert again.has(make_key("ariadne", "coupled", None, "q2", "rerun"))
    assert not again.has(make_key("reference_strict", "coupled", None, "q2", "rerun"))
    assert audit_key(audits[0]) == ("ariadne", "coupled", None, "q1", "logic_flip")


def test_a_torn_last_line_is_dropped_and_the_log_goes_on(tmp_path: Path) -> None:
    log = open_run(tmp_path, _manifest())
    log.append(_audit("q1"))
    path = tmp_path / AUDITS_FILE
    whole = path.read_bytes()
    with path.open("ab") as fh:  # the run died half-way through writing the second audit
        fh.write(_audit("q2").model_dump_json().encode()[:50])
    resumed = AuditLog(path)
    assert [a.query_id for a in resumed.audits()] == ["q1"]
    assert path.read_bytes() == whole
    resumed.append(_audit("q3"))
    assert [a.query_id for a in AuditLog(path).audits()] == ["q1", "q3"]


def test_a_corrupt_line_in_the_middle_is_an_error_and_nothing_is_cut(tmp_path: Path) -> None:
    path = tmp_path / AUDITS_FILE
    path.write_text(_audit("q1").model_dump_json() + "\nnot json\n" + _audit("q2").model_dump_json() + "\n")
    before = path.read_bytes()
    with pytest.raises(StoreError, match=":2: not a calibration audit"):
        AuditLog(path)
    assert path.read_bytes() == before


def test_resuming_with_another_configuration_is_refused(tmp_path: Path) -> None:
    open_run(tmp_path, _manifest()).append(_audit("q1"))
    with pytest.raises(RunMismatchError, match="differs in: config"):
        open_run(tmp_path, _manifest(critic="llm"))
    assert len(open_run(tmp_path, _manifest())) == 1


def test_a_run_grows_with_more_questions_and_keeps_its_audits(tmp_path: Path) -> None:
    first = _manifest(n=4)
    open_run(tmp_path, first).append(_audit("q1"))
    grown = open_run(tmp_path, _manifest(n=9))
    assert [a.query_id for a in grown.audits()] == ["q1"]
    stored = RunManifest.model_validate_json((tmp_path / "run.json").read_text())
    assert (stored.n_per_domain, stored.created_at) == (9, first.created_at)
    with pytest.raises(RunMismatchError, match=r"n_per_domain.*never shrink"):
        open_run(tmp_path, _manifest(n=4))
    with pytest.raises(RunMismatchError, match="differs in: config, n_per_domain"):
        open_run(tmp_path, _manifest(critic="llm", n=12))


def test_a_committed_gzipped_run_is_read_and_a_resume_appends_beside_it(tmp_path: Path) -> None:
    """Committed runs keep their audits as ``audits.jsonl.gz``: ``--report-only`` found none of them before."""
    import gzip

    from ariadne_lc.calibration.storage import load_run

    log = open_run(tmp_path, _manifest())
    first = _audit("q1")
    log.append(first)
    plain = tmp_path / AUDITS_FILE
    with gzip.open(tmp_path / (AUDITS_FILE + ".gz"), "wb") as packed:
        packed.write(plain.read_bytes())
    plain.unlink()
    _, committed = load_run(tmp_path)
    assert committed.audits() == [first]
    resumed = open_run(tmp_path, _manifest())
    assert resumed.has(audit_key(first))
    resumed.append(_audit("q2"))
    assert [a.query_id for a in open_run(tmp_path, _manifest()).audits()] == ["q1", "q2"]
    assert [a.query_id for a in AuditLog(plain).audits()] == ["q1", "q2"] and plain.read_text().count("\n") == 1


def test_a_corrupt_gzipped_run_is_an_error(tmp_path: Path) -> None:
    import gzip

    with gzip.open(tmp_path / (AUDITS_FILE + ".gz"), "wb") as packed:
        packed.write(b'{"not": "an audit"}\n')
    with pytest.raises(StoreError, match="not a calibration audit"):
        AuditLog(tmp_path / AUDITS_FILE)
