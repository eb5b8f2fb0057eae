"""The auditor: intervene on a recorded step, replay the agent's graph, score how far the answer moved.

For each (trace, step k, intervention ι) the :class:`Auditor` asks the critic for s'_k, replays the
user's own graph from the checkpoint before s_k with s'_k substituted (see :mod:`ariadne_lc.replay`),
scores S(a, a*) and applies φ = 1 − S and the violation rule (see :mod:`ariadne_lc.scoring`), and
emits one OpenTelemetry span per audit (see :mod:`ariadne_lc.otel`).

Beside the four contradictions it runs the controls (``paraphrase``, ``rerun``, ``ablation``,
``early_answer``, ``filler``; see :class:`~ariadne_lc.interventions.ControlType`), resolves the
``random`` and ``adaptive`` type selectors per step (:mod:`ariadne_lc.interventions.selection`), and
intervenes on several steps at once when ``step`` is a list of indices (formulation 10.1).

Bad requests fail before any work is done (a step index out of range, a step without a thought, a
trace without an answer). Failures of one audit (a critic model that raised, a replay that broke)
are recorded in its result (``status="failed"``) so that a batch goes on and nothing already
computed is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Literal

from opentelemetry.trace import Span, TracerProvider

from ariadne_lc import semconv as sc
from ariadne_lc.errors import AriadneError, ConfigurationError, ReplayDidNotFinishError, TraceError
from ariadne_lc.export.writeback import Score, ScoreTarget, ScoreWriter
from ariadne_lc.interventions import (
    ControlType,
    Critic,
    Intervention,
    RuleCritic,
    RuleParaphraser,
    filler_text,
    is_control,
    parse_interventions,
    resolve,
)
from ariadne_lc.otel import AuditSpans, Redactor
from ariadne_lc.records import AuditReport, AuditResult, AuditStatus, Label
from ariadne_lc.replay import DEFAULT_MAX_TURNS, Replayer, ReplayResult, ToolPolicy
from ariadne_lc.scoring import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    AnswerMatchScorer,
    Similarity,
    SimilarityScorer,
    ThoughtSimilarity,
    ascore_with,
    intervention_strength,
    judge,
    metric_vector,
    normalize_answer,
    sequence_similarity,
    severity,
)
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_RRR_THRESHOLD, DEFAULT_SEED, build_report
from ariadne_lc.store import ResultStore
from ariadne_lc.trace import Trace

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

StepSelector = int | Literal["auto", "all"] | Sequence[int]
"""An index, ``"auto"``, ``"all"``, or several indices to intervene on *at once*."""

_MULTI_SEPARATOR = "\n\n"


def _run_id(trace_id: str) -> uuid.UUID | None:
    """The LangChain run id a trace was recorded under (LangSmith feedback keys on it)."""
    try:
        return uuid.UUID(trace_id)
    except ValueError:
        return None


def _substantive(thought: str, min_chars: int) -> bool:
    return len("".join(thought.split())) >= min_chars


def select_steps(trace: Trace, step: StepSelector, *, min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS) -> list[int]:
    """The step indices to audit.

    Only steps followed by more of the run can be audited: intervening on the final answer itself
    would trivially "change" it. ``"auto"`` is the first substantive step (formulation 5.1: a
    thought of at least ``min_thought_chars`` non-space characters, 20 by default, so that a bare
    "ok" or a tool name is passed over), ``"all"`` every step with a thought, an int that step, and a
    list of ints those steps (which the auditor intervenes on together).
    """
    candidates = [s for s in trace.steps if not s.is_final and s.thought.strip()]
    if isinstance(step, str):
        if step == "auto":
            chosen = next((s for s in candidates if _substantive(s.thought, min_thought_chars)), None)
            return [] if chosen is None else [chosen.index]
        if step == "all":
            return [s.index for s in candidates]
    elif isinstance(step, int) and not isinstance(step, bool):
        trace.step(step)  # raises StepNotFoundError
        return [step]
    elif isinstance(step, Sequence) and step:
        indices = [k for k in step if isinstance(k, int) and not isinstance(k, bool)]
        if len(indices) == len(step):
            for k in indices:
                trace.step(k)  # raises StepNotFoundError
            return sorted(set(indices))
    raise ConfigurationError(f"step must be an int, 'auto', 'all' or a non-empty list of ints, got {step!r}")


@dataclass(frozen=True, slots=True)
class _Job:
    """One audit to run: a concrete kind on a set of steps, and how the kind was chosen."""

    kind: str
    steps: tuple[int, ...]
    selection: str


@dataclass(frozen=True, slots=True)
class _Made:
    """The interventions made for one job, one per step."""

    per_step: dict[int, Intervention]

    @property
    def applicable(self) -> bool:
        return all(i.applicable and i.intervened is not None for i in self.per_step.values())

    @property
    def intervened(self) -> str | None:
        """The rewritten thoughts, joined like the originals; ``None`` when one is missing."""
        parts = [i.intervened for i in self.per_step.values()]
        return None if any(p is None for p in parts) else _MULTI_SEPARATOR.join(p or "" for p in parts)

    @property
    def method(self) -> str:
        """How the interventions were made, or (when not applicable) why not, per step if several."""
        if self.applicable:
            return "; ".join(sorted({i.method for i in self.per_step.values()}))
        several = len(self.per_step) > 1
        return "; ".join(
            f"step {k}: {i.method}" if several else i.method for k, i in self.per_step.items() if not i.applicable
        )

    @property
    def rejections(self) -> tuple[str, ...]:
        return tuple(r for i in self.per_step.values() for r in i.rejections)


class Auditor:
    """Audits recorded traces of ``graph`` by counterfactual replay.

    Args:
        graph: The user's compiled graph, with the checkpointer the traces were recorded with.
        critic: Makes the contradicted thought; default :class:`~ariadne_lc.interventions.RuleCritic`
            (offline), or :class:`~ariadne_lc.interventions.LLMCritic` for a model.
        scorer: Computes S; default :class:`~ariadne_lc.scoring.AnswerMatchScorer`.
        paraphraser: Makes the ``paraphrase`` placebo; default
            :class:`~ariadne_lc.interventions.RuleParaphraser` (pass an ``LLMCritic`` for a model's).
        thought_similarity: sim(thought, thought') for intervention strength; default the order-aware
            word-sequence similarity (see :mod:`ariadne_lc.scoring.strength`; e.g.
            ``EmbeddingScorer().similarity`` for meaning).
        min_strength: Contradictions weaker than this are ``inconclusive``, never violations
            (controls are exempt: a rerun has strength 0 by design). ``None``: no minimum.
        seed: Seeds the ``random`` type selector, the bootstraps and the permutation test.
        confidence: Level of every interval in batch reports.
        rrr_threshold: CCS below which a step counts as redundant in batch reports.
        tracer_provider: Where audit spans go (default: the global provider).
        tool_policy, safe_tools, tool_node, max_turns: See :class:`~ariadne_lc.replay.Replayer`.
        tau, lam: The violation rule's threshold and minimum answer length.
        min_thought_chars: What ``step="auto"`` counts as substantive.
        result_store: Where each result is put as soon as it exists.
        capture_content, redact: Content on spans (see :mod:`ariadne_lc.otel`).
        answer_extractor: Maps a final message to the answer that is scored (both a and a*), e.g.
            ``ariadne_lc.demo.extract_final_answer`` for agents that end with "Final Answer: X". The
            metrics, S, φ and the λ length gate then apply to the extracted answers. ``None``: the
            whole final message.
        score_writers: Write each contradiction's score back onto the recorded agent span, where the
            backend shows scores natively (e.g. :class:`~ariadne_lc.export.PhoenixScoreWriter`). A failed
            write is logged and counted in ``writeback_errors``; it never fails the audit.

    Examples:
        >>> auditor = Auditor(graph)  # doctest: +SKIP
        >>> for r in auditor.audit(trace, interventions=["logic_flip", "paraphrase"]):  # doctest: +SKIP
        ...     print(r.intervention_type, r.control, r.phi, r.violation)
    """

    def __init__(
        self,
        graph: Any,
        *,
        critic: Critic | None = None,
        scorer: SimilarityScorer | None = None,
        paraphraser: Critic | None = None,
        thought_similarity: ThoughtSimilarity | None = None,
        min_strength: float | None = None,
        seed: int = DEFAULT_SEED,
        confidence: float = DEFAULT_CONFIDENCE,
        rrr_threshold: float = DEFAULT_RRR_THRESHOLD,
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
        answer_extractor: Callable[[str], str] | None = None,
        score_writers: Sequence[ScoreWriter] = (),
    ) -> None:
        if not 0.0 <= tau <= 1.0:
            raise ConfigurationError(f"tau must be in [0, 1], got {tau}")
        if lam < 0:
            raise ConfigurationError(f"lam must not be negative, got {lam}")
        if min_strength is not None and not 0.0 <= min_strength <= 1.0:
            raise ConfigurationError(f"min_strength must be in [0, 1] or None, got {min_strength}")
        if not 0.0 < confidence < 1.0:
            raise ConfigurationError(f"confidence must be in (0, 1), got {confidence}")
        if not 0.0 <= rrr_threshold <= 1.0:
            raise ConfigurationError(f"rrr_threshold must be in [0, 1], got {rrr_threshold}")
        self.replayer = Replayer(
            graph, tool_policy=tool_policy, safe_tools=safe_tools, tool_node=tool_node, max_turns=max_turns
        )
        self.critic: Critic = critic or RuleCritic()
        self.scorer: SimilarityScorer = scorer or AnswerMatchScorer()
        self.paraphraser: Critic = paraphraser or RuleParaphraser()
        self.thought_similarity: ThoughtSimilarity = thought_similarity or sequence_similarity
        self.min_strength = min_strength
        self.seed = seed
        self.confidence = confidence
        self.rrr_threshold = rrr_threshold
        self.spans = AuditSpans(tracer_provider, capture_content=capture_content, redact=redact)
        self.tau = tau
        self.lam = lam
        self.min_thought_chars = min_thought_chars
        self.result_store = result_store
        self.answer_extractor = answer_extractor
        self.score_writers = tuple(score_writers)
        self.writeback_errors = 0

    # -- planning ----------------------------------------------------------------------------------

    def _plan(self, trace: Trace, step: StepSelector, interventions: str | Sequence[str]) -> list[_Job]:
        names = parse_interventions(list(interventions) if not isinstance(interventions, str) else interventions)
        if trace.final_answer is None:
            reason = trace.error or ("interrupted" if trace.interrupted else "no final answer was recorded")
            raise TraceError(f"trace {trace.trace_id} cannot be audited: {reason}")
        chosen = select_steps(trace, step, min_thought_chars=self.min_thought_chars)
        together = not isinstance(step, str | int)
        targets = [tuple(chosen)] if together else [(k,) for k in chosen]
        jobs: list[_Job] = []
        for steps in targets:
            thought = trace.step(steps[0]).thought
            for name in names:
                kind, selection = resolve(name, thought, seed=self.seed, trace_id=trace.trace_id, step=steps[0])
                jobs.append(_Job(kind=kind, steps=steps, selection=selection))
        return jobs

    def _report(self, results: Iterable[AuditResult]) -> AuditReport:
        return build_report(results, confidence=self.confidence, seed=self.seed, rrr_threshold=self.rrr_threshold)

    # -- single trace ------------------------------------------------------------------------------

    def audit(
        self,
        trace: Trace,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
    ) -> list[AuditResult]:
        """Audit ``trace`` at the selected step(s) with each intervention; one result per pair.

        ``interventions`` takes contradiction names, control names and the selectors ``"random"``
        and ``"adaptive"``. A list of step indices is one multi-step intervention on all of them,
        with the same kind on every step (a selector is resolved on the earliest step's thought).
        """
        return [self._audit_one(trace, job) for job in self._plan(trace, step, interventions)]

    async def aaudit(
        self,
        trace: Trace,
        step: StepSelector = "auto",
        interventions: str | Sequence[str] = ("logic_flip",),
    ) -> list[AuditResult]:
        """Async twin of :meth:`audit`."""
        return [await self._aaudit_one(trace, job) for job in self._plan(trace, step, interventions)]

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
        parse_interventions(list(interventions) if not isinstance(interventions, str) else interventions)
        items = list(traces)
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="ariadne-audit") as pool:
            chunks = list(pool.map(lambda t: self._safe_audit(t, step, interventions), items))
        return self._report(r for chunk in chunks for r in chunk)

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
        parse_interventions(list(interventions) if not isinstance(interventions, str) else interventions)
        gate = asyncio.Semaphore(max_concurrency)

        async def one(t: Trace) -> list[AuditResult]:
            async with gate:
                try:
                    return await self.aaudit(t, step, interventions)
                except AriadneError as exc:
                    return [self._unauditable(t, exc)]

        chunks = await asyncio.gather(*(one(t) for t in traces))
        return self._report(r for chunk in chunks for r in chunk)

    def _safe_audit(self, trace: Trace, step: StepSelector, interventions: str | Sequence[str]) -> list[AuditResult]:
        try:
            return self.audit(trace, step, interventions)
        except AriadneError as exc:
            return [self._unauditable(trace, exc)]

    def _unauditable(self, trace: Trace, exc: Exception) -> AuditResult:
        result = AuditResult.unauditable(trace, exc)
        self._keep(result)
        return result

    # -- the stages of one audit -------------------------------------------------------------------

    def _span_attributes(self, job: _Job) -> dict[str, Any]:
        attrs: dict[str, Any] = {sc.ARIADNE_CONTROL: is_control(job.kind), sc.ARIADNE_TYPE_SELECTION: job.selection}
        if len(job.steps) > 1:
            attrs[sc.ARIADNE_STEP_INDICES] = list(job.steps)
        return attrs

    @staticmethod
    def _control(job: _Job, thought: str) -> Intervention | None:
        """The intervention of a control that needs no critic, or ``None`` when a critic must make it."""
        kind = job.kind
        rewrites: dict[str, str] = {
            ControlType.RERUN: thought,
            ControlType.ABLATION: "",
            ControlType.FILLER: filler_text(thought),
            ControlType.EARLY_ANSWER: thought,
        }
        if kind == ControlType.EARLY_ANSWER and len(job.steps) > 1:
            return Intervention.not_applicable(kind, thought, "early answering cuts the run at one step")
        if kind in rewrites:
            return Intervention(
                type=kind, original=thought, intervened=rewrites[kind], applicable=True, method=f"control:{kind}"
            )
        return None

    def _maker(self, kind: str) -> Critic:
        return self.paraphraser if kind == ControlType.PARAPHRASE else self.critic

    def _intervene(self, trace: Trace, job: _Job) -> _Made:
        per_step: dict[int, Intervention] = {}
        for k in job.steps:
            thought = trace.step(k).thought
            made = self._control(job, thought)
            if made is None:
                made = self._maker(job.kind).intervene(thought, job.kind, query=trace.query)
            per_step[k] = made
        return _Made(per_step)

    async def _aintervene(self, trace: Trace, job: _Job) -> _Made:
        per_step: dict[int, Intervention] = {}
        for k in job.steps:
            thought = trace.step(k).thought
            made = self._control(job, thought)
            if made is None:
                maker = self._maker(job.kind)
                aintervene = getattr(maker, "aintervene", None)
                if aintervene is not None:
                    made = await aintervene(thought, job.kind, query=trace.query)
                else:
                    made = maker.intervene(thought, job.kind, query=trace.query)
            assert made is not None
            per_step[k] = made
        return _Made(per_step)

    def _strength(self, job: _Job, made: _Made) -> float | None:
        if not made.applicable or job.kind == ControlType.EARLY_ANSWER:
            return None  # early answering removes what follows the step, not the step's text
        return fmean(
            intervention_strength(i.original, i.intervened or "", self.thought_similarity)
            for i in made.per_step.values()
        )

    def _replay(self, trace: Trace, job: _Job, made: _Made) -> ReplayResult:
        if job.kind == ControlType.EARLY_ANSWER:
            return self.replayer.replay_early_answer(trace, job.steps[0])
        return self.replayer.replay_steps(trace, {k: i.intervened or "" for k, i in made.per_step.items()})

    async def _areplay(self, trace: Trace, job: _Job, made: _Made) -> ReplayResult:
        if job.kind == ControlType.EARLY_ANSWER:
            return await self.replayer.areplay_early_answer(trace, job.steps[0])
        return await self.replayer.areplay_steps(trace, {k: i.intervened or "" for k, i in made.per_step.items()})

    def _audit_one(self, trace: Trace, job: _Job) -> AuditResult:
        started = time.perf_counter()
        with self.spans.audit(trace, job.steps[0], job.kind, **self._span_attributes(job)) as span:
            made: _Made | None = None
            strength: float | None = None
            error: Exception | None = None
            with self.spans.stage("intervene") as stage:
                try:
                    made = self._intervene(trace, job)
                    strength = self._strength(job, made)
                except AriadneError as exc:
                    error = self._stage_failed(stage, "intervention", trace, job, exc)
            replay: ReplayResult | None = None
            if made is not None and made.applicable:
                with self.spans.stage("replay") as stage:
                    try:
                        replay = self._replay(trace, job, made)
                    except AriadneError as exc:
                        error = self._stage_failed(stage, "replay", trace, job, exc)
            similarity = self._score(trace, replay, job.kind)
            return self._finish(span, trace, job, made, strength, replay, similarity, error, started)

    async def _aaudit_one(self, trace: Trace, job: _Job) -> AuditResult:
        started = time.perf_counter()
        with self.spans.audit(trace, job.steps[0], job.kind, **self._span_attributes(job)) as span:
            made: _Made | None = None
            strength: float | None = None
            error: Exception | None = None
            with self.spans.stage("intervene") as stage:
                try:
                    made = await self._aintervene(trace, job)
                    # a model-based similarity may load or compute for a while: keep the loop free
                    strength = await asyncio.to_thread(self._strength, job, made)
                except AriadneError as exc:
                    error = self._stage_failed(stage, "intervention", trace, job, exc)
            replay: ReplayResult | None = None
            if made is not None and made.applicable:
                with self.spans.stage("replay") as stage:
                    try:
                        replay = await self._areplay(trace, job, made)
                    except AriadneError as exc:
                        error = self._stage_failed(stage, "replay", trace, job, exc)
            similarity = await self._ascore(trace, replay, job.kind)
            return self._finish(span, trace, job, made, strength, replay, similarity, error, started)

    @staticmethod
    def _stage_failed(stage: Span, what: str, trace: Trace, job: _Job, exc: Exception) -> Exception:
        steps = "+".join(str(k) for k in job.steps)
        logger.warning("ariadne: %s of trace %s step %s (%s) failed: %s", what, trace.trace_id, steps, job.kind, exc)
        stage.record_exception(exc)
        return exc

    def _answers(self, trace: Trace, replay: ReplayResult | None) -> tuple[str, str] | None:
        """(a, a*) as scored: the final answers, through ``answer_extractor`` when one is set."""
        if replay is None or replay.answer is None or trace.final_answer is None:
            return None
        if self.answer_extractor is None:
            return trace.final_answer, replay.answer
        return self.answer_extractor(trace.final_answer), self.answer_extractor(replay.answer)

    def _score(self, trace: Trace, replay: ReplayResult | None, kind: str) -> Similarity | None:
        answers = self._answers(trace, replay)
        if answers is None:
            return None
        with self.spans.stage("score"):
            return self.scorer.score(*answers, intervention=kind, query=trace.query)

    async def _ascore(self, trace: Trace, replay: ReplayResult | None, kind: str) -> Similarity | None:
        answers = self._answers(trace, replay)
        if answers is None:
            return None
        with self.spans.stage("score"):
            return await ascore_with(self.scorer, *answers, intervention=kind, query=trace.query)

    def _finish(
        self,
        span: Span,
        trace: Trace,
        job: _Job,
        made: _Made | None,
        strength: float | None,
        replay: ReplayResult | None,
        similarity: Similarity | None,
        error: Exception | None,
        started: float,
    ) -> AuditResult:
        control = is_control(job.kind)
        fields: dict[str, Any] = {}
        status: AuditStatus
        label: Label = "inconclusive"
        if made is None:
            status = "failed"
        elif not made.applicable:
            status = "not_applicable"
        elif replay is None:
            status = "failed"
        elif replay.answer is None:
            status = "failed"
            error = ReplayDidNotFinishError("the replay ended without an answer")
        else:
            answers = self._answers(trace, replay)
            assert similarity is not None and answers is not None
            original, cf = answers
            verdict = judge(original, cf, similarity.value, tau=self.tau, lam=self.lam)
            too_weak = (
                not control and self.min_strength is not None and strength is not None and strength < self.min_strength
            )
            fields = {
                "metrics": metric_vector(original, cf, similarity),
                "similarity": similarity.value,
                "similarity_method": similarity.method,
                "similarity_samples": similarity.samples,
                "similarity_spread": similarity.spread,
                "explanation": similarity.explanation,
                "phi": verdict.phi,
                "answer_changed": normalize_answer(original) != normalize_answer(cf),
                "severity": severity(similarity.value, strength),
                "scored_answers": answers if self.answer_extractor is not None else None,
            }
            if similarity.value is None:
                status = "inconclusive"
                fields["inconclusive_reason"] = f"the scorer could not decide ({similarity.method})"
            elif too_weak:
                status = "inconclusive"
                fields["too_weak"] = True
                fields["inconclusive_reason"] = (
                    f"intervention too weak: strength {strength:.3f} < min_strength {self.min_strength}"
                )
            else:
                status = "scored"
                label = "control" if control else verdict.label
                fields |= {"violation": verdict.violation, "length_gate_exempted": verdict.length_gate_exempted}
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
        originals = _MULTI_SEPARATOR.join(trace.step(k).thought for k in job.steps)
        result = AuditResult(
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=job.steps[0],
            step_indices=job.steps,
            intervention_type=job.kind,
            type_selection=job.selection,
            control=control,
            status=status,
            label=label,
            original_thought=originals,
            intervened_thought=None if made is None else made.intervened,
            intervention_method=None if made is None else made.method,
            intervention_rejections=() if made is None else made.rejections,
            strength=strength,
            original_answer=trace.final_answer,
            error=None if error is None else f"{type(error).__name__}: {error}",
            error_type=None if error is None else type(error).__name__,
            duration_s=time.perf_counter() - started,
            agent_name=trace.agent_name,
            tags=trace.tags,
            domain=trace.domain,
            **fields,
        )
        self.spans.finish(span, result)
        self._keep(result)
        self._write_back(trace, result)
        return result

    def _write_back(self, trace: Trace, result: AuditResult) -> None:
        if not self.score_writers or trace.span is None or result.control or result.status == "failed":
            return
        target = ScoreTarget.from_span_ref(trace.span, run_id=_run_id(trace.trace_id))
        score = Score.from_audit_result(result, explanation=self.spans.content(result.explanation))
        for writer in self.score_writers:
            try:
                writer.write(target, score)
            except Exception as exc:  # WriteBackError, or a writer's own bug: never fail the audit
                self.writeback_errors += 1
                logger.warning("ariadne: score write-back with %s failed: %s", type(writer).__name__, exc)

    def _keep(self, result: AuditResult) -> None:
        if self.result_store is None:
            return
        try:
            self.result_store.put_result(result)
        except Exception:
            logger.exception("ariadne: could not store result %s", result.result_id)
