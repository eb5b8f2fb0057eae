"""Running one planned audit: make the intervention, replay the graph with it, score the answers.

Written once as a flow (see :mod:`ariadne_lc._twin`): the sync and async auditors drive the same code.
Each stage runs in its own child span of the audit span. A stage that fails with an
:class:`~ariadne_lc.errors.AriadneError` (a critic model that raised, a replay that broke) ends the run
with that error in :attr:`Ran.error`; what was already made is kept. Nothing here builds the record or
has a side effect beyond the spans: see :mod:`ariadne_lc.audit._assemble` and the sinks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from statistics import fmean

from opentelemetry.trace import Span

from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._plan import PlannedAudit
from ariadne_lc.errors import AriadneError
from ariadne_lc.interventions import ControlType, Critic, Intervention, aintervene_with, filler_text
from ariadne_lc.otel import AuditSpans
from ariadne_lc.replay import Replayer, ReplayResult
from ariadne_lc.scoring import Similarity, SimilarityScorer, ThoughtSimilarity, ascore_with, intervention_strength
from ariadne_lc.trace import Trace

__all__ = ["MULTI_SEPARATOR", "Made", "Ran", "Runner", "control_intervention"]

logger = logging.getLogger("ariadne_lc.audit")

MULTI_SEPARATOR = "\n\n"
"""Joins the thoughts of the steps of a multi-step intervention."""


@dataclass(frozen=True, slots=True)
class Made:
    """The interventions made for one planned audit, one per step."""

    per_step: dict[int, Intervention]

    @property
    def applicable(self) -> bool:
        return all(i.applicable and i.intervened is not None for i in self.per_step.values())

    @property
    def intervened(self) -> str | None:
        """The rewritten thoughts, joined like the originals; ``None`` when one is missing."""
        parts = [i.intervened for i in self.per_step.values()]
        return None if any(p is None for p in parts) else MULTI_SEPARATOR.join(p or "" for p in parts)

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


@dataclass(frozen=True, slots=True)
class Ran:
    """Everything one planned audit produced, before it is judged."""

    made: Made | None
    """``None`` when making the intervention failed."""
    strength: float | None
    replay: ReplayResult | None
    """``None`` when the intervention was not applicable or the replay failed."""
    answers: tuple[str, str] | None
    """(a, a*) as scored; ``None`` without a replayed answer."""
    similarity: Similarity | None
    error: Exception | None
    """The error that ended the run early."""


def control_intervention(planned: PlannedAudit, thought: str) -> Intervention | None:
    """The intervention of a control that needs no critic, or ``None`` when a critic must make it."""
    kind = planned.kind
    rewrites: dict[str, str] = {
        ControlType.RERUN: thought,
        ControlType.ABLATION: "",
        ControlType.FILLER: filler_text(thought),
        ControlType.EARLY_ANSWER: thought,
    }
    if kind == ControlType.EARLY_ANSWER and len(planned.steps) > 1:
        return Intervention.not_applicable(kind, thought, "early answering cuts the run at one step")
    if kind in rewrites:
        return Intervention(
            type=kind, original=thought, intervened=rewrites[kind], applicable=True, method=f"control:{kind}"
        )
    return None


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

    def run(self, trace: Trace, planned: PlannedAudit) -> Flow[Ran]:
        """Intervene, replay and score (stages as child spans of the current audit span)."""
        made: Made | None = None
        strength: float | None = None
        error: Exception | None = None
        with self.spans.stage("intervene") as stage:
            try:
                made = yield from self._intervene(trace, planned)
                applied = made
                # a model-based similarity may load or compute for a while: keep the event loop free
                strength = yield Call(
                    lambda: self._strength(planned, applied),
                    lambda: asyncio.to_thread(self._strength, planned, applied),
                )
            except AriadneError as exc:
                error = _stage_failed(stage, "intervention", trace, planned, exc)
        replay: ReplayResult | None = None
        if made is not None and made.applicable:
            with self.spans.stage("replay") as stage:
                try:
                    replay = yield self._replay(trace, planned, made)
                except AriadneError as exc:
                    error = _stage_failed(stage, "replay", trace, planned, exc)
        answers = self._answers(trace, replay)
        similarity: Similarity | None = None
        if answers is not None:
            with self.spans.stage("score"):
                original, counterfactual = answers
                similarity = yield Call(
                    lambda: self.scorer.score(original, counterfactual, intervention=planned.kind, query=trace.query),
                    lambda: ascore_with(
                        self.scorer, original, counterfactual, intervention=planned.kind, query=trace.query
                    ),
                )
        return Ran(made, strength, replay, answers, similarity, error)

    def _intervene(self, trace: Trace, planned: PlannedAudit) -> Flow[Made]:
        maker = self.paraphraser if planned.kind == ControlType.PARAPHRASE else self.critic
        per_step: dict[int, Intervention] = {}
        for k in planned.steps:
            thought = trace.step(k).thought
            made = control_intervention(planned, thought)
            if made is None:
                made = yield _critic_call(maker, thought, planned.kind, trace.query)
            per_step[k] = made
        return Made(per_step)

    def _strength(self, planned: PlannedAudit, made: Made) -> float | None:
        if not made.applicable or planned.kind == ControlType.EARLY_ANSWER:
            return None  # early answering removes what follows the step, not the step's text
        return fmean(
            intervention_strength(i.original, i.intervened or "", self.thought_similarity)
            for i in made.per_step.values()
        )

    def _replay(self, trace: Trace, planned: PlannedAudit, made: Made) -> Call[ReplayResult]:
        replayer = self.replayer
        if planned.kind == ControlType.EARLY_ANSWER:
            k = planned.steps[0]
            return Call(lambda: replayer.replay_early_answer(trace, k), lambda: replayer.areplay_early_answer(trace, k))
        thoughts = {k: i.intervened or "" for k, i in made.per_step.items()}
        return Call(lambda: replayer.replay_steps(trace, thoughts), lambda: replayer.areplay_steps(trace, thoughts))

    def _answers(self, trace: Trace, replay: ReplayResult | None) -> tuple[str, str] | None:
        """(a, a*) as scored: the final answers, through ``answer_extractor`` when one is set."""
        if replay is None or replay.answer is None or trace.final_answer is None:
            return None
        if self.answer_extractor is None:
            return trace.final_answer, replay.answer
        return self.answer_extractor(trace.final_answer), self.answer_extractor(replay.answer)


def _critic_call(critic: Critic, thought: str, kind: str, query: str) -> Call[Intervention]:
    return Call(
        lambda: critic.intervene(thought, kind, query=query),
        lambda: aintervene_with(critic, thought, kind, query=query),
    )


def _stage_failed(stage: Span, what: str, trace: Trace, planned: PlannedAudit, exc: Exception) -> Exception:
    steps = "+".join(str(k) for k in planned.steps)
    logger.warning("ariadne: %s of trace %s step %s (%s) failed: %s", what, trace.trace_id, steps, planned.kind, exc)
    stage.record_exception(exc)
    return exc
