"""The records an audit produces, as pure data: one :class:`AuditResult` per audit (defined in
:mod:`ariadne_lc._result`, re-exported here), an :class:`AuditReport` per batch, and the aggregate records a report
holds.

This is a leaf of the package (it imports only pydantic, the standard library and :mod:`ariadne_lc.trace`):
everything that reads a result (stores, span export, write-back, reports, the online worker) imports it from
here, never from the auditor that produces it. The numbers in a report are computed by
:func:`ariadne_lc.stats.build_report`; this module only says what they are. All models are frozen pydantic
models that round-trip through JSON (the stores keep them as JSON).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc._result import (
    LINKS,
    NO_COHERENT_EDIT,
    PLACEBO,
    REJECTIONS,
    ActionCheck,
    AuditResult,
    AuditStatus,
    Decisiveness,
    GateOutcome,
    Label,
    Link,
    ObservationSwap,
    ReplayMode,
    RunUnits,
    SimilarityMetrics,
    Tracking,
)

__all__ = [
    "LINKS",
    "NO_COHERENT_EDIT",
    "PLACEBO",
    "REJECTIONS",
    "ActionCheck",
    "Aggregate",
    "AuditReport",
    "AuditResult",
    "AuditStatus",
    "CorrectedRate",
    "Coverage",
    "Decisiveness",
    "GateOutcome",
    "Label",
    "Link",
    "ObservationSwap",
    "PlaceboComparison",
    "Rate",
    "Redundancy",
    "ReplayMode",
    "RunUnits",
    "SimilarityMetrics",
    "StepContribution",
    "Tracking",
]


class Coverage(BaseModel):
    """How many units of the audited traces got a verdict (faithful or violation), on any link and per link: the first
    number of every summary (docs/method.md#coverage).

    A trace's units are each step with a thought (the unit of the ``thought->action`` and ``thought->answer`` links)
    and each tool output (the unit of ``observation->answer``), whether or not an audit could be planned on them. A unit
    whose every audit was ``not_applicable`` (nothing decisive, no commitment, no value to swap, not testable) or
    failed has no verdict: rates over the others say nothing about it, and :attr:`no_verdict` says why. Runs that
    ended in an error are counted apart (:attr:`runs_failed`): they are listed, never audited."""

    model_config = ConfigDict(frozen=True)

    units: int = 0
    """Thought steps and tool outputs of the audited traces."""
    with_verdict: int = 0
    """Of those, the units with a scored contradiction or swap on at least one of their links."""
    by_link: dict[str, tuple[int, int]] = Field(default_factory=dict)
    """Per link: (units with a verdict on that link, units of that link, those the budget left out included)."""
    by_unit: dict[str, tuple[int, int]] = Field(default_factory=dict)
    """Per kind of unit (``thought``, ``output``): (with a verdict, all)."""
    by_agent: dict[str, tuple[int, int]] = Field(default_factory=dict)
    """Per agent (its name; ``agent`` when the run had none): (units with a verdict, units). Runs of several agents
    (a deep agent and its sub-agents, a supervisor's workers, a swarm) are one trace per agent's run."""
    no_verdict: dict[str, int] = Field(default_factory=dict)
    """Why units got no verdict (a short reason: ``no_commitment``, ``no value to swap``, ...) -> how many."""
    left_out: int = 0
    """Units the default plan's budget did not sample (docs/method.md#the-budget): in :attr:`units`, said apart."""
    runs: int = 0
    """Traces in the report (failed runs included)."""
    runs_failed: dict[str, int] = Field(default_factory=dict)
    """Runs that ended in an error, by error (``GraphRecursionError`` -> 7): recorded, listed, never audited."""
    runs_without_units: int = 0
    """Runs with no unit at all (the agent answered at once)."""
    runs_without_answer: int = 0
    """Runs that ended with an empty answer: none of their audits can have a verdict (nothing to compare)."""
    unchecked: int = 0
    """Verdicts given by replays whose model input could not be checked against a recorded one (scored only with
    ``allow_unchecked=True``): every summary says how many."""
    runs_not_audited: int = 0
    """Agent runs that the audited runs started (sub-agents, ``ToolCall.agents``) with no result among these: their
    units are not in :attr:`units`, so the line says how many runs it does not speak for."""

    @property
    def rate(self) -> float | None:
        """``with_verdict / units``; ``None`` without units."""
        return None if self.units == 0 else self.with_verdict / self.units

    def link_rate(self, link: str) -> float | None:
        """The share of the units audited on ``link`` with a verdict on it; ``None`` when none was audited."""
        k, n = self.by_link.get(link, (0, 0))
        return None if n == 0 else k / n

    line_writer: ClassVar[Callable[[Coverage], str] | None] = None
    """Who says a coverage in words: :func:`ariadne_lc.coverage.coverage_line`, set when that module loads (records
    hold numbers; the layer above writes the prose, and records import nothing of it)."""

    def summary(self) -> str:
        """This coverage in one line, as every summary prints it (:func:`ariadne_lc.coverage.coverage_line`)."""
        writer = type(self).line_writer
        if writer is None:
            raise RuntimeError("import ariadne_lc.coverage (or ariadne_lc) to write a coverage in words")
        return writer(self)


class Aggregate(BaseModel):
    """Counts, rates and means over a group of audit results (computed by :func:`ariadne_lc.stats.aggregate`)."""

    model_config = ConfigDict(frozen=True)

    n: int
    """All results in the group."""
    scored: int
    """Results with a similarity (the denominator of rates and means)."""
    unchecked: int = 0
    """Scored results whose replay's model input could not be checked (``allow_unchecked=True``)."""
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
    reader_checked: int = 0
    """Scored audits where the gate's reading of the original thought could be compared with the recorded answer."""
    reader_disagreed: int = 0
    """Of those, the ones where it was not the recorded answer (the reader reads the thought otherwise than the
    agent)."""
    violations_reader_agreed: int = 0
    """Violations among the audits whose reading was the recorded answer."""
    violations_reader_disagreed: int = 0
    """Violations among ``reader_disagreed``: read them as the reader's claim as much as the agent's."""


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
    """The contradiction results of the report's main link (``thought->answer`` when there are any, else the first
    link of :data:`LINKS` present), and traces that could not be audited at all. Rates are never pooled across
    links: each link's own aggregate is in ``by_link``."""
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
    by_link: dict[str, Aggregate] = Field(default_factory=dict)
    """Per link (:data:`LINKS`): each link's contradictions; controls per link in ``controls_by_link``."""
    controls_by_link: dict[str, dict[str, Aggregate]] = Field(default_factory=dict)
    by_agent: dict[str, dict[str, Aggregate]] = Field(default_factory=dict)
    """In a report of several agents (a caller and its sub-agents, a supervisor and its workers): per agent, per link,
    that agent's contradictions (empty for one agent): a rate pooled over agents hides which one ignores its
    reasoning."""
    """Per link, per control kind."""
    coverage: Coverage | None = None
    """How many audited steps got a verdict, on any link and per link (``None`` in reports built before links)."""
    main_link: str = "thought->answer"
    """The link ``overall`` (and the breakdowns by type, domain, tag and step) are about."""

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
