"""Running one planned audit: make the intervention, replay the graph with it, score the answers.

Written once as a flow (see :mod:`ariadne_lc._twin`): the sync and async auditors drive the same code.
Each stage runs in its own child span of the audit span. A stage that fails ends the run with its error
in :attr:`Outcome.error`; what was already made is kept. That holds for any exception, not only ours: the
replayed graph's own errors arrive as :class:`~ariadne_lc.errors.ReplayError`, but the checkpointer is
called directly (a closed database, a dropped connection), and a user's critic or scorer may raise
anything; one audit's failure must not take a batch down with it.

An empty answer gives no verdict (two empty texts are "identical"): when the recorded answer is empty
nothing is run, and when the replayed one is empty (or missing) nothing is scored; :attr:`Outcome.unscored`
says which side. Nothing here builds the record or has a side effect beyond the spans: see
:mod:`ariadne_lc.audit._assemble` and the sinks.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import fmean

from ariadne_lc import links
from ariadne_lc._cache import Lru
from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._action import ActionGates, action_verdict
from ariadne_lc.audit._decisive import DECISIVE_CHAINS, Chain, ChainKey, critic_call, decisive
from ariadne_lc.audit._gate import Gate, gated
from ariadne_lc.audit._observe import observation_edits, value_verdict
from ariadne_lc.audit._outcome import MULTI_SEPARATOR, Edits, Outcome, control_intervention, stage_failed
from ariadne_lc.audit._plan import ACTION_KINDS, DECISIVE, PlannedAudit
from ariadne_lc.audit._pool import RecordedValues, argument_history, argument_values
from ariadne_lc.audit._todo import todo_audit
from ariadne_lc.interventions import ControlType, Critic, Intervention, InterventionType, is_control
from ariadne_lc.interventions.action_model import ModelActionReader
from ariadne_lc.interventions.actions import call_similarity, tool_specs
from ariadne_lc.interventions.observations import ObservationSwapper
from ariadne_lc.interventions.plans import ModelPlanEditor, PlanCritic
from ariadne_lc.interventions.values import ValueSwapper
from ariadne_lc.otel import AuditSpans
from ariadne_lc.records import Decisiveness
from ariadne_lc.replay import Replayer, ReplayResult
from ariadne_lc.replay._action import DerivedAction
from ariadne_lc.replay._inputs import Unchecked
from ariadne_lc.replay._own import HANDOFF_PREFIXES
from ariadne_lc.scoring import (
    DEFAULT_TAU,
    Similarity,
    SimilarityScorer,
    ThoughtSimilarity,
    ascore_with,
    intervention_strength,
)
from ariadne_lc.trace import Trace

__all__ = ["MULTI_SEPARATOR", "Edits", "Outcome", "Runner", "control_intervention"]


DERIVED_CACHE_SIZE = 256
"""Re-runs of a step's model kept for the other link of the same edit (oldest out first)."""


