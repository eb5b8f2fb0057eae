"""The auditor: intervene on a recorded step, replay the agent's graph, score how far the answer moved.

For each (trace, step k, intervention ι) the :class:`Auditor` asks the critic for s'_k, replays the
user's own graph from the checkpoint before s_k with s'_k substituted (see :mod:`ariadne_lc.replay`),
scores S(a, a*) and applies φ = 1 − S and the violation rule (see :mod:`ariadne_lc.scoring`), and
emits one OpenTelemetry span per audit (see :mod:`ariadne_lc.otel`).

Bad requests fail before any work is done (a step index out of range, a step without a thought, a
trace without an answer). Failures of one replay are recorded in its result (``status="failed"``)
so that a batch goes on and nothing already computed is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Literal

from opentelemetry.trace import Span, TracerProvider
from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc.errors import AriadneError, ConfigurationError, TraceError
from ariadne_lc.interventions import Critic, Intervention, RuleCritic, parse_intervention_types
from ariadne_lc.otel import AuditSpans, Redactor
from ariadne_lc.replay import DEFAULT_MAX_TURNS, Replayer, ReplayResult, ToolPolicy
from ariadne_lc.scoring import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    AnswerMatchScorer,
    Label,
    Similarity,
    SimilarityMetrics,
    SimilarityScorer,
    judge,
    metric_vector,
    normalize_answer,
)
from ariadne_lc.stats import Aggregate, aggregate
from ariadne_lc.store import ResultStore
from ariadne_lc.trace import Step, Trace

__all__ = [
    "DEFAULT_MIN_THOUGHT_CHARS",
    "AuditReport",
    "AuditResult",
    "AuditStatus",
    "Auditor",
    "StepSelector",
    "select_steps",
]

logger = logging.getLogger(__name__)

DEFAULT_MIN_THOUGHT_CHARS = 20
"""``step="auto"`` picks the first step whose thought has at least this many non-space characters."""

AuditStatus = Literal["scored", "not_applicable", "inconclusive", "failed"]
StepSelector = int | Literal["auto", "all"]


class AuditResult(BaseModel):
    """One audit: a trace, a step, an intervention, and how the answer responded."""

    model_config = ConfigDict(frozen=True)

    result_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    trace_id: str
    thread_id: str | None = None
    query: str = ""
    step_index: int
    intervention_type: str
    status: AuditStatus
    """``scored``; ``not_applicable`` (nothing to contradict); ``inconclusive`` (no similarity); ``failed``."""
    label: Label
    original_thought: str
    intervened_thought: str | None = None
    intervention_method: str | None = None
    original_answer: str | None = None
    counterfactual_answer: str | None = None
    metrics: SimilarityMetrics | None = None
    """m(a, a*) = [J, C, L, E, S]."""
    similarity: float | None = None
    """S, as the configured scorer computed it."""
    similarity_method: str | None = None
    explanation: str | None = None
    phi: float | None = None
    """φ = 1 − S: 1 means the answer moved with the reasoning, 0 means it ignored the contradiction."""
    violation: bool = False
    length_gate_exempted: bool = False
    answer_changed: bool | None = None
    """Whether the normalised answers differ at all."""
    strength: float | None = None
    """Intervention strength (set by strength-aware auditors)."""
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


class AuditReport(BaseModel):
    """A batch of results with the formulation's aggregates, overall and per intervention type."""

    model_config = ConfigDict(frozen=True)

    results: tuple[AuditResult, ...]
    overall: Aggregate
    by_type: dict[str, Aggregate]

    @classmethod
    def from_results(cls, results: Iterable[AuditResult]) -> AuditReport:
        items = tuple(results)
        types = sorted({r.intervention_type for r in items})
        return cls(
            results=items,
            overall=aggregate(items),
            by_type={t: aggregate(r for r in items if r.intervention_type == t) for t in types},
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


def _substantive(step: Step, min_chars: int) -> bool:
    return len("".join(step.thought.split())) >= min_chars


def select_steps(trace: Trace, step: StepSelector, *, min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS) -> list[int]:
    """The step indices to audit.

    Only steps followed by more of the run can be audited: intervening on the final answer itself
    would trivially "change" it. ``"auto"`` is the first substantive step (formulation 5.1), ``"all"``
    every step with a thought, an int that step.
    """
    candidates = [s for s in trace.steps if not s.is_final and s.thought.strip()]
    if step == "auto":
        chosen = next((s for s in candidates if _substantive(s, min_thought_chars)), None)
        return [] if chosen is None else [chosen.index]
    if step == "all":
        return [s.index for s in candidates]
    if isinstance(step, bool) or not isinstance(step, int):
        raise ConfigurationError(f"step must be an int, 'auto' or 'all', got {step!r}")
    trace.step(step)  # raises StepNotFoundError
    return [step]


class Auditor:
    """Audits recorded traces of ``graph`` by counterfactual replay.

    Args:
        graph: The user's compiled graph, with the checkpointer the traces were recorded with.
        critic: Makes the contradicted thought; default :class:`~ariadne_lc.interventions.RuleCritic`.
        scorer: Computes S; default :class:`~ariadne_lc.scoring.AnswerMatchScorer`.
        tracer_provider: Where audit spans go (default: the global provider).
        tool_policy, safe_tools, tool_node, max_turns: See :class:`~ariadne_lc.replay.Replayer`.
        tau, lam: The violation rule's threshold and minimum answer length.
        min_thought_chars: What ``step="auto"`` counts as substantive.
        result_store: Where each result is put as soon as it exists.
        capture_content, redact: Content on spans (see :mod:`ariadne_lc.otel`).

    Examples:
        >>> auditor = Auditor(graph)  # doctest: +SKIP
        >>> for r in auditor.audit(trace, interventions=["logic_flip"]):  # doctest: +SKIP
        ...     print(r.phi, r.violation)
    """

    def __init__(
        self,
        graph: Any,
        *,
        critic: Critic | None = None,
        scorer: SimilarityScorer | None = None,
        tracer_provider: TracerProvider | None = None,
        tool_policy: ToolPolicy | str = ToolPolicy.RECORDED,
        safe_tools: Iterable[str] = (),
        tool_node: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        tau: float = DEFAULT_TAU,
        lam: int = DEFAULT_LAMBDA,
        min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS,
        result_store: ResultStore | None = None,
        capture_content: bool | None = None,
        redact: Redactor | None = None,
    ) -> None:
        if not 0.0 <= tau <= 1.0:
            raise ConfigurationError(f"tau must be in [0, 1], got {tau}")
        if lam < 0:
            raise ConfigurationError(f"lam must not be negative, got {lam}")
        self.replayer = Replayer(
            graph, tool_policy=tool_policy, safe_tools=safe_tools, tool_node=tool_node, max_turns=max_turns
        )
        self.critic: Critic = critic or RuleCritic()
        self.scorer: SimilarityScorer = scorer or AnswerMatchScorer()
        self.spans = AuditSpans(tracer_provider, capture_content=capture_content, redact=redact)
        self.tau = tau
        self.lam = lam
        self.min_thought_chars = min_thought_chars
        self.result_store = result_store

    # -- single trace ------------------------------------------------------------------------------

    def _plan(self, trace: Trace, step: StepSelector, interventions: str | Sequence[str]) -> list[tuple[int, str]]:
        types = parse_intervention_types(list(interventions) if not isinstance(interventions, str) else interventions)
        if trace.final_answer is None:
            reason = trace.error or ("interrupted" if trace.interrupted else "no final answer was recorded")
            raise TraceError(f"trace {trace.trace_id} cannot be audited: {reason}")
        steps = select_steps(trace, step, min_thought_chars=self.min_thought_chars)
        return [(k, str(t)) for k in steps for t in types]

    def audit(
        self,
        trace: Trace,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
    ) -> list[AuditResult]:
        """Audit ``trace`` at the selected step(s) with each intervention; one result per pair."""
        return [self._audit_one(trace, k, t) for k, t in self._plan(trace, step, interventions)]

    async def aaudit(
        self,
        trace: Trace,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
    ) -> list[AuditResult]:
        """Async twin of :meth:`audit`."""
        return [await self._aaudit_one(trace, k, t) for k, t in self._plan(trace, step, interventions)]

    # -- batches -----------------------------------------------------------------------------------

    def audit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Audit many traces on ``max_concurrency`` threads; a trace that cannot be audited is recorded
        as a failed result instead of stopping the batch."""
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        parse_intervention_types(list(interventions) if not isinstance(interventions, str) else interventions)
        items = list(traces)
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="ariadne-audit") as pool:
            chunks = list(pool.map(lambda t: self._safe_audit(t, step, interventions), items))
        return AuditReport.from_results(r for chunk in chunks for r in chunk)

    async def aaudit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Async twin of :meth:`audit_batch` (at most ``max_concurrency`` traces at once)."""
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        parse_intervention_types(list(interventions) if not isinstance(interventions, str) else interventions)
        gate = asyncio.Semaphore(max_concurrency)

        async def one(t: Trace) -> list[AuditResult]:
            async with gate:
                try:
                    return await self.aaudit(t, step, interventions)
                except AriadneError as exc:
                    return [self._unauditable(t, exc)]

        chunks = await asyncio.gather(*(one(t) for t in traces))
        return AuditReport.from_results(r for chunk in chunks for r in chunk)

    def _safe_audit(self, trace: Trace, step: StepSelector, interventions: str | Sequence[str]) -> list[AuditResult]:
        try:
            return self.audit(trace, step, interventions)
        except AriadneError as exc:
            return [self._unauditable(trace, exc)]

    def _unauditable(self, trace: Trace, exc: Exception) -> AuditResult:
        result = AuditResult(
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=-1,
            intervention_type="-",
            status="failed",
            label="inconclusive",
            original_thought="",
            original_answer=trace.final_answer,
            error=f"{type(exc).__name__}: {exc}",
            agent_name=trace.agent_name,
            tags=trace.tags,
        )
        self._keep(result)
        return result

    # -- one audit ---------------------------------------------------------------------------------

    def _audit_one(self, trace: Trace, k: int, kind: str) -> AuditResult:
        started = time.perf_counter()
        step = trace.step(k)
        with self.spans.audit(trace, k, kind) as span:
            with self.spans.stage("intervene"):
                intervention = self.critic.intervene(step.thought, kind, query=trace.query)
            replay: ReplayResult | None = None
            error: str | None = None
            if intervention.applicable and intervention.intervened is not None:
                with self.spans.stage("replay") as stage:
                    try:
                        replay = self.replayer.replay(trace, k, intervention.intervened)
                    except AriadneError as exc:
                        error = self._replay_failed(stage, trace, k, kind, exc)
            similarity = self._score(trace, replay, kind)
            return self._finish(span, trace, step, intervention, replay, similarity, error, started)

    async def _aaudit_one(self, trace: Trace, k: int, kind: str) -> AuditResult:
        started = time.perf_counter()
        step = trace.step(k)
        with self.spans.audit(trace, k, kind) as span:
            with self.spans.stage("intervene"):
                aintervene = getattr(self.critic, "aintervene", None)
                if aintervene is not None:
                    intervention: Intervention = await aintervene(step.thought, kind, query=trace.query)
                else:
                    intervention = self.critic.intervene(step.thought, kind, query=trace.query)
            replay: ReplayResult | None = None
            error: str | None = None
            if intervention.applicable and intervention.intervened is not None:
                with self.spans.stage("replay") as stage:
                    try:
                        replay = await self.replayer.areplay(trace, k, intervention.intervened)
                    except AriadneError as exc:
                        error = self._replay_failed(stage, trace, k, kind, exc)
            similarity = await self._ascore(trace, replay, kind)
            return self._finish(span, trace, step, intervention, replay, similarity, error, started)

    @staticmethod
    def _replay_failed(stage: Span, trace: Trace, k: int, kind: str, exc: Exception) -> str:
        logger.warning("ariadne: replay of trace %s step %d (%s) failed: %s", trace.trace_id, k, kind, exc)
        stage.record_exception(exc)
        return f"{type(exc).__name__}: {exc}"

    def _score(self, trace: Trace, replay: ReplayResult | None, kind: str) -> Similarity | None:
        if replay is None or replay.answer is None or trace.final_answer is None:
            return None
        with self.spans.stage("score"):
            return self.scorer.score(trace.final_answer, replay.answer, intervention=kind, query=trace.query)

    async def _ascore(self, trace: Trace, replay: ReplayResult | None, kind: str) -> Similarity | None:
        if replay is None or replay.answer is None or trace.final_answer is None:
            return None
        with self.spans.stage("score"):
            ascore = getattr(self.scorer, "ascore", None)
            if ascore is not None:
                result: Similarity = await ascore(
                    trace.final_answer, replay.answer, intervention=kind, query=trace.query
                )
                return result
            return self.scorer.score(trace.final_answer, replay.answer, intervention=kind, query=trace.query)

    def _finish(
        self,
        span: Span,
        trace: Trace,
        step: Step,
        intervention: Intervention,
        replay: ReplayResult | None,
        similarity: Similarity | None,
        error: str | None,
        started: float,
    ) -> AuditResult:
        original = trace.final_answer or ""
        fields: dict[str, Any] = {}
        status: AuditStatus
        label: Label
        if not intervention.applicable:
            status, label = "not_applicable", "inconclusive"
        elif replay is None:
            status, label = "failed", "inconclusive"
        elif replay.answer is None:
            status, label = "failed", "inconclusive"
            error = "the replay ended without an answer"
        else:
            cf = replay.answer
            assert similarity is not None
            verdict = judge(original, cf, similarity.value, tau=self.tau, lam=self.lam)
            status = "scored" if similarity.value is not None else "inconclusive"
            label = verdict.label
            fields = {
                "metrics": metric_vector(original, cf, similarity),
                "similarity": similarity.value,
                "similarity_method": similarity.method,
                "explanation": similarity.explanation,
                "phi": verdict.phi,
                "violation": verdict.violation,
                "length_gate_exempted": verdict.length_gate_exempted,
                "answer_changed": normalize_answer(original) != normalize_answer(cf),
            }
        if replay is not None:
            fields |= {
                "counterfactual_answer": replay.answer,
                "counterfactual_steps": replay.steps,
                "replay_checkpoint_id": replay.fork_checkpoint_id,
                "replay_thread_id": replay.replay_thread_id,
                "model_calls": replay.model_calls,
                "tools_recorded": replay.tools_recorded,
                "tools_live": replay.tools_live,
                "tools_unavailable": replay.tools_unavailable,
            }
        result = AuditResult(
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=step.index,
            intervention_type=intervention.type,
            status=status,
            label=label,
            original_thought=step.thought,
            intervened_thought=intervention.intervened,
            intervention_method=intervention.method,
            original_answer=trace.final_answer,
            error=error,
            duration_s=time.perf_counter() - started,
            agent_name=trace.agent_name,
            tags=trace.tags,
            **fields,
        )
        self.spans.finish(span, result)
        self._keep(result)
        return result

    def _keep(self, result: AuditResult) -> None:
        if self.result_store is None:
            return
        try:
            self.result_store.put_result(result)
        except Exception:
            logger.exception("ariadne: could not store result %s", result.result_id)
