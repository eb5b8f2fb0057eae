"""The :class:`Auditor`: plan, run, assemble, hand each record to the sinks; sync and async from one flow."""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from opentelemetry.trace import TracerProvider

from ariadne_lc import semconv as sc
from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.audit._action import ActionGates
from ariadne_lc.audit._assemble import Rule, assemble
from ariadne_lc.audit._batch import BatchAudits
from ariadne_lc.audit._config import Interventions, check_graph, resolve_links, resolve_reader
from ariadne_lc.audit._gate import DEFAULT_GATE_ATTEMPTS, Gate
from ariadne_lc.audit._plan import (
    DEFAULT_MIN_THOUGHT_CHARS,
    PlannedAudit,
    StepSelector,
    nothing_to_audit_reason,
    plan,
)
from ariadne_lc.audit._run import Runner
from ariadne_lc.audit._sinks import AuditSink, FinishedAudit, ResultStoreSink, ScoreWriteBackSink, SpanSink, dispatch
from ariadne_lc.audit._view import AuditorView
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.export.writeback import ScoreWriter
from ariadne_lc.interventions import Critic, RuleCritic, RuleParaphraser, is_control
from ariadne_lc.interventions.action_model import ModelActionReader
from ariadne_lc.interventions.actions import ActionReader, RuleActionReader
from ariadne_lc.interventions.implied import AnswerReader
from ariadne_lc.interventions.observations import ObservationSwapper, RuleObservationSwapper
from ariadne_lc.otel import AuditSpans, Redactor
from ariadne_lc.records import AuditResult, Link, ReplayMode
from ariadne_lc.replay import DEFAULT_MAX_TURNS, DeriveFunction, Replayer, ToolCallDeriver, ToolPolicy
from ariadne_lc.scoring import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    AnswerMatchScorer,
    SimilarityScorer,
    ThoughtSimilarity,
    sequence_similarity,
)
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_RRR_THRESHOLD, DEFAULT_SEED
from ariadne_lc.store import ResultStore
from ariadne_lc.trace import Trace

__all__ = ["Auditor"]

logger = logging.getLogger("ariadne_lc.audit")


