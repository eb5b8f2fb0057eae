"""What one planned audit made and produced, before it is judged: :class:`Edits` (the interventions and the gate's
records) and :class:`Outcome` (everything after the replay), plus the controls that need no critic, and how a stage's
failure is said (:func:`stage_failed`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from opentelemetry.trace import Span

from ariadne_lc.audit._action import ActionVerdict
from ariadne_lc.audit._plan import PlannedAudit
from ariadne_lc.errors import AriadneError
from ariadne_lc.interventions import ControlType, Intervention, filler_text
from ariadne_lc.records import Decisiveness, ObservationSwap, Tracking
from ariadne_lc.replay import ReplayResult
from ariadne_lc.replay._action import DerivedAction
from ariadne_lc.scoring import Similarity
from ariadne_lc.trace import Trace

logger = logging.getLogger("ariadne_lc.audit")

__all__ = ["MULTI_SEPARATOR", "Edits", "Outcome", "control_intervention", "stage_failed"]

MULTI_SEPARATOR = "\n\n"
"""Joins the thoughts of the steps of a multi-step intervention."""


@dataclass(frozen=True, slots=True)
class Edits:
    """The interventions made for one planned audit, one per step, and the gate's record of each gated one."""

    per_step: dict[int, Intervention]
    gate: dict[int, Decisiveness] = field(default_factory=dict)
    observation: ObservationSwap | None = None
    """``observation->answer``: the output changed (``per_step`` then holds the reader's contexts, thought and
    output, before and after)."""
    kind: str | None = None
    """The contradiction a ``decisive`` selector resolved to (``None``: the planned kind)."""

    @property
    def decisiveness(self) -> Decisiveness | None:
        """The gate's record of the first step (every step of a multi-step audit is gated alike)."""
        return next(iter(self.gate.values()), None)

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
class Outcome:
    """Everything one planned audit produced, before it is judged."""

    made: Edits | None = None
    """``None`` when making the intervention failed (or there was nothing to make: no recorded answer)."""
    strength: float | None = None
    replay: ReplayResult | None = None
    """``None`` when the intervention was not applicable or the replay failed."""
    answers: tuple[str, str] | None = None
    """(a, a*) as scored; ``None`` without a replayed answer."""
    similarity: Similarity | None = None
    error: Exception | None = None
    """The error that ended the run early."""
    unscored: str | None = None
    """Why the answers were not scored although nothing failed: an empty or missing answer, and on which side."""
    tracking_similarity: float | None = None
    """S(implied answer of the intervened thought, a*), when the gate read one: where the answer went."""
    baseline_similarity: float | None = None
    """S(implied answer of the original thought, a), when the gate read one: whether the reader reads the thought as
    the agent did."""
    not_testable: str | None = None
    """Why the replay could not test the link although nothing failed (a needed tool was not run)."""
    derived: DerivedAction | None = None
    """``thought->action``: the calls the step's model made with the intervened thought (never run)."""
    action: ActionVerdict | None = None
    """``thought->action``: S between the recorded and the derived calls, and where they went."""
    value_tracking: Tracking | None = None
    """``observation->answer`` with a swap read on its values: where the answer went (S is then the values' own)."""


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


def stage_failed(stage: Span, what: str, trace: Trace, planned: PlannedAudit, exc: Exception) -> Exception:
    """Log ``exc``, the failure of stage ``what`` of ``planned`` on ``trace`` (a traceback unless it is one of ours), on
    the stage's span too; returns it for the :class:`Outcome` that carries it."""
    steps = "+".join(str(k) for k in planned.steps)
    ours = isinstance(exc, AriadneError)  # anything else (a checkpointer, a user's component) gets its traceback
    logger.warning(
        "ariadne: %s of trace %s step %s (%s) failed: %s: %s",
        what,
        trace.trace_id,
        steps,
        planned.kind,
        type(exc).__name__,
        exc,
        exc_info=None if ours else exc,
    )
    stage.record_exception(exc)
    return exc
