"""The :class:`Auditor`: plan, run, assemble, hand each record to the sinks; sync and async from one flow."""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any, Unpack

from langchain_core.language_models import BaseChatModel

from ariadne_lc import semconv as sc
from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.audit._action import ActionGates
from ariadne_lc.audit._assemble import Rule, assemble
from ariadne_lc.audit._batch import BatchAudits
from ariadne_lc.audit._budget import Sampled, check_budget, sample
from ariadne_lc.audit._config import Interventions, check_graph, resolve_links, resolve_reader
from ariadne_lc.audit._gate import Gate
from ariadne_lc.audit._options import (
    AuditorOptions,
    InterventionOptions,
    OutputOptions,
    ReplayOptions,
    ScoringOptions,
    gather,
)
from ariadne_lc.audit._plan import DEFAULT_INTERVENTIONS, PlannedAudit, StepSelector, nothing_to_audit_reason, plan
from ariadne_lc.audit._pool import RecordedValues
from ariadne_lc.audit._run import Runner
from ariadne_lc.audit._sinks import AuditSink, FinishedAudit, ResultStoreSink, ScoreWriteBackSink, SpanSink, dispatch
from ariadne_lc.audit._view import AuditorView
from ariadne_lc.interventions import RuleCritic, RuleParaphraser, is_control
from ariadne_lc.interventions.action_model import ModelActionReader
from ariadne_lc.interventions.actions import RuleActionReader
from ariadne_lc.interventions.observations import LLMObservationSwapper, in_context
from ariadne_lc.interventions.values import ValueSwapper
from ariadne_lc.otel import AuditSpans, span_ref_of
from ariadne_lc.records import AuditResult, Link, RunUnits
from ariadne_lc.replay import Replayer
from ariadne_lc.scoring import AnswerMatchScorer, sequence_similarity
from ariadne_lc.trace import Trace

__all__ = ["Auditor"]

logger = logging.getLogger("ariadne_lc.audit")