class Auditor(AuditorView, BatchAudits):
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
        decisive: The decisiveness gate (docs/method.md#the-decisiveness-gate): a contradiction is replayed
            only when it changes the answer the thought implies; otherwise the critic revises it, and after
            ``gate_attempts`` edits the audit is ``not_applicable`` (``not_decisive``). A paraphrase that changes
            the implied answer is no placebo and is dropped. ``False``: every applicable edit is replayed, as
            before the gate existed.
        reader: Who reads the answer a thought implies: an
            :class:`~ariadne_lc.interventions.implied.AnswerReader`, or a chat model (the agent's own, when you
            have it: it reads its own thoughts best). ``None``: the critic's model for an ``LLMCritic``, else the
            offline :class:`~ariadne_lc.interventions.implied.RuleReader`. Cached per (query, thought).
        gate_attempts: Edits the gate reads per audit (the critic's first and its revisions).
        allow_graph_change: Audit a trace recorded under another graph than ``graph`` (its
            ``Trace.graph`` fingerprint differs: another model, prompt, tool, node or edge). By default
            such a trace is refused with :class:`~ariadne_lc.errors.GraphChangedError`, which says what
            changed (in a batch: a failed result carrying it). Traces without a fingerprint (recorded
            before fingerprints, or by a handler given no graph) are always audited.
        tool_calls: What the replay does with the audited step's own tool calls
            (docs/method.md#the-steps-own-tool-calls): ``"recorded"`` (default) keeps them with their recorded
            outputs, so a side-effecting tool is never called with arguments nobody saw; ``"rederive"`` replaces
            them with the calls ``tool_call_deriver`` derives from the intervened thought and answers those under
            the tool policy (recorded output for an identical call, live for ``safe_tools``, else "unavailable
            during audit"). Use it for agents whose thought decides its own tool call. Every result says which
            mode it used (:attr:`~ariadne_lc.records.AuditResult.replay_mode`).
        tool_call_deriver: Required with ``"rederive"``: the agent's own chat model (a continuation call,
            :class:`~ariadne_lc.replay.ContinuationDeriver`), a function ``(thought, context) -> tool calls``
            (:class:`~ariadne_lc.replay.FunctionDeriver`), or any :class:`~ariadne_lc.replay.ToolCallDeriver`.
        model: The agent's own chat model: re-run with a contradicted thought as the start of its reply for the
            ``thought->action`` link (docs/method.md#links), and the gates' reader unless ``reader`` and
            ``action_reader`` are given. Not needed for ``create_agent`` graphs with
            :class:`~ariadne_lc.AriadneMiddleware`, which re-runs the recorded model call itself.
        links: Which links to audit (:data:`~ariadne_lc.records.LINKS`); default every link this auditor can audit
            (``thought->action`` needs the middleware, ``model`` or, named here, a ``tool_call_deriver``). See
            :attr:`links`.
        action_reader: Reads the action a thought commits to, for the ``thought->action`` gate; default
            :class:`~ariadne_lc.interventions.action_model.ModelActionReader` of ``model``, else the offline
            :class:`~ariadne_lc.interventions.actions.RuleActionReader`.
        swapper: Makes the ``observation_swap`` of the ``observation->answer`` link; default
            :class:`~ariadne_lc.interventions.observations.RuleObservationSwapper` (pass an
            :class:`~ariadne_lc.interventions.observations.LLMObservationSwapper` for free-text outputs).

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
        decisive: bool = True,
        reader: AnswerReader | BaseChatModel | None = None,
        gate_attempts: int = DEFAULT_GATE_ATTEMPTS,
        allow_graph_change: bool = False,
        tool_calls: ReplayMode = "recorded",
        tool_call_deriver: ToolCallDeriver | DeriveFunction | BaseChatModel | None = None,
        model: BaseChatModel | None = None,
        links: Sequence[Link] | None = None,
        action_reader: ActionReader | None = None,
        swapper: ObservationSwapper | None = None,
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
        if gate_attempts < 1:
            raise ConfigurationError(f"gate_attempts must be at least 1, got {gate_attempts}")
        critic = critic or RuleCritic()
        scorer = scorer or AnswerMatchScorer()
        gate = (
            Gate(resolve_reader(reader if reader is not None else model, critic), scorer, tau, gate_attempts)
            if decisive
            else None
        )
        if action_reader is None:
            action_reader = ModelActionReader(model) if model is not None else RuleActionReader()
        elif not isinstance(action_reader, ActionReader):
            raise ConfigurationError(f"action_reader must be an ActionReader, got {type(action_reader).__name__}")
        self.spans = AuditSpans(tracer_provider, capture_content=capture_content, redact=redact)
        self._runner = Runner(
            replayer=Replayer(
                graph,
                tool_policy=tool_policy,
                safe_tools=safe_tools,
                tool_node=tool_node,
                max_turns=max_turns,
                tool_calls=tool_calls,
                tool_call_deriver=tool_call_deriver,
                action_model=model,
            ),
            critic=critic,
            paraphraser=paraphraser or RuleParaphraser(),
            scorer=scorer,
            thought_similarity=thought_similarity or sequence_similarity,
            spans=self.spans,
            answer_extractor=answer_extractor,
            gate=gate,
            swapper=swapper or RuleObservationSwapper(),
            actions=ActionGates(action_reader, gate_attempts) if decisive else None,
            tau=tau,
        )
        self.links: tuple[Link, ...] = resolve_links(links, self._runner.replayer)
        """The links this auditor audits (docs/method.md#links)."""
        self._rule = Rule(tau=tau, lam=lam, min_strength=min_strength, keep_scored_answers=answer_extractor is not None)
        self.graph = graph
        self.allow_graph_change = allow_graph_change
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

    def with_links(self, links: Sequence[Link] | None) -> Auditor:
        """The same auditor auditing ``links`` instead (``None``: every link it can audit; see ``links``).

        For a caller that audits a job as the side that sampled it asked, e.g. the online and fleet workers, whose
        jobs carry the links in their :class:`~ariadne_lc.online.AuditPlan`. This auditor is unchanged.

        Raises:
            ConfigurationError: An unknown link, or ``thought->action`` without a way to re-run the step's model.
        """
        other = copy.copy(self)
        other.links = resolve_links(links, self._runner.replayer)
        return other

    def with_graph(self, graph: Any) -> Auditor:
        """The same auditor (critic, scorer, rule, spans, sinks, tool policy) replaying ``graph`` instead.

        For a caller that rebuilds the history to fork from per trace, e.g. the remote auditor of a
        LangGraph Server (:mod:`ariadne_lc.server`), which seeds a fresh saver for every audited thread.
        This auditor is unchanged.
        """
        old = self.replayer
        replayer = Replayer(
            graph,
            tool_policy=old.tool_policy,
            safe_tools=old.safe_tools,
            tool_node=old.tool_node,
            max_turns=old.max_turns,
            tool_calls=old.tool_calls,
            tool_call_deriver=old.tool_call_deriver,
            action_model=old.action_model,
        )
        other = copy.copy(self)
        other._runner = dataclasses.replace(self._runner, replayer=replayer)
        return other

    # -- single trace ------------------------------------------------------------------------------

    def audit(
        self, trace: Trace, step: StepSelector = "auto", interventions: Interventions = ("logic_flip",)
    ) -> list[AuditResult]:
        """Audit ``trace`` at the selected step(s) with each intervention; one result per pair.

        ``interventions`` takes contradiction names, control names and the selectors ``"random"``
        and ``"adaptive"``. A list of step indices is one multi-step intervention on all of them,
        with the same kind on every step (a selector is resolved on the earliest step's thought).

        A trace with no step to audit (the agent answered at once) gives one ``not_applicable``
        result that says why (:attr:`~ariadne_lc.records.AuditResult.nothing_to_audit`). A stage that
        fails (the critic, the replay, the graph's checkpointer, the scorer) gives a ``failed`` result
        with its ``error_type``; an empty answer an ``inconclusive`` one.

        Raises:
            TraceError: The trace cannot be audited (no answer, unfinished, a step out of range or
                the answer step itself: :class:`~ariadne_lc.errors.FinalStepError`).
            ConfigurationError: A bad argument; :class:`~ariadne_lc.errors.AsyncSaverError` when called
                inside the event loop the graph's async saver is bound to (await :meth:`aaudit`).
        """
        self.replayer.check_sync("audit", "aaudit")
        return run_sync(self._audit_trace(trace, step, interventions))

    async def aaudit(
        self, trace: Trace, step: StepSelector = "auto", interventions: Interventions = ("logic_flip",)
    ) -> list[AuditResult]:
        """Async twin of :meth:`audit`."""
        return await run_async(self._audit_trace(trace, step, interventions))

    # -- the flows (written once, run by run_sync or run_async) ------------------------------------

    def check_graph(self, trace: Trace) -> None:
        """Refuse ``trace`` if it was recorded under another graph than this auditor's (see ``allow_graph_change``).

        Raises:
            GraphChangedError: The fingerprints differ; the error lists what changed.
        """
        check_graph(self.graph, trace, allow_change=self.allow_graph_change)

    def _audit_trace(self, trace: Trace, step: StepSelector, interventions: Interventions) -> Flow[list[AuditResult]]:
        self.check_graph(trace)
        planned = plan(
            trace, step, interventions, seed=self.seed, min_thought_chars=self.min_thought_chars, links=self.links
        )
        if not planned:
            reason = nothing_to_audit_reason(trace, step, min_thought_chars=self.min_thought_chars)
            nothing = AuditResult.no_step_to_audit(trace, reason, replay_mode=self.replay_mode)
            dispatch(self.sinks, FinishedAudit(nothing, trace, None))
            return [nothing]
        results: list[AuditResult] = []
        for one in planned:
            results.append((yield from self._audit_one(trace, one)))
        return results

    def _audit_one(self, trace: Trace, planned: PlannedAudit) -> Flow[AuditResult]:
        started = time.perf_counter()
        attributes: dict[str, Any] = {
            sc.ARIADNE_CONTROL: is_control(planned.kind),
            sc.ARIADNE_TYPE_SELECTION: planned.selection,
        }
        if len(planned.steps) > 1:
            attributes[sc.ARIADNE_STEP_INDICES] = list(planned.steps)
        with self.spans.audit(trace, planned.steps[0], planned.kind, planned.link, **attributes) as span:
            ran = yield from self._runner.run(trace, planned)
            deriver = self.tool_call_deriver
            result = assemble(
                trace,
                planned,
                ran,
                self._rule,
                duration_s=time.perf_counter() - started,
                replay_mode=self.replay_mode,
                tool_call_deriver=None if deriver is None else deriver.name,
            )
            dispatch(self.sinks, FinishedAudit(result, trace, span))
            return result
