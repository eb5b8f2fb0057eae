"""What a calibration run spends its model calls on: the gate-off twin only when asked, each thought read once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ariadne_lc.calibration.records import CalibrationConfig, Method
from ariadne_lc.calibration.runner import DEFAULT_INTERVENTIONS, CalibrationJob, CalibrationRunner, counted, plan_jobs
from ariadne_lc.calibration.storage import RunManifest, open_run
from ariadne_lc.interventions.implied import ImpliedAnswer, RuleReader
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

from .scripts import calibration_model, questions


def _manifest() -> RunManifest:
    return RunManifest(
        config=CalibrationConfig(model="scripted", critic="rule", scorer="answer", tau=0.8, lam=0),
        seed=0,
        n_per_domain=4,
        domains=("math", "science"),
        ps=(),
        interventions=DEFAULT_INTERVENTIONS,
        agents=("ground_truth",),
    )


class CountingReader:
    """The rule reader, counting what it is asked to read."""

    name = "rule"

    def __init__(self) -> None:
        self.reads: Counter[tuple[str, str]] = Counter()
        self._rule = RuleReader()

    def read(self, query: str, thought: str) -> ImpliedAnswer:
        self.reads[(query, thought)] += 1
        return self._rule.read(query, thought)


def _jobs() -> list[CalibrationJob]:
    return plan_jobs(questions(4, 2), ps=(), natural=False)


def test_the_gate_off_twin_is_stored_only_when_asked(tmp_path: Path) -> None:
    jobs = _jobs()
    model, calls = counted(calibration_model())
    plain = open_run(tmp_path / "plain", _manifest())
    CalibrationRunner(model, plain, calls=calls, reader="rule").run(jobs)
    plain_calls = calls()
    assert {a.method for a in plain.audits()} == {"ariadne"}
    assert len(plain.audits()) == len(jobs) * len(DEFAULT_INTERVENTIONS)

    model, calls = counted(calibration_model())
    twin = open_run(tmp_path / "twin", _manifest())
    CalibrationRunner(model, twin, calls=calls, reader="rule", ungated=True).run(jobs)
    by_method = Counter(a.method for a in twin.audits())
    assert by_method == {"ariadne": len(plain.audits()), "ariadne_ungated": len(plain.audits())}
    assert calls() > plain_calls  # the twin replays the edits the gate did not accept first
    # the gated records are the same with or without the twin beside them
    gated = {
        (a.agent, a.query_id, a.result.intervention_type): a.result for a in twin.audits() if a.method == "ariadne"
    }
    for a in plain.audits():
        other = gated[(a.agent, a.query_id, a.result.intervention_type)]
        assert (a.result.intervened_thought, a.result.counterfactual_answer, a.result.label) == (
            other.intervened_thought,
            other.counterfactual_answer,
            other.label,
        )


def test_each_thought_is_read_once_per_run_however_many_edits_and_agents_share_it(tmp_path: Path) -> None:
    """The original thought's reading is the same for every intervention of a job and for the other agent on the
    same question (same thought at temperature 0): the reader is asked once."""
    reader = CountingReader()
    model, calls = counted(calibration_model())
    log = open_run(tmp_path, _manifest())
    jobs = _jobs()
    CalibrationRunner(model, log, calls=calls, reader=reader).run(jobs)
    assert reader.reads and max(reader.reads.values()) == 1
    originals = {(a.result.query, a.result.original_thought) for a in log.audits()}
    assert len(originals) == len({j.query.id for j in jobs}) and originals <= set(reader.reads)


def test_the_reference_method_gets_the_same_contradictions_with_or_without_the_twin(tmp_path: Path) -> None:
    """The reference has no gate: where the gate made no edit, it is run with the gate-off edit, stored or not."""
    seen: dict[bool, list[tuple[str, str, str | None]]] = {}
    for ungated in (False, True):
        edits: list[tuple[str, str, str | None]] = []

        def reference(trace: Trace, ours: AuditResult) -> Sequence[tuple[Method, AuditResult]]:
            edits.append((trace.query, ours.intervention_type, ours.intervened_thought))  # noqa: B023
            return [("reference_strict", ours), ("reference_lenient", ours)]

        model, calls = counted(calibration_model())
        log = open_run(tmp_path / str(ungated), _manifest())
        runner = CalibrationRunner(
            model, log, calls=calls, reader="rule", ungated=ungated, reference=reference,
            reference_interventions=("logic_flip", "premise_negation"),
        )  # fmt: skip
        runner.run(_jobs())
        seen[ungated] = edits
    assert seen[False] == seen[True]
    assert {kind for _, kind, _ in seen[False]} == {"logic_flip", "premise_negation"}
