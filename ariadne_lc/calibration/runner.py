"""The calibration runner: ask the ground-truth agents real questions, audit every run, store every audit at once.

The plan (:func:`plan_jobs`, in :mod:`ariadne_lc.calibration._plan`) splits the questions in two halves per domain:
the coupled and the bypass agent on the *calibrate* half (false-alarm and miss rates), the mixtures and the natural
agent on the *validate* half, interleaved so that a run stopped early is still balanced.

For each job the runner records one real run of the agent (:func:`~ariadne_lc.calibration._model.record_job`), then
audits the thought at step 0 (the natural agent: ``step="auto"``) with each intervention, one at a time, and appends
the :class:`~ariadne_lc.calibration.records.CalibrationAudit` to the run's log before the next one starts. A restarted
run skips every audit already in the log (the agent is run again for a job that was cut half-way, and only the
missing audits are made). When a reference method is given, it audits the same recorded trace with each
contradiction the Auditor made, and its audits go to the same log under their own method names. The auditors are
built in :mod:`ariadne_lc.calibration._auditors`; many jobs, in order or several at once, are run by
:class:`~ariadne_lc.calibration._loop.JobLoop`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from langchain_core.language_models import BaseChatModel

from ariadne_lc.audit import StepSelector
from ariadne_lc.calibration._auditors import RunAuditors
from ariadne_lc.calibration._loop import JobLoop, RunSummary
from ariadne_lc.calibration._model import ReaderChoice, calibration_reader, record_job
from ariadne_lc.calibration._model import counted as counted  # the CLI and the tests count the agents' calls with it
from ariadne_lc.calibration._plan import DEFAULT_PS, CalibrationJob, plan_jobs, split_queries
from ariadne_lc.calibration.agents import AUDITED_STEP
from ariadne_lc.calibration.decisive import decisive_changed, question_kind
from ariadne_lc.calibration.records import CalibrationAudit, Method
from ariadne_lc.calibration.storage import AuditLog, make_key
from ariadne_lc.errors import AriadneError, ConfigurationError
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.implied import AnswerReader
from ariadne_lc.online import retryable_error
from ariadne_lc.records import AuditResult
from ariadne_lc.scoring import SimilarityScorer
from ariadne_lc.trace import Trace

__all__ = [
    "DEFAULT_INTERVENTIONS",
    "DEFAULT_PS",
    "DEFAULT_REFERENCE_INTERVENTIONS",
    "REFERENCE_METHODS",
    "UNAUDITABLE",
    "CalibrationJob",
    "CalibrationRunner",
    "ReaderChoice",
    "ReferenceMethod",
    "RunSummary",
    "calibration_reader",
    "plan_jobs",
    "split_queries",
]

DEFAULT_INTERVENTIONS: tuple[str, ...] = (
    "logic_flip",
    "fact_reversal",
    "premise_negation",
    "causal_reversal",
    "conclusion_swap",
    "rerun",
    "paraphrase",
)
"""The five contradictions, the ``rerun`` control (replay noise) and the ``paraphrase`` placebo."""

DEFAULT_REFERENCE_INTERVENTIONS: tuple[str, ...] = ("logic_flip",)
"""The public Ariadne code audits with a logic flip of the first step; so does the baseline here by default."""

REFERENCE_METHODS: tuple[Method, ...] = ("reference_strict", "reference_lenient")

UNAUDITABLE = "-"
"""The intervention type of the record that says a run could not be audited at all."""

ReferenceMethod = Callable[[Trace, AuditResult], Sequence[tuple[Method, AuditResult]]]
"""A baseline auditing the same trace with the same contradiction (our result carries the intervened thought);
returns one result per variant, named by its method."""


def _first_edit_kept(result: AuditResult) -> bool:
    """Whether the gate-on audit replayed the critic's first edit, or made no gate decision at all."""
    gate = result.decisiveness
    if gate is None:
        return result.status != "not_applicable" or result.intervened_thought is None
    return gate.outcome in ("decisive", "placebo_kept") and gate.attempts == 1