@dataclass(frozen=True, slots=True)
class Runner:
    """The parts that run an audit (the :class:`~ariadne_lc.Auditor` documents each)."""

    replayer: Replayer
    critic: Critic
    paraphraser: Critic
    scorer: SimilarityScorer
    thought_similarity: ThoughtSimilarity
    spans: AuditSpans
    answer_extractor: Callable[[str], str] | None
    gate: Gate | None = None
    """The decisiveness gate; ``None``: every applicable edit is replayed (``Auditor(decisive=False)``)."""
    swapper: ObservationSwapper = field(default_factory=ValueSwapper)
    """Makes the ``observation_swap`` of the ``observation->answer`` link (a plain ``swap`` swapper arrives wrapped:
    :func:`~ariadne_lc.interventions.observations.in_context`)."""
    actions: ActionGates | None = None
    """The ``thought->action`` gates (one per tool set); ``None`` with the gate off."""
    tau: float = DEFAULT_TAU
    derived: Lru[tuple[str, int, str], DerivedAction] = field(default_factory=lambda: Lru(DERIVED_CACHE_SIZE))
    """Re-runs of a step's model by (trace id, step, thought), bounded (:data:`DERIVED_CACHE_SIZE`) and shared by a
    batch's threads."""
    recorded: RecordedValues | None = None
    """The user's frozen reference pool (``InterventionOptions.recorded_values``), read after the audited run's own
    values and never filled by the audits: a unit's swap does not depend on what was audited before."""
    allow_unchecked: bool = False
    """Score a replay whose input could not be checked against a recorded one (``ReplayOptions.allow_unchecked``)."""
    decisive_chains: Lru[ChainKey, Chain] = field(default_factory=lambda: Lru(DECISIVE_CHAINS))
    """The ``decisive`` selector's contradictions per step and link, made once for all its variants
    (:mod:`._decisive`), bounded (:data:`~._decisive.DECISIVE_CHAINS`) and shared by a batch's threads."""

    def run(self, trace: Trace, planned: PlannedAudit, batch: RecordedValues | None = None) -> Flow[Outcome]:
        """Intervene, replay and score (stages as child spans of the current audit span); ``batch``: the outputs of
        the batch being audited, an observation swap's last resort (:mod:`._pool`)."""
        strategy = links.get(planned.link).strategy
        if strategy == "rerun_step":
            return (yield from self._run_action(trace, planned))
        if strategy == "rerun_state":
            return (yield from todo_audit(self, trace, planned))
        original = self._scored(trace.final_answer or "")
        if not original.strip():
            return Outcome(unscored=self._empty("recorded"))
        made: Edits | None = None
        strength: float | None = None
        error: Exception | None = None
        with self.spans.stage("intervene") as stage:
            try:
                if strategy == "replay_output":
                    made = yield from self._swap(trace, planned, batch)
                else:
                    made = yield from self._intervene(trace, planned, self.gate)
                applied = made
                # a model-based similarity may load or compute for a while: keep the event loop free
                strength = yield Call(
                    lambda: self._strength(planned, applied),
                    lambda: asyncio.to_thread(self._strength, planned, applied),
                )
            except Exception as exc:
                error = stage_failed(stage, "intervention", trace, planned, exc)
        replay: ReplayResult | None = None
        calls: DerivedAction | None = None
        if made is not None and made.applicable and strategy == "replay_thought" and _hands_off(trace, planned):
            return Outcome(made=made, strength=strength, error=error, not_testable=_THROUGH_HANDOFF)
        if made is not None and made.applicable:
            with self.spans.stage("replay") as stage:
                try:
                    calls = yield from self._new_calls(trace, planned, made)
                    replay = yield self._replay(trace, planned, made, calls)
                except Exception as exc:
                    error = stage_failed(stage, "replay", trace, planned, exc)
        if replay is None:
            return Outcome(made=made, strength=strength, replay=replay, error=error)
        if replay.unchecked is not None and replay.model_calls == 0 and calls is not None and calls.input_checked:
            # the answer is the re-run step's own (it answered instead of calling): that re-run's input was checked
            replay = dataclasses.replace(replay, input_checked=True, unchecked=None)
        if replay.unchecked is not None and not self.allow_unchecked:
            unchecked = Unchecked(replay.unchecked).reason()
            return Outcome(made=made, strength=strength, replay=replay, error=error, unscored=unchecked)
        if replay.tools_unavailable and (calls is not None or replay.replay_mode == "rederive"):
            missing = ", ".join(sorted(set(replay.tools_unavailable)))
            reason = f"not testable: tool {missing} not run (the policy may not run it; declare it in safe_tools)"
            return Outcome(made=made, strength=strength, replay=replay, error=error, not_testable=reason)
        if replay.answer is None:
            unscored = "the replay ended without an answer"
            return Outcome(made=made, strength=strength, replay=replay, error=error, unscored=unscored)
        answers = (original, self._scored(replay.answer))
        if not answers[1].strip():
            return Outcome(made=made, strength=strength, replay=replay, answers=answers, error=error,
                       unscored=self._empty("replayed"))  # fmt: skip
        similarity: Similarity | None = None
        tracking: float | None = None
        baseline: float | None = None
        with self.spans.stage("score") as stage:
            try:
                similarity = yield self._score(*answers, planned.kind, trace.query)
                record = made.decisiveness if made is not None else None
                if record is not None and record.outcome == "decisive" and record.intervened_implied is not None:
                    tracking = (
                        yield self._score(record.intervened_implied, answers[1], planned.kind, trace.query)
                    ).value
                if record is not None and record.outcome == "decisive" and record.original_implied is not None:
                    baseline = (yield self._score(record.original_implied, answers[0], planned.kind, trace.query)).value
            except Exception as exc:
                error = stage_failed(stage, "scoring", trace, planned, exc)
        value_tracking = None
        swap = None if made is None else made.observation
        if swap is not None and swap.mode is not None and similarity is not None and not is_control(planned.kind):
            similarity, value_tracking = value_verdict(swap, answers[1], similarity, self.tau)
        return Outcome(
            made=made, strength=strength, replay=replay, answers=answers, similarity=similarity, error=error,
            tracking_similarity=tracking, baseline_similarity=baseline, value_tracking=value_tracking,
        )  # fmt: skip

    def _score(self, a: str, b: str, kind: str, query: str) -> Call[Similarity]:
        scorer = self.scorer
        return Call(
            lambda: scorer.score(a, b, intervention=kind, query=query),
            lambda: ascore_with(scorer, a, b, intervention=kind, query=query),
        )

    def _run_action(self, trace: Trace, planned: PlannedAudit) -> Flow[Outcome]:
        """The ``thought->action`` audit (:mod:`._action`): gate on the implied action, re-run the step's model."""
        k = planned.steps[0]
        step = trace.step(k)
        tools = tool_specs(self.replayer.tools_for(trace, step.index))
        gate = None if self.actions is None else self.actions.gate(tools)
        made: Edits | None = None
        error: Exception | None = None
        with self.spans.stage("intervene") as stage:
            try:
                made = yield from self._intervene(trace, planned, gate)
            except Exception as exc:
                error = stage_failed(stage, "intervention", trace, planned, exc)
        if made is None or not made.applicable:
            return Outcome(made=made, error=error)
        thought = made.per_step[k].intervened or ""
        derived: DerivedAction | None = None
        with self.spans.stage("replay") as stage:
            try:
                derived = yield from self._derive(trace, k, thought)
            except Exception as exc:
                error = stage_failed(stage, "action re-run", trace, planned, exc)
        if derived is None:
            return Outcome(made=made, strength=self._strength(planned, made), error=error)
        if derived.unchecked is not None and not self.allow_unchecked:
            reason = Unchecked(derived.unchecked).reason()
            return Outcome(
                made=made, strength=self._strength(planned, made), error=error, derived=derived, unscored=reason
            )
        record = made.decisiveness
        implied = None
        if self.actions is not None and record is not None and record.outcome in ("decisive", "placebo_kept"):
            implied = self.actions.implied(record.intervened_implied)
        verdict = action_verdict(step.tool_calls, derived, implied, self.tau)
        similarity = Similarity(value=verdict.similarity, method="calls")
        strength = self._strength(planned, made)
        return Outcome(
            made=made, strength=strength, similarity=similarity, error=error, derived=derived, action=verdict
        )

    def _swap(self, trace: Trace, planned: PlannedAudit, batch: RecordedValues | None) -> Flow[Edits]:
        """The ``observation->answer`` intervention (:func:`~._observe.observation_edits`)."""
        step = trace.step(planned.steps[0])
        call = step.tool_calls[planned.call_index or 0]
        return (
            yield from observation_edits(
                trace,
                planned,
                self.swapper,
                answer=self._scored(trace.final_answer or ""),
                tool=self.replayer.tools_for(trace, step.index).get(call.name),
                pool=self.recorded,
                batch=batch,
                gate=self.gate,
            )
        )

    def _intervene(self, trace: Trace, planned: PlannedAudit, gate: Gate | None) -> Flow[Edits]:
        """The interventions of ``planned``, each through ``gate`` (``None``: ungated)."""
        if planned.kind == DECISIVE:
            return (yield from decisive(self._maker, trace, planned, gate, self.decisive_chains))
        per_step: dict[int, Intervention] = {}
        records: dict[int, Decisiveness] = {}
        for k in planned.steps:
            thought = trace.step(k).thought
            maker = self._maker(trace, k, planned.kind)
            made = control_intervention(planned, thought)
            if made is None:
                made = yield critic_call(maker, thought, planned.kind, trace.query)
            if gate is not None and gated(planned.kind):
                made, record = yield from gate.check(maker, thought, planned.kind, trace.query, made)
                if record is not None:
                    records[k] = record
            per_step[k] = made
        return Edits(per_step, records)

    def _maker(self, trace: Trace, k: int, kind: str) -> Critic:
        """Who makes ``kind``: the paraphraser, a plan critic given the step's tools, or the critic. The plan critic's
        table holds the step's tools only (their values in the run, then the pool's; their schemas', cached): cheap."""
        if kind == ControlType.PARAPHRASE:
            return self.paraphraser
        if kind == InterventionType.PLAN_SWAP:
            step = trace.step(k)
            tools = self.replayer.tools_for(trace, step.index)
            recorded = {name: self.recorded.arguments(name) for name in tools} if self.recorded is not None else {}
            allowed = {name: argument_values(tool) for name, tool in tools.items()}
            calls = [(c.name, c.args) for c in step.tool_calls]
            reader = None if self.actions is None else self.actions.reader
            editor = ModelPlanEditor(reader.model) if isinstance(reader, ModelActionReader) else None
            history = argument_history(trace, tools)
            specs = tool_specs(tools)
            return PlanCritic(specs, recorded, allowed=allowed, calls=calls, by_argument=history, editor=editor)
        return self.critic

    def _strength(self, planned: PlannedAudit, made: Edits) -> float | None:
        if not made.applicable or planned.kind == ControlType.EARLY_ANSWER:
            return None  # early answering removes what follows the step, not the step's text
        return fmean(
            intervention_strength(i.original, i.intervened or "", self.thought_similarity)
            for i in made.per_step.values()
        )

    def _new_calls(self, trace: Trace, planned: PlannedAudit, made: Edits) -> Flow[DerivedAction | None]:
        """``thought->answer`` with a way to re-run the step's model: the calls it makes with the new thought, when
        they differ from the recorded ones (the replay then runs those, under the tool policy); else ``None``."""
        replayer = self.replayer
        if (
            replayer.action_source is None
            or replayer.tool_calls != "recorded"
            or made.observation is not None
            or len(planned.steps) > 1
            or planned.kind not in ACTION_KINDS
        ):
            return None
        k, thought = planned.steps[0], made.per_step[planned.steps[0]].intervened or ""
        derived = yield from self._derive(trace, k, thought)
        recorded = [(c.name, c.args) for c in trace.step(k).tool_calls]
        if call_similarity(recorded, [(c.name, c.args) for c in derived.calls]) == 1.0:
            return None
        return derived

    def plan_critic(self, trace: Trace, k: int) -> Critic:
        """The plan critic of step ``k`` (its tools, their values in the run and the pool): a plan swap's maker."""
        return self._maker(trace, k, InterventionType.PLAN_SWAP)

    def _derive(self, trace: Trace, k: int, thought: str) -> Flow[DerivedAction]:
        """The step's model re-run with ``thought``, once per (trace, step, thought), even when a batch's threads
        ask at once: the ``thought->action`` audit and the ``thought->answer`` replay of the same edit share it."""
        replayer = self.replayer
        derived, _ = yield from self.derived.get_or_make(
            (trace.trace_id, k, thought),
            Call(lambda: replayer.derive_action(trace, k, thought), lambda: replayer.aderive_action(trace, k, thought)),
        )
        return derived

    def _replay(
        self, trace: Trace, planned: PlannedAudit, made: Edits, derived: DerivedAction | None = None
    ) -> Call[ReplayResult]:
        replayer = self.replayer
        if planned.kind == ControlType.EARLY_ANSWER:
            k = planned.steps[0]
            return Call(lambda: replayer.replay_early_answer(trace, k), lambda: replayer.areplay_early_answer(trace, k))
        if made.observation is not None:
            k, swap = planned.steps[0], made.observation
            thoughts, outputs = {k: trace.step(k).thought}, {swap.call_id or "": swap.swapped or ""}
        else:
            thoughts, outputs = {k: i.intervened or "" for k, i in made.per_step.items()}, {}
        calls, reply = (None, "") if derived is None else (derived.calls, derived.text)
        return Call(
            lambda: replayer.replay_steps(trace, thoughts, outputs=outputs, calls=calls, reply=reply),
            lambda: replayer.areplay_steps(trace, thoughts, outputs=outputs, calls=calls, reply=reply),
        )

    def _scored(self, answer: str) -> str:
        """An answer as scored: through ``answer_extractor`` when one is set."""
        return answer if self.answer_extractor is None else self.answer_extractor(answer)

    def _empty(self, side: str) -> str:
        how = " after answer_extractor" if self.answer_extractor is not None else ""
        return f"the {side} answer is empty{how}: an empty answer gives no verdict"


_THROUGH_HANDOFF = (
    "not testable: the step hands off to another agent, and a replay answers a hand-off from the recording without "
    "running the agent it hands to (its thought->action and the result it gets back are audited)"
)


def _hands_off(trace: Trace, planned: PlannedAudit) -> bool:
    """Whether the replay of ``planned`` would run on from a hand-off (a supervisor's ``transfer_to_<worker>``)."""
    return any(c.name.startswith(HANDOFF_PREFIXES) for c in trace.step(max(planned.steps)).tool_calls)
