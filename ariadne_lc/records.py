"""The records an audit produces, as pure data: one :class:`AuditResult` per audit, an :class:`AuditReport`
per batch, and the aggregate records a report holds.

This is a leaf of the package (it imports only pydantic, the standard library and :mod:`ariadne_lc.trace`):
everything that reads a result (stores, span export, write-back, reports, the online worker) imports it from
here, never from the auditor that produces it. The numbers in a report are computed by
:func:`ariadne_lc.stats.build_report`; this module only says what they are. All models are frozen pydantic
models that round-trip through JSON (the stores keep them as JSON).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc.trace import Step, Trace

__all__ = [
    "PLACEBO",
    "Aggregate",
    "AuditReport",
    "AuditResult",
    "AuditStatus",
    "CorrectedRate",
    "Decisiveness",
    "GateOutcome",
    "Label",
    "PlaceboComparison",
    "Rate",
    "Redundancy",
    "ReplayMode",
    "SimilarityMetrics",
    "StepContribution",
    "Tracking",
]

AuditStatus = Literal["scored", "not_applicable", "inconclusive", "failed"]
"""``scored``, ``not_applicable`` (nothing to contradict, or no step to audit), ``inconclusive`` (an empty
answer, no S, too weak, the length gate) or ``failed``."""

Label = Literal["faithful", "violation", "inconclusive", "control"]
"""``control`` marks a scored control (placebo, rerun, ...): its answer holding is not a faithfulness verdict."""

PLACEBO: Final = "paraphrase"
"""The control used as placebo (``ControlType.PARAPHRASE``; a test pins that the two agree)."""


GateOutcome = Literal["decisive", "not_decisive", "no_commitment", "placebo_kept", "placebo_changed", "incoherent"]
"""What the decisiveness gate decided (docs/method.md#the-decisiveness-gate):

- ``decisive``: the contradiction changed the answer the thought implies (it is replayed and scored);
- ``not_decisive``: no edit the critic made within its attempts changed it (``not_applicable``, never scored);
- ``no_commitment``: the original thought implies no answer, so no contradiction of it can be checked;
- ``placebo_kept``: a paraphrase kept the implied answer (a valid placebo);
- ``placebo_changed``: every paraphrase tried changed it (no placebo: ``not_applicable``);
- ``incoherent``: every edit the critic made within its attempts contradicted itself (a stated calculation it does
  not hold, a calculation resting on the premise it negates, ...: :mod:`ariadne_lc.interventions.coherence`), so
  none was read (``not_applicable``, never scored).
"""

ReplayMode = Literal["recorded", "rederive"]
"""What the replay does with the audited step's own tool calls (docs/method.md#the-steps-own-tool-calls):
``recorded`` keeps them and their recorded outputs; ``rederive`` asks a deriver for the calls the intervened
thought leads to and runs those under the tool policy."""

Tracking = Literal["tracks", "elsewhere", "stayed"]
"""Where the counterfactual answer went: to the answer the intervened thought implies (``tracks``), somewhere
else (``elsewhere``), or nowhere (``stayed``: the answer held, the violation case)."""


class Decisiveness(BaseModel):
    """The decisiveness gate's record for one audit: what the original and the intervened thought imply."""

    model_config = ConfigDict(frozen=True)

    outcome: GateOutcome
    reader: str
    """Which reader decided (``rule``, ``model:<name>``)."""
    form: str = "none"
    """How the original thought states its commitment (``calculation``, ``number``, ``option``, ``yes_no``,
    ``text``, ``none``): false-alarm rates differ by form, so reports break them down by it."""
    original_implied: str | None = None
    """The answer the original thought implies."""
    intervened_implied: str | None = None
    """The answer the accepted edit implies (for a rejection: the last edit tried)."""
    similarity: float | None = None
    """S between the two implied answers, by the audit's own scorer (decisive when S <= τ)."""
    attempts: int = 0
    """Edits the gate read (the first and each revision)."""
    rejected: tuple[str, ...] = ()
    """Each rejected edit and why, in order."""
    incoherent: int = 0
    """Edits rejected unread because they contradicted themselves (part of ``attempts``; each ``rejected`` entry
    of theirs starts with ``incoherent:``)."""


class SimilarityMetrics(BaseModel):
    """m(a, a*) = [J, C, L, E, S]."""

    model_config = ConfigDict(frozen=True)

    jaccard: float
    char: float
    length: float
    exact: float
    semantic: float | None
    """S; ``None`` when the scorer was inconclusive."""


class AuditResult(BaseModel):
    """One audit: a trace, a step (or several), an intervention or control, and how the answer responded."""

    model_config = ConfigDict(frozen=True)

    result_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    trace_id: str
    thread_id: str | None = None
    query: str = ""
    step_index: int
    """The step intervened on (the earliest one of a multi-step intervention)."""
    intervention_type: str
    """The contradiction or control actually applied (a ``random``/``adaptive`` request resolved)."""
    status: AuditStatus
    """``scored``, ``not_applicable`` (nothing to contradict, or no step to audit), ``inconclusive`` (an empty
    answer, no S, too weak, the length gate) or ``failed``."""
    label: Label
    """``faithful``/``violation`` (scored contradictions), ``control`` (scored controls), else ``inconclusive``:
    only a scored audit carries a verdict."""
    original_thought: str
    """The step's thought (several steps' thoughts joined by a blank line for a multi-step intervention)."""
    intervened_thought: str | None = None
    """What replaced it (joined the same way); empty for ``ablation``, unchanged for ``rerun``/``early_answer``."""
    intervention_method: str | None = None
    original_answer: str | None = None
    counterfactual_answer: str | None = None
    scored_answers: tuple[str, str] | None = None
    """(a, a*) as scored, when the auditor's ``answer_extractor`` took them out of the final messages."""
    metrics: SimilarityMetrics | None = None
    """m(a, a*) = [J, C, L, E, S]."""
    similarity: float | None = None
    """S, as the configured scorer computed it."""
    similarity_method: str | None = None
    explanation: str | None = None
    phi: float | None = None
    """φ = 1 − S: 1 means the answer moved with the reasoning, 0 means it ignored the contradiction."""
    violation: bool = False
    """The violation rule fired (S > τ, both answers longer than λ). For a control it means the answer held."""
    length_gate_exempted: bool = False
    """S > τ, but an answer was not longer than λ: no verdict (status and label ``inconclusive``, the reason in
    ``inconclusive_reason``), counted apart in :attr:`Aggregate.length_gate_exempted`."""
    answer_changed: bool | None = None
    """Whether the normalised answers differ at all."""
    strength: float | None = None
    """Intervention strength 1 − sim(thought, thought'); the mean over steps of a multi-step intervention."""
    counterfactual_steps: tuple[Step, ...] = ()
    replay_checkpoint_id: str | None = None
    replay_thread_id: str | None = None
    model_calls: int = 0
    tools_recorded: int = 0
    tools_live: int = 0
    tools_unavailable: tuple[str, ...] = ()
    """Tools refused during the replay; when non-empty, read the result with care."""
    error: str | None = None
    """What went wrong, for a human (``"<ErrorClass>: <message>"``); never parse it, read ``error_type``."""
    error_type: str | None = None
    """The class name of the error that failed the audit (e.g. ``"ReplayError"``), set whenever ``error`` is;
    :func:`ariadne_lc.errors.error_class` maps it back to the class (``issubclass(..., ReplayError)``)."""
    duration_s: float = 0.0
    agent_name: str | None = None
    tags: tuple[str, ...] = ()
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    control: bool = False
    """A control (placebo, rerun, ablation, early answer, filler), reported beside the contradictions."""
    step_indices: tuple[int, ...] = ()
    """All steps intervened on at once (one for a single-step audit)."""
    type_selection: str = "fixed"
    """How the type was chosen: ``fixed``, ``random`` or ``adaptive:<pattern>``."""
    severity: float | None = None
    """Graded severity S × strength (docs/method.md#severity)."""
    too_weak: bool = False
    """The intervention was weaker than the auditor's ``min_strength``: inconclusive, never a violation."""
    inconclusive_reason: str | None = None
    """Why the audit gave no verdict: an empty answer (which side), a judge reply that was no number, a too
    weak intervention, the length gate, or (with :attr:`nothing_to_audit`) why no step could be audited."""
    similarity_samples: tuple[float, ...] = ()
    """Individual judgments when S is an average of repeated ones."""
    similarity_spread: float | None = None
    """Their standard deviation."""
    intervention_rejections: tuple[str, ...] = ()
    """Critic replies rejected before the one used (or before giving up)."""
    domain: str | None = None
    """The trace's domain (:attr:`ariadne_lc.trace.Trace.domain`)."""
    decisiveness: Decisiveness | None = None
    """The decisiveness gate's record; ``None`` with the gate off (``Auditor(decisive=False)``) and for controls
    other than the placebo."""
    tracking: Tracking | None = None
    """Where the counterfactual answer went, when the intervened thought's implied answer is known."""
    nothing_to_audit: bool = False
    """The trace has no step to audit (the agent answered at once, or no thought qualified for ``step="auto"``):
    the one result of such a trace, ``not_applicable``, with the reason in ``inconclusive_reason``."""
    replay_mode: ReplayMode = "recorded"
    """What the replay did with the audited step's own tool calls: kept them with their recorded outputs
    (``recorded``, the default), or re-derived them from the intervened thought (``rederive``); the auditor's
    setting, also on results that were never replayed."""
    tool_call_deriver: str | None = None
    """Who re-derived the step's tool calls (the deriver's ``name``); ``None`` in ``recorded`` mode."""

    @classmethod
    def _of_whole_trace(
        cls,
        trace: Trace,
        status: AuditStatus,
        replay_mode: ReplayMode,
        *,
        reason: str | None = None,
        error: str | None = None,
        error_type: str | None = None,
    ) -> AuditResult:
        """A result about a trace as a whole: no step was intervened on (``step_index`` -1, type ``-``)."""
        return cls(
            replay_mode=replay_mode,
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=-1,
            intervention_type="-",
            status=status,
            label="inconclusive",
            original_thought="",
            original_answer=trace.final_answer,
            inconclusive_reason=reason,
            nothing_to_audit=status == "not_applicable",
            error=error,
            error_type=error_type,
            agent_name=trace.agent_name,
            tags=trace.tags,
            domain=trace.domain,
        )

    @classmethod
    def no_step_to_audit(cls, trace: Trace, reason: str, *, replay_mode: ReplayMode = "recorded") -> AuditResult:
        """The result that says ``trace`` has no step to audit, and why (so that no trace given to an audit
        leaves no trace of it)."""
        return cls._of_whole_trace(trace, "not_applicable", replay_mode, reason=reason)

    @classmethod
    def unauditable(
        cls,
        trace: Trace,
        error: BaseException | str,
        *,
        error_type: str | None = None,
        replay_mode: ReplayMode = "recorded",
    ) -> AuditResult:
        """The failed result that records why a trace could not be audited at all (an error before or around
        its audits: no answer, a step out of range, the answer step; see :meth:`no_step_to_audit` for a trace
        that simply has no step to audit).

        Args:
            trace: The trace.
            error: The exception (its class name becomes ``error_type``), or a message for a failure that
                is no exception of ours (then pass ``error_type`` when one class explains it).
            error_type: The class name when ``error`` is a message.
            replay_mode: The auditor's replay mode (:attr:`replay_mode`).
        """
        if isinstance(error, BaseException):
            error, error_type = f"{type(error).__name__}: {error}", type(error).__name__
        return cls._of_whole_trace(trace, "failed", replay_mode, error=error, error_type=error_type)


class Aggregate(BaseModel):
    """Counts, rates and means over a group of audit results (computed by :func:`ariadne_lc.stats.aggregate`)."""

    model_config = ConfigDict(frozen=True)

    n: int
    """All results in the group."""
    scored: int
    """Results with a similarity (the denominator of rates and means)."""
    violations: int
    not_applicable: int
    """Results with nothing to contradict, and traces with no step to audit (see :attr:`nothing_to_audit`)."""
    failed: int
    inconclusive: int
    """Results without a verdict: an empty answer, no S, too weak (:attr:`too_weak`), the length gate
    (:attr:`length_gate_exempted`)."""
    length_gate_exempted: int
    """Equal answers that got no verdict only because an answer was not longer than λ (part of ``inconclusive``:
    never counted as faithful, never in a rate)."""
    violation_rate: float | None
    """For a control group: how often the violation rule fired, i.e. the answer held."""
    violation_rate_ci: tuple[float, float] | None
    """Wilson interval of the violation rate."""
    mean_phi: float | None
    mean_similarity: float | None
    queries: int = 0
    """Distinct traces among the scored results (the bootstrap's unit)."""
    mean_phi_ci: tuple[float, float] | None = None
    """Bootstrap interval of mean φ over queries."""
    mean_similarity_ci: tuple[float, float] | None = None
    """Bootstrap interval of mean S over queries."""
    mean_strength: float | None = None
    """Mean intervention strength of the scored results that have one."""
    mean_severity: float | None = None
    """Mean graded severity S × strength of the scored results that have one."""
    too_weak: int = 0
    """Results made inconclusive because the intervention was weaker than the auditor's ``min_strength``."""
    gated: int = 0
    """Audits the decisiveness gate decided on (every outcome): the denominator of the not-decisive share."""
    not_decisive: int = 0
    """Contradictions rejected by the decisiveness gate: no edit changed what the thought commits to."""
    no_commitment: int = 0
    """Audits whose original thought commits to no answer (nothing a contradiction could change)."""
    tracks: int = 0
    """Scored audits whose counterfactual answer moved to the answer the intervened thought implies."""
    moved_elsewhere: int = 0
    """Scored audits whose answer moved, but not to the intervened thought's implied answer."""
    stayed: int = 0
    """Scored audits with a tracking verdict whose answer did not move (the violations among them)."""
    tracked: int = 0
    """Scored audits with a tracking verdict (the denominator of ``tracking_rate``): tracks + elsewhere + stayed."""
    tracking_rate: float | None = None
    """tracks / tracked: how often the answer followed the contradiction to where it points."""
    tracking_rate_ci: tuple[float, float] | None = None
    """Wilson interval of the tracking rate."""
    nothing_to_audit: int = 0
    """Traces that had no step to audit (one ``not_applicable`` result each, part of ``not_applicable``)."""
    incoherent: int = 0
    """Contradictions rejected by the gate because every edit tried contradicted itself (outcome ``incoherent``)."""


class PlaceboComparison(BaseModel):
    """Contradictions against the placebo, paired by query (see :mod:`ariadne_lc.stats`)."""

    model_config = ConfigDict(frozen=True)

    placebo: str = PLACEBO
    """The control used as placebo."""
    queries: int
    """Queries with at least one scored contradiction and one scored placebo."""
    violation_rate: float | None
    """Mean over those queries of the contradictions' violation rate."""
    placebo_rate: float | None
    """Mean over those queries of how often the answer held under the placebo."""
    excess_sensitivity: float | None
    """placebo_rate − violation_rate: how much more often a contradiction moved the answer than the placebo."""
    excess_sensitivity_ci: tuple[float, float] | None
    """Bootstrap interval (over queries) of the excess sensitivity."""
    corrected_violation_rate: float | None
    """1 − max(0, excess_sensitivity): the violation rate once placebo-level movement is discounted."""
    p_value: float | None
    """Two-sided p-value of the paired test (H0: the contradictions move the answer as often as the placebo)."""
    test: str
    """The paired test used (:data:`ariadne_lc.stats.PAIRED_TEST`)."""


class StepContribution(BaseModel):
    """FaithCheck's causal contribution score of one step of one trace."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    step_index: int
    ccs: float
    """Mean φ over the step's scored single-step content interventions."""
    audits: int
    """How many audits the mean is over."""


class Redundancy(BaseModel):
    """Per-step contributions ranked per trace, and the reasoning redundancy ratio over all steps."""

    model_config = ConfigDict(frozen=True)

    threshold: float
    """CCS below which a step counts as redundant."""
    steps: int
    """(trace, step) pairs with a CCS."""
    redundant: int
    rrr: float | None
    """Share of steps with CCS below the threshold; ``None`` without steps."""
    rrr_ci: tuple[float, float] | None
    """Wilson interval of the RRR."""
    ranking: dict[str, tuple[StepContribution, ...]] = Field(default_factory=dict)
    """Per trace id, its steps from the highest CCS down (ties: earlier step first)."""


class Rate(BaseModel):
    """A proportion k/n with its Wilson interval, and its counts per query for the cluster bootstrap."""

    model_config = ConfigDict(frozen=True)

    k: int
    """Events (false alarms, misses, answers that moved, ...)."""
    n: int
    """Trials: the denominator."""
    rate: float | None
    """k/n; ``None`` when n = 0."""
    ci: tuple[float, float] | None
    """Wilson interval at the calibration's confidence; ``None`` when n = 0."""
    clusters: tuple[tuple[int, int], ...] = ()
    """(k, n) per query, kept for the rates a correction uses: audits of one query share its agent run,
    so the bootstrap resamples queries, not audits."""


class CorrectedRate(BaseModel):
    """An observed violation rate corrected for the pipeline's measured misclassification (Rogan–Gladen).

    With the calibration's false-alarm rate FA (a violation called on an agent known to be faithful) and
    miss rate M (no violation on an agent known to be unfaithful), an observed rate v estimates the true
    rate as (v − FA) / (1 − FA − M), clipped to [0, 1]. When FA + M ≥ 1 the audit cannot tell the two
    kinds of agent apart: ``corrected`` is ``None`` and ``reason`` says why. Never a default number.
    """

    model_config = ConfigDict(frozen=True)

    observed: float | None
    """The raw violation rate v."""
    observed_ci: tuple[float, float] | None
    """Its Wilson interval (from the report)."""
    scored: int
    """Scored audits behind v."""
    queries: int
    """Distinct traces among them (the bootstrap's unit)."""
    false_alarm: float | None
    """FA from the calibration."""
    miss: float | None
    """M from the calibration."""
    corrected: float | None
    """The corrected rate, clipped to [0, 1]; ``None`` when the audit carries no information."""
    unclipped: float | None = None
    """(v − FA) / (1 − FA − M) before clipping (outside [0, 1] means sampling error or a shifted population)."""
    corrected_ci: tuple[float, float] | None = None
    """Percentile bootstrap interval that resamples the audited queries and both calibration samples."""
    informative: bool
    """FA + M < 1: the audit separates faithful from unfaithful agents at all."""
    reason: str | None = None
    """Why there is no corrected number (or why its interval is missing)."""
    undefined_resamples: int = 0
    """Bootstrap resamples in which FA* + M* ≥ 1; each is counted as possibly anywhere in [0, 1], so the
    interval widens to cover them instead of dropping them."""
    confidence: float = 0.95
    n_resamples: int = 0
    seed: int = 0
    intervention: str = "all"
    """The contradiction type the rates are for (``all``: every contradiction pooled)."""
    calibration: str = ""
    """The calibration's configuration and method, in words (``model=…, critic=…, …``)."""


class AuditReport(BaseModel):
    """A batch of results with the aggregates of docs/method.md#aggregates, broken down, beside the controls.

    Built by :func:`ariadne_lc.stats.build_report` (or :meth:`ariadne_lc.Auditor.audit_batch`).
    ``overall`` and every breakdown except ``by_control`` cover the contradictions only; the controls
    are aggregated per kind in ``by_control``. ``placebo`` compares the contradictions with the
    ``paraphrase`` control query by query; ``redundancy`` holds the per-step CCS ranking and the RRR
    (most useful with ``step="all"``). See :mod:`ariadne_lc.stats` for every interval and test.
    """

    model_config = ConfigDict(frozen=True)

    results: tuple[AuditResult, ...]
    overall: Aggregate
    """All contradiction results (and traces that could not be audited at all)."""
    by_type: dict[str, Aggregate]
    """Per contradiction type."""
    by_control: dict[str, Aggregate] = Field(default_factory=dict)
    """Per control kind (its violation rate is how often the answer held)."""
    by_domain: dict[str, Aggregate] = Field(default_factory=dict)
    """Per trace domain (``unspecified`` for traces without one)."""
    by_tag: dict[str, Aggregate] = Field(default_factory=dict)
    """Per run tag (a result with several tags is in several groups)."""
    by_step: dict[str, Aggregate] = Field(default_factory=dict)
    """Per step index (``"0+2"`` for a multi-step intervention on steps 0 and 2)."""
    placebo: PlaceboComparison | None = None
    """All contradictions against the placebo; ``None`` without placebo results."""
    placebo_by_type: dict[str, PlaceboComparison] = Field(default_factory=dict)
    """Each contradiction type against the placebo."""
    redundancy: Redundancy | None = None
    """Per-step causal contribution (CCS) ranking and the redundancy ratio (RRR)."""
    confidence: float
    """The level of every interval."""
    seed: int
    """The seed of every bootstrap and permutation test."""
    corrected: CorrectedRate | None = None
    """The overall violation rate corrected with a calibration, beside the raw one in ``overall``; ``None``
    without a calibration (see :func:`ariadne_lc.calibration.apply_calibration`)."""
    corrected_by_type: dict[str, CorrectedRate] = Field(default_factory=dict)
    """Per contradiction type that the calibration measured."""

    @property
    def violation_rate(self) -> float | None:
        return self.overall.violation_rate

    @property
    def mean_phi(self) -> float | None:
        return self.overall.mean_phi

    @property
    def nothing_to_audit(self) -> int:
        """Traces given to the audit that had no step to audit."""
        return self.overall.nothing_to_audit

    @property
    def mean_similarity(self) -> float | None:
        return self.overall.mean_similarity

    @property
    def placebo_rate(self) -> float | None:
        """How often the answer held under the placebo (``by_control["paraphrase"]``), over all its audits."""
        placebo = self.by_control.get(PLACEBO)
        return None if placebo is None else placebo.violation_rate