class CalibrationRunner(JobLoop):
    """Runs calibration jobs on one model and appends every audit to a log.

    Args:
        model: the chat model every agent runs on (count its calls with :func:`counted` first).
        log: where each audit goes the moment it finishes (and what is already done).
        critic, scorer, paraphraser: the audit configuration (``None``: the Auditor's defaults).
        interventions: contradictions and controls, audited one at a time.
        tau, lam: the violation rule.
        constrained: send the llama.cpp grammars.
        reference: the reference method, run on the same traces (``None``: not run).
        reference_interventions: the contradictions the reference method is run with.
        calls: reads the model-call count (for ``max_calls``).
        max_calls: stop cleanly at this many model calls.
        seed: the auditor's seed.
        decisive: audit with the decisiveness gate (method ``ariadne``); ``False``: without it.
        ungated: with the gate on, also store each audit as the gate-off pipeline makes it (method
            ``ariadne_ungated``) on the same trace: the edit the critic made first, replayed whatever it implies.
            When the gate accepted that very edit, the gate-on record is reused (same edit, same trace, same
            replay); otherwise it is replayed. Off by default: the gate-off side is a comparison a run asks for
            (``--ungated``), and its replays of the edits the gate rejected cost model calls no gated rate uses.
        reader: the gate's reader: ``model`` (the agents' own model, :func:`calibration_reader`), ``rule``, or
            any reader.
        rederive: also audit the ``coupled_tool`` agent with the step's tool calls re-derived from the intervened
            thought (method ``ariadne_rederive``: ``Auditor(tool_calls="rederive")`` with the agent's own derivation,
            :func:`~ariadne_lc.calibration.agents.coupled_tool_deriver`, and its side-effect-free ``commit`` tool
            declared safe, so a re-derived call runs live).
    """

    def __init__(
        self,
        model: BaseChatModel,
        log: AuditLog,
        *,
        critic: Critic | None = None,
        scorer: SimilarityScorer | None = None,
        paraphraser: Critic | None = None,
        interventions: Sequence[str] = DEFAULT_INTERVENTIONS,
        tau: float = 0.8,
        lam: int = 0,
        constrained: bool = False,
        reference: ReferenceMethod | None = None,
        reference_interventions: Sequence[str] = DEFAULT_REFERENCE_INTERVENTIONS,
        calls: Callable[[], int] | None = None,
        max_calls: int | None = None,
        seed: int = 0,
        decisive: bool = True,
        ungated: bool = False,
        reader: ReaderChoice | AnswerReader = "model",
        rederive: bool = False,
    ) -> None:
        if max_calls is not None and max_calls < 0:
            raise ConfigurationError(f"max_calls must not be negative, got {max_calls}")
        self.model = model
        self.log = log
        self.interventions = tuple(interventions)
        self.reference = reference
        self.reference_interventions = tuple(k for k in reference_interventions if k in self.interventions)
        self.max_calls = max_calls
        self._calls = calls or (lambda: 0)
        self.decisive = decisive
        self.ungated = ungated and decisive
        self.rederive = rederive
        self.deferred = 0
        """Audits not stored because they failed for a reason a retry may fix (see RunSummary.audits_deferred)."""
        self._deferred_lock = threading.Lock()
        self._auditors = RunAuditors(
            model,
            critic=critic,
            scorer=scorer,
            paraphraser=paraphraser,
            tau=tau,
            lam=lam,
            constrained=constrained,
            seed=seed,
            decisive=decisive,
            reader=reader,
        )

    def _methods(self, job: CalibrationJob) -> tuple[Method, ...]:
        methods: list[Method] = ["ariadne"]
        if self.ungated and job.agent != "natural":
            methods.append("ariadne_ungated")
        if self.rederive and job.agent == "coupled_tool":
            methods.append("ariadne_rederive")
        return tuple(methods)

    # -- one job ---------------------------------------------------------------------------------

    def _missing(self, job: CalibrationJob, method: Method = "ariadne") -> list[str]:
        qid = job.query.id
        if self.log.has(make_key(method, job.agent, job.p, qid, UNAUDITABLE)):
            return []
        return [k for k in self.interventions if not self.log.has(make_key(method, job.agent, job.p, qid, k))]

    def _reference_missing(self, job: CalibrationJob) -> bool:
        if self.reference is None or job.agent == "natural" or not job.reference:
            return False
        qid = job.query.id
        return not all(
            self.log.has(make_key(m, job.agent, job.p, qid, k))
            for m in REFERENCE_METHODS
            for k in self.reference_interventions
        )

    def _reference_missing_for(self, job: CalibrationJob, kind: str) -> bool:
        if kind not in self.reference_interventions or not self._reference_missing(job):
            return False
        return not all(self.log.has(make_key(m, job.agent, job.p, job.query.id, kind)) for m in REFERENCE_METHODS)

    def _store(self, job: CalibrationJob, result: AuditResult, method: Method = "ariadne") -> None:
        if self.halted():  # the run was interrupted while this job was in flight (see JobLoop.halted)
            return
        changed = None
        if job.agent != "natural" and result.step_index == AUDITED_STEP:
            kind = question_kind(job.query.question)
            changed = decisive_changed(result.original_thought, result.intervened_thought, kind)
        self.log.append(
            CalibrationAudit(
                agent=job.agent,
                p=job.p,
                truth=job.truth,
                split=job.split,
                query_id=job.query.id,
                domain=job.query.domain,
                method=method,
                decisive_changed=changed,
                result=result,
            )
        )

    def run_job(self, job: CalibrationJob) -> int:
        """Record and audit one job (only what the log lacks); returns the number of audits written."""
        methods = self._methods(job)
        missing = {m: self._missing(job, m) for m in methods}
        want_reference = self._reference_missing(job)
        if not any(missing.values()) and not want_reference:
            return 0
        auditor = self._auditors.get(job.agent, job.p)
        trace = record_job(job, auditor.replayer.graph)
        step: StepSelector = "auto" if job.agent == "natural" else AUDITED_STEP
        written = 0
        made: list[AuditResult] = []
        for kind in dict.fromkeys([*self.interventions]):
            wanted = [m for m in methods if kind in missing[m]]
            if not wanted and not (want_reference and kind in self.reference_interventions):
                continue
            if not self._budget_left():
                break
            gated: list[AuditResult] = []
            order: list[Method] = ["ariadne", *[m for m in wanted if m != "ariadne"]]
            if "ariadne_ungated" not in order and self._reference_missing_for(job, kind):
                order.append("ariadne_ungated")  # the reference's contradiction where the gate made none (below)
            for method in order:
                if method not in wanted and method != "ariadne":
                    made += self._reference_edit(job, trace, step, kind, gated)
                    continue
                try:
                    results = self._audit_with(job, trace, step, kind, method, gated)
                except AriadneError as exc:
                    for m in wanted:
                        mode = self._auditors.get(job.agent, job.p, m).replay_mode
                        failed = AuditResult.unauditable(trace, exc, replay_mode=mode)
                        self._store(job, failed, m)
                    return written + len(wanted)
                if len(results) == 1 and results[0].nothing_to_audit:  # step="auto" found no substantive step
                    for m in wanted:
                        self._store(job, results[0], m)
                    return written + len(wanted)
                if method == "ariadne":
                    gated = results
                if method in ("ariadne", "ariadne_ungated"):
                    made += results
                if method in wanted:
                    if retryable_error(results) is not None:  # the model or a replay failed: a resume retries it
                        with self._deferred_lock:
                            self.deferred += len(results)
                        continue
                    for r in results:
                        self._store(job, r, method)
                        written += 1
        if want_reference and self.reference is not None:
            written += self._run_reference(job, trace, made)
        return written

    def _audit_with(
        self,
        job: CalibrationJob,
        trace: Trace,
        step: StepSelector,
        kind: str,
        method: Method,
        gated: Sequence[AuditResult],
    ) -> list[AuditResult]:
        """One method's audits of ``kind``. The gate-off record of an edit the gate accepted at its first attempt
        is the gate-on record without the gate's verdict: the same edit of the same trace, the same replay."""
        if method == "ariadne_ungated" and gated and all(_first_edit_kept(r) for r in gated):
            return [r.model_copy(update={"decisiveness": None, "tracking": None}) for r in gated]
        return self._auditors.get(job.agent, job.p, method).audit(trace, step, [kind])

    def _reference_edit(
        self, job: CalibrationJob, trace: Trace, step: StepSelector, kind: str, gated: Sequence[AuditResult]
    ) -> list[AuditResult]:
        """The gate-off audit of ``kind``, not stored: what the reference method is run with when the gate made no
        edit of this kind (the reference has no gate; the same edits as with the twin stored beside it)."""
        if not self.decisive or any(r.intervened_thought is not None for r in gated):
            return []
        try:
            return self._audit_with(job, trace, step, kind, "ariadne_ungated", gated)
        except AriadneError:  # the gate-on audit of the same edit went through; the reference just skips this one
            return []

    def _run_reference(self, job: CalibrationJob, trace: Trace, made: Sequence[AuditResult]) -> int:
        assert self.reference is not None
        written = 0
        done: set[str] = set()
        for ours in made:  # the gate-on edit, else the gate-off one (the reference has no gate)
            kind = ours.intervention_type
            if kind not in self.reference_interventions or ours.intervened_thought is None or kind in done:
                continue
            done.add(kind)
            todo = [m for m in REFERENCE_METHODS if not self.log.has(make_key(m, job.agent, job.p, job.query.id, kind))]
            if not todo or not self._budget_left():
                continue
            for method, result in self.reference(trace, ours):
                if method in todo:
                    self._store(job, result, method)
                    written += 1
        return written
