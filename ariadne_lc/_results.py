"""The records an audit produces: one :class:`AuditResult` per audit, an :class:`AuditReport` per batch.

Both are pydantic models that round-trip through JSON (the stores keep them as JSON). Re-exported by
:mod:`ariadne_lc.audit`, where they belong in the data flow.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc.calibration.rates import CorrectedRate
from ariadne_lc.interventions import ControlType
from ariadne_lc.scoring import Label
from ariadne_lc.scoring.faithfulness import SimilarityMetrics
from ariadne_lc.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_N_RESAMPLES,
    DEFAULT_RRR_THRESHOLD,
    DEFAULT_SEED,
    UNSPECIFIED_DOMAIN,
    Aggregate,
    PlaceboComparison,
    Redundancy,
    aggregate,
    placebo_comparison,
    redundancy,
)
from ariadne_lc.trace import Step, Trace

__all__ = ["AuditReport", "AuditResult", "AuditStatus"]

AuditStatus = Literal["scored", "not_applicable", "inconclusive", "failed"]


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
    """``scored``, ``not_applicable`` (nothing to contradict), ``inconclusive`` (no S, too weak) or ``failed``."""
    label: Label
    """``faithful``/``violation`` (scored contradictions), ``control`` (scored controls), else ``inconclusive``."""
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
    """Graded severity S × strength (formulation 10.2)."""
    too_weak: bool = False
    """The intervention was weaker than the auditor's ``min_strength``: inconclusive, never a violation."""
    inconclusive_reason: str | None = None
    """Why the audit is inconclusive (a judge reply that was no number, a too weak intervention)."""
    similarity_samples: tuple[float, ...] = ()
    """Individual judgments when S is an average of repeated ones."""
    similarity_spread: float | None = None
    """Their standard deviation."""
    intervention_rejections: tuple[str, ...] = ()
    """Critic replies rejected before the one used (or before giving up)."""
    domain: str | None = None
    """The trace's domain (``metadata["domain"]`` or a ``domain:<x>`` tag)."""

    @classmethod
    def unauditable(cls, trace: Trace, error: str) -> AuditResult:
        """The result that records why a trace could not be audited at all (no step, no intervention)."""
        from ariadne_lc.stats import domain_of

        return cls(
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=-1,
            intervention_type="-",
            status="failed",
            label="inconclusive",
            original_thought="",
            original_answer=trace.final_answer,
            error=error,
            agent_name=trace.agent_name,
            tags=trace.tags,
            domain=domain_of(trace.tags, trace.metadata),
        )


def _groups(items: Iterable[AuditResult], key: Callable[[AuditResult], Iterable[str]]) -> dict[str, list[AuditResult]]:
    out: dict[str, list[AuditResult]] = defaultdict(list)
    for r in items:
        for k in key(r):
            out[k].append(r)
    return dict(sorted(out.items()))


def _step_key(r: AuditResult) -> str:
    steps = r.step_indices or (r.step_index,)
    return "+".join(str(k) for k in steps)


class AuditReport(BaseModel):
    """A batch of results with the formulation's aggregates, broken down, beside the controls.

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
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = DEFAULT_SEED
    corrected: CorrectedRate | None = None
    """The overall violation rate corrected with a calibration (raw beside it in ``overall``); ``None``
    without one. See :func:`ariadne_lc.calibration.apply_calibration`."""
    corrected_by_type: dict[str, CorrectedRate] = Field(default_factory=dict)
    """Per contradiction type the calibration measured."""

    @classmethod
    def from_results(
        cls,
        results: Iterable[AuditResult],
        *,
        confidence: float = DEFAULT_CONFIDENCE,
        seed: int = DEFAULT_SEED,
        n_resamples: int = DEFAULT_N_RESAMPLES,
        rrr_threshold: float = DEFAULT_RRR_THRESHOLD,
    ) -> AuditReport:
        """Aggregate ``results``; intervals use ``confidence``, bootstraps and permutations ``seed``."""
        items = tuple(results)
        real = [r for r in items if not r.control]
        controls = [r for r in items if r.control]
        placebos = [r for r in controls if r.intervention_type == ControlType.PARAPHRASE]

        def agg(group: Iterable[AuditResult]) -> Aggregate:
            return aggregate(group, confidence, n_resamples=n_resamples, seed=seed)

        def versus(group: Iterable[AuditResult]) -> PlaceboComparison:
            return placebo_comparison(group, placebos, confidence=confidence, n_resamples=n_resamples, seed=seed)

        by_type = _groups(real, lambda r: [r.intervention_type])
        return cls(
            results=items,
            overall=agg(real),
            by_type={k: agg(v) for k, v in by_type.items()},
            by_control={k: agg(v) for k, v in _groups(controls, lambda r: [r.intervention_type]).items()},
            by_domain={k: agg(v) for k, v in _groups(real, lambda r: [r.domain or UNSPECIFIED_DOMAIN]).items()},
            by_tag={k: agg(v) for k, v in _groups(real, lambda r: r.tags).items()},
            by_step={k: agg(v) for k, v in _groups(real, lambda r: [_step_key(r)]).items()},
            placebo=versus(real) if placebos else None,
            placebo_by_type={k: versus(v) for k, v in by_type.items() if k != "-"} if placebos else {},
            redundancy=redundancy(items, threshold=rrr_threshold, confidence=confidence),
            confidence=confidence,
            seed=seed,
        )

    @property
    def violation_rate(self) -> float | None:
        return self.overall.violation_rate

    @property
    def mean_phi(self) -> float | None:
        return self.overall.mean_phi

    @property
    def mean_similarity(self) -> float | None:
        return self.overall.mean_similarity

    @property
    def placebo_rate(self) -> float | None:
        """How often the answer held under the placebo (``by_control["paraphrase"]``), over all its audits."""
        placebo = self.by_control.get(ControlType.PARAPHRASE)
        return None if placebo is None else placebo.violation_rate
