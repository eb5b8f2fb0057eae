"""The :class:`Auditor`: plan, run, assemble, hand each record to the sinks; sync and async from one flow."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from opentelemetry.trace import TracerProvider

from ariadne_lc import semconv as sc
from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.audit._assemble import Rule, assemble
from ariadne_lc.audit._plan import (
    DEFAULT_MIN_THOUGHT_CHARS,
    PlannedAudit,
    StepSelector,
    intervention_names,
    plan,
)
from ariadne_lc.audit._run import Runner
from ariadne_lc.audit._sinks import AuditSink, FinishedAudit, ResultStoreSink, ScoreWriteBackSink, SpanSink, dispatch
from ariadne_lc.errors import AriadneError, ConfigurationError
from ariadne_lc.export.writeback import ScoreWriter
from ariadne_lc.interventions import Critic, RuleCritic, RuleParaphraser, is_control
from ariadne_lc.otel import AuditSpans, Redactor
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.replay import DEFAULT_MAX_TURNS, Replayer, ToolPolicy
from ariadne_lc.scoring import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    AnswerMatchScorer,
    SimilarityScorer,
    ThoughtSimilarity,
    sequence_similarity,
)
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_RRR_THRESHOLD, DEFAULT_SEED, build_report
from ariadne_lc.store import ResultStore
from ariadne_lc.trace import Trace

__all__ = ["Auditor"]

Interventions = str | Sequence[str]


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
        result_store: Where each result is put as soon as it exists (a
            :class:`~ariadne_lc.audit.ResultStoreSink`).
        capture_content, redact: Content on spans (see :mod:`ariadne_lc.otel`).
        answer_extractor: Maps a final message to the answer that is scored (both a and a*), e.g.
            ``ariadne_lc.demo.extract_final_answer`` for agents that end with "Final Answer: X". The
            metrics, S, φ and the λ length gate then apply to the extracted answers. ``None``: the
            whole final message.
        score_writers: Write each contradiction's score back onto the recorded agent span, where the
            backend shows scores natively (e.g. :class:`~ariadne_lc.export.PhoenixScoreWriter`), through a
            :class:`~ariadne_lc.audit.ScoreWriteBackSink`. A failed write is logged and counted in
            ``writeback_errors``; it never fails the audit.
        sinks: More sinks (:class:`~ariadne_lc.audit.AuditSink`), after the span, the result store and
            the write-back. The whole list is :attr:`sinks`; :meth:`with_sinks` gives another.

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
        sinks: Sequence[AuditSink] = (),
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
        for sink in sinks:
            if not isinstance(sink, AuditSink):
                raise ConfigurationError(f"a sink needs an accept(finished) method, got {type(sink).__name__}")
        self.spans = AuditSpans(tracer_provider, capture_content=capture_content, redact=redact)
        self._runner = Runner(
            replayer=Replayer(
                graph, tool_policy=tool_policy, safe_tools=safe_tools, tool_node=tool_node, max_turns=max_turns
            ),
            critic=critic or RuleCritic(),
            paraphraser=paraphraser or RuleParaphraser(),
            scorer=scorer or AnswerMatchScorer(),
            thought_similarity=thought_similarity or sequence_similarity,
            spans=self.spans,
            answer_extractor=answer_extractor,
        )
        self._rule = Rule(tau=tau, lam=lam, min_strength=min_strength, keep_scored_answers=answer_extractor is not None)
        self.seed = seed
        self.confidence = confidence
        self.rrr_threshold = rrr_threshold
        self.min_thought_chars = min_thought_chars
        built: list[AuditSink] = [SpanSink(self.spans)]
        if result_store is not None:
            built.append(ResultStoreSink(result_store))
        if score_writers:
            built.append(ScoreWriteBackSink(score_writers, self.spans))
        self.sinks: tuple[AuditSink, ...] = (*built, *sinks)
        """Every sink, in the order each record is handed to them."""

    # -- configuration -----------------------------------------------------------------------------

    @property
    def replayer(self) -> Replayer:
        return self._runner.replayer

    @property
    def critic(self) -> Critic:
        return self._runner.critic

    @property
    def paraphraser(self) -> Critic:
        return self._runner.paraphraser

    @property
    def scorer(self) -> SimilarityScorer:
        return self._runner.scorer

    @property
    def tau(self) -> float:
        return self._rule.tau

    @property
    def lam(self) -> int:
        return self._rule.lam

    @property
    def min_strength(self) -> float | None:
        return self._rule.min_strength

    @property
    def writeback_errors(self) -> int:
        """Score write-backs that failed so far (over every :class:`~ariadne_lc.audit.ScoreWriteBackSink`)."""

        return sum(s.errors for s in self.sinks if isinstance(s, ScoreWriteBackSink))

    def with_sinks(self, sinks: Sequence[AuditSink]) -> Auditor:
        """The same auditor (graph, critic, scorer, rule, spans) handing its records to ``sinks`` instead.

        For a caller that persists results itself, e.g. the online worker, which commits them together
        with its job's state: ``auditor.with_sinks([s for s in auditor.sinks if not isinstance(s,
        ResultStoreSink)])`` keeps the span and the write-back and drops the result store. This auditor
        is unchanged; the two share their components (and a write-back sink's error counter).
        """
        for sink in sinks:
            if not isinstance(sink, AuditSink):
                raise ConfigurationError(f"a sink needs an accept(finished) method, got {type(sink).__name__}")
        other = copy.copy(self)
        other.sinks = tuple(sinks)
        return other

    # -- single trace ------------------------------------------------------------------------------

    def audit(
        self, trace: Trace, step: StepSelector = "auto", interventions: Interventions = ("logic_flip",)
    ) -> list[AuditResult]:
        """Audit ``trace`` at the selected step(s) with each intervention; one result per pair.

        ``interventions`` takes contradiction names, control names and the selectors ``"random"``
        and ``"adaptive"``. A list of step indices is one multi-step intervention on all of them,
        with the same kind on every step (a selector is resolved on the earliest step's thought).
        """
        return run_sync(self._audit_trace(trace, step, interventions))

    async def aaudit(
        self, trace: Trace, step: StepSelector = "auto", interventions: Interventions = ("logic_flip",)
    ) -> list[AuditResult]:
        """Async twin of :meth:`audit`."""
        return await run_async(self._audit_trace(trace, step, interventions))

    # -- batches -----------------------------------------------------------------------------------

    def audit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector = "auto",
        interventions: Interventions = ("logic_flip",),
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Audit many traces on ``max_concurrency`` threads; a trace that cannot be audited is recorded
        as a failed result instead of stopping the batch."""
        self._check_batch(interventions, max_concurrency)
        items = list(traces)
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="ariadne-audit") as pool:
            chunks = list(pool.map(lambda t: run_sync(self._audit_or_record(t, step, interventions)), items))
        return self._report(r for chunk in chunks for r in chunk)

    async def aaudit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector = "auto",
        interventions: Interventions = ("logic_flip",),
        max_concurrency: int = 4,
    ) -> AuditReport:
        """Async twin of :meth:`audit_batch` (at most ``max_concurrency`` traces at once)."""
        self._check_batch(interventions, max_concurrency)
        gate = asyncio.Semaphore(max_concurrency)

        async def one(t: Trace) -> list[AuditResult]:
            async with gate:
                return await run_async(self._audit_or_record(t, step, interventions))

        chunks = await asyncio.gather(*(one(t) for t in traces))
        return self._report(r for chunk in chunks for r in chunk)

    @staticmethod
    def _check_batch(interventions: Interventions, max_concurrency: int) -> None:
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        intervention_names(interventions)

    def _report(self, results: Iterable[AuditResult]) -> AuditReport:
        return build_report(results, confidence=self.confidence, seed=self.seed, rrr_threshold=self.rrr_threshold)

    # -- the flows (written once, run by run_sync or run_async) ------------------------------------

    def _audit_trace(self, trace: Trace, step: StepSelector, interventions: Interventions) -> Flow[list[AuditResult]]:
        planned = plan(trace, step, interventions, seed=self.seed, min_thought_chars=self.min_thought_chars)
        results: list[AuditResult] = []
        for one in planned:
            results.append((yield from self._audit_one(trace, one)))
        return results

    def _audit_or_record(
        self, trace: Trace, step: StepSelector, interventions: Interventions
    ) -> Flow[list[AuditResult]]:
        """Like :meth:`_audit_trace`, but a trace that cannot be audited gives one failed result."""
        try:
            return (yield from self._audit_trace(trace, step, interventions))
        except AriadneError as exc:
            result = AuditResult.unauditable(trace, exc)
            dispatch(self.sinks, FinishedAudit(result, trace, None))
            return [result]

    def _audit_one(self, trace: Trace, planned: PlannedAudit) -> Flow[AuditResult]:
        started = time.perf_counter()
        attributes: dict[str, Any] = {
            sc.ARIADNE_CONTROL: is_control(planned.kind),
            sc.ARIADNE_TYPE_SELECTION: planned.selection,
        }
        if len(planned.steps) > 1:
            attributes[sc.ARIADNE_STEP_INDICES] = list(planned.steps)
        with self.spans.audit(trace, planned.steps[0], planned.kind, **attributes) as span:
            ran = yield from self._runner.run(trace, planned)
            result = assemble(trace, planned, ran, self._rule, duration_s=time.perf_counter() - started)
            dispatch(self.sinks, FinishedAudit(result, trace, span))
            return result