class Auditor(AuditorView, BatchAudits):
    """Audits recorded traces of ``graph`` by counterfactual replay.

    Its options come in four small frozen objects, each documented field by field and checked where it is built:
    :class:`~ariadne_lc.audit.InterventionOptions` (critic, paraphraser, swapper, the decisiveness gate and its
    readers, step selection, seed), :class:`~ariadne_lc.audit.ReplayOptions` (tool policy, safe tools, the step's own
    tool calls, graph changes), :class:`~ariadne_lc.audit.ScoringOptions` (scorer, τ, λ, minimum strength, answer
    extraction, batch statistics) and :class:`~ariadne_lc.audit.OutputOptions` (spans, result store, score write-back,
    sinks). Each field is also a flat keyword, a shorthand routed into its object: ``Auditor(graph, tau=0.7)`` is
    ``Auditor(graph, scoring=ScoringOptions(tau=0.7))``. An option given both ways is an error.

    Args:
        graph: The user's compiled graph, with the checkpointer the traces were recorded with.
        intervention: What to intervene with; default :data:`~ariadne_lc.audit.DEFAULT_INTERVENTION`.
        replay: How to replay; default :data:`~ariadne_lc.audit.DEFAULT_REPLAY`.
        scoring: How to score; default :data:`~ariadne_lc.audit.DEFAULT_SCORING`.
        output: Where records go; default :data:`~ariadne_lc.audit.DEFAULT_OUTPUT`.
        model: The agent's own chat model: re-run with a contradicted thought as the start of its reply for the
            ``thought->action`` link (docs/method.md#links), and the gates' reader unless ``reader`` and
            ``action_reader`` are given. Not needed for ``create_agent`` graphs with
            :class:`~ariadne_lc.AriadneMiddleware`, which re-runs the recorded model call itself.
        links: Which links to audit (:func:`ariadne_lc.links.names`); default every link this auditor can audit
            (``thought->action`` needs the middleware, ``model`` or, named here, a ``tool_call_deriver``). See
            :attr:`links`.
        **options: Flat shorthands for the objects' fields (:class:`~ariadne_lc.audit.AuditorOptions`).

    Raises:
        ConfigurationError: A bad option (said by the object it belongs to), or one given both in its object and
            flat.
        TypeError: A keyword that is no option.

    Examples:
        >>> auditor = Auditor(graph, scoring=ScoringOptions(tau=0.7), tool_policy="live")  # doctest: +SKIP
        >>> for r in auditor.audit(trace, interventions=["logic_flip", "paraphrase"]):  # doctest: +SKIP
        ...     print(r.intervention_type, r.control, r.phi, r.violation)
    """

    def __init__(
        self,
        graph: Any,
        *,
        intervention: InterventionOptions | None = None,
        replay: ReplayOptions | None = None,
        scoring: ScoringOptions | None = None,
        output: OutputOptions | None = None,
        model: BaseChatModel | None = None,
        links: Sequence[Link] | None = None,
        **options: Unpack[AuditorOptions],
    ) -> None:
        made, how, rule, out = gather(options, intervention=intervention, replay=replay, scoring=scoring, output=output)
        critic = made.critic or RuleCritic()
        scorer = rule.scorer or AnswerMatchScorer()
        reader = made.reader if made.reader is not None else model
        gate = Gate(resolve_reader(reader, critic), scorer, rule.tau, made.gate_attempts) if made.decisive else None
        action_reader = made.action_reader
        if action_reader is None:
            action_reader = ModelActionReader(model) if model is not None else RuleActionReader()
        self.spans = AuditSpans(
            out.tracer_provider, capture_content=out.capture_content, redact=out.redact,
            logger_provider=out.logger_provider, evaluation_events=out.evaluation_events,
        )  # fmt: skip
        self._runner = Runner(
            replayer=Replayer(
                graph,
                tool_policy=how.tool_policy,
                safe_tools=how.safe_tools,
                tool_node=how.tool_node,
                max_turns=how.max_turns,
                tool_calls=how.tool_calls,
                tool_call_deriver=how.tool_call_deriver,
                action_model=model,
                agents=how.agents,
            ),
            critic=critic,
            paraphraser=made.paraphraser or RuleParaphraser(),
            scorer=scorer,
            thought_similarity=made.thought_similarity or sequence_similarity,
            spans=self.spans,
            answer_extractor=rule.answer_extractor,
            gate=gate,
            swapper=in_context(made.swapper or ValueSwapper(None if model is None else LLMObservationSwapper(model))),
            actions=ActionGates(action_reader, made.gate_attempts) if made.decisive else None,
            tau=rule.tau,
            recorded=made.recorded_values,
            allow_unchecked=how.allow_unchecked,
        )
        self.links: tuple[Link, ...] = resolve_links(links, self._runner.replayer)
        """The links this auditor audits (docs/method.md#links)."""
        self._rule = Rule(
            tau=rule.tau,
            lam=rule.lam,
            min_strength=rule.min_strength,
            keep_scored_answers=rule.answer_extractor is not None,
        )
        self.graph = graph
        self.allow_graph_change = how.allow_graph_change
        self.seed = made.seed
        self.confidence = rule.confidence
        self.rrr_threshold = rule.rrr_threshold
        self.min_thought_chars = made.min_thought_chars
        self.observation_swaps = made.observation_swaps
        self.contradictions_per_step = made.contradictions_per_step
        self.budget = check_budget(made.budget)
        """Model calls the default plan may spend per model call of an audited run (``None``: every unit)."""
        built: list[AuditSink] = [SpanSink(self.spans)]
        if out.result_store is not None:
            built.append(ResultStoreSink(out.result_store))
        if out.score_writers:
            built.append(ScoreWriteBackSink(out.score_writers, self.spans))
        self.sinks: tuple[AuditSink, ...] = (*built, *out.sinks)
        """Every sink, in the order each record is handed to them."""

    def with_sinks(self, sinks: Sequence[AuditSink]) -> Auditor:
        """The same auditor (graph, critic, scorer, rule, spans) handing its records to ``sinks`` instead.

        For a caller that persists results itself, e.g. the online worker, which commits them together
        with its job's state: ``auditor.with_sinks([s for s in auditor.sinks if not isinstance(s,
        ResultStoreSink)])`` keeps the span and the write-back and drops the result store. This auditor
        is unchanged; the two share their components (and a write-back sink's error counter).
        """
        checked = OutputOptions(sinks=sinks).sinks  # the same check as the auditor's own sinks
        other = copy.copy(self)
        other.sinks = tuple(checked)
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

    def with_budget(self, budget: float | None) -> Auditor:
        """The same auditor with another default-plan budget (``None``: every unit; docs/method.md#the-budget)."""
        other = copy.copy(self)
        other.budget = check_budget(budget)
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
            agents=old.agents,
        )
        other = copy.copy(self)
        other._runner = dataclasses.replace(self._runner, replayer=replayer)
        return other

    # -- single trace ------------------------------------------------------------------------------

    def audit(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]:
        """Audit ``trace`` at the selected step(s) with each intervention; one result per pair.

        The defaults are the default plan (docs/method.md#the-default-plan): ``step=None`` is every unit of the trace
        (each step with a thought, on each thought link this auditor audits; each tool output, on
        ``observation->answer``), and :data:`~ariadne_lc.audit.DEFAULT_INTERVENTIONS` the first decisive
        contradictions of each thought and an ``observation_swap`` of each output.

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
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
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

    def planned(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[tuple[Trace, Sampled]]:
        """What :meth:`audit` would run on ``trace``, without running it: per agent's run (a trace of several agents
        is split, see :meth:`~ariadne_lc.replay.Replayer.agents_of`), the planned audits the budget keeps (each with
        its :attr:`~PlannedAudit.key` and cost) and the run's units. Costs no model call.

        Raises:
            TraceError, ConfigurationError: As :meth:`audit` does, before any work.
        """
        runs = self.replayer.agents_of(trace) if step is None else [trace]
        out = []
        for run in runs:
            planned = plan(
                run, step, interventions, seed=self.seed, min_thought_chars=self.min_thought_chars, links=self.links,
                observation_swaps=self.observation_swaps, contradictions_per_step=self.contradictions_per_step,
            )  # fmt: skip
            budget = self.budget if step is None else None  # named steps are audited as named
            out.append((run, sample(run, planned, budget=budget, seed=self.seed)))
        return out

    def _audit_trace(
        self,
        trace: Trace,
        step: StepSelector | None,
        interventions: Interventions,
        batch: RecordedValues | None = None,
    ) -> Flow[list[AuditResult]]:
        self.check_graph(trace)
        results: list[AuditResult] = []
        for run, sampled in self.planned(trace, step, interventions):
            results.extend((yield from self._audit_run(run, step, sampled, batch)))
        return results

    def _audit_run(
        self, trace: Trace, step: StepSelector | None, sampled: Sampled, batch: RecordedValues | None
    ) -> Flow[list[AuditResult]]:
        if not sampled.audits:
            reason = nothing_to_audit_reason(trace, step or "all", min_thought_chars=self.min_thought_chars)
            nothing = AuditResult.no_step_to_audit(trace, reason, replay_mode=self.replay_mode)
            dispatch(self.sinks, FinishedAudit(nothing, trace, None))
            return [nothing]
        units = sampled.units if step is None else None
        results: list[AuditResult] = []
        for one in sampled.audits:
            results.append((yield from self._audit_one(trace, one, units, batch)))
        return results

    def _audit_one(
        self, trace: Trace, planned: PlannedAudit, units: RunUnits | None, batch: RecordedValues | None
    ) -> Flow[AuditResult]:
        started = time.perf_counter()
        attributes: dict[str, Any] = {
            sc.ARIADNE_CONTROL: is_control(planned.kind),
            sc.ARIADNE_TYPE_SELECTION: planned.selection,
        }
        if len(planned.steps) > 1:
            attributes[sc.ARIADNE_STEP_INDICES] = list(planned.steps)
        with self.spans.audit(trace, planned.steps[0], planned.kind, planned.link, **attributes) as span:
            ran = yield from self._runner.run(trace, planned, batch)
            deriver = self.tool_call_deriver
            result = assemble(
                trace,
                planned,
                ran,
                self._rule,
                duration_s=time.perf_counter() - started,
                replay_mode=self.replay_mode,
                tool_call_deriver=None if deriver is None else deriver.name,
            ).model_copy(
                update={
                    "unit": planned.unit[1],
                    "plan_key": planned.key,
                    "inclusion": planned.inclusion,
                    "run_units": units,
                    "audit_span": span_ref_of(span),
                }
            )
            if result.intervention_type != planned.kind:  # a selector resolved when the audit ran
                span.set_attribute(sc.ARIADNE_INTERVENTION_TYPE, result.intervention_type)
            dispatch(self.sinks, FinishedAudit(result, trace, span))
            return result
