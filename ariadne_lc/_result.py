"""The record of one audit (:class:`AuditResult`) and the terms its verdicts are given in: pure data, a leaf of the
package (the records of the evidence a verdict rests on: :mod:`ariadne_lc._evidence`, re-exported here).

Split from :mod:`ariadne_lc.records` (which re-exports every name here and adds the aggregates and the report) so
that each module holds one concept: this one what a single audit found, per link of the agent's loop
(:data:`Link`, docs/method.md#links).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc._evidence import (
    REJECTIONS,
    ActionCheck,
    Decisiveness,
    GateOutcome,
    ObservationSwap,
    RunUnits,
    SimilarityMetrics,
)  # fmt: skip
from ariadne_lc.trace import SpanRef, Step, Trace

__all__ = [
    "LINKS",
    "NO_COHERENT_EDIT",
    "PLACEBO",
    "REJECTIONS",
    "ActionCheck",
    "AuditResult",
    "AuditStatus",
    "Decisiveness",
    "GateOutcome",
    "Label",
    "Link",
    "ObservationSwap",
    "ReplayMode",
    "RunUnits",
    "SimilarityMetrics",
    "Tracking",
]

Link = str
"""The name of a link of the agent's loop (docs/method.md#links): ``thought->action`` (does the agent do what its
thought says it will do), ``observation->answer`` (does the answer read the tool's output), ``thought->answer`` (does
the answer follow the thought), ``todo->action`` (does the agent do what its to-do list says it will do next), or one
registered with :func:`ariadne_lc.links.register`. An agent can be faithful on one link and not on another: rates are
never pooled across links."""

LINKS: Final[tuple[Link, ...]] = ("thought->action", "observation->answer", "thought->answer")
"""The three links every tool-using agent's loop has, in its order (every registered link, ``todo->action``
included: :func:`ariadne_lc.links.names`)."""

AuditStatus = Literal["scored", "not_applicable", "inconclusive", "failed"]
"""``scored``, ``not_applicable`` (nothing to contradict, or no step to audit), ``inconclusive`` (an empty
answer, no S, too weak, the length gate) or ``failed``."""

Label = Literal["faithful", "violation", "inconclusive", "control"]
"""``control`` marks a scored control (placebo, rerun, ...): its answer holding is not a faithfulness verdict."""

PLACEBO: Final = "paraphrase"
"""The control used as placebo (``ControlType.PARAPHRASE``; a test pins that the two agree)."""


NO_COHERENT_EDIT: Final = "no coherent edit"
"""Why a plan has no ``plan_swap``: no edit a person would accept as another plan could be made (the plan names its
tool only by words of free text and states no argument value another could replace, or every edit made failed to read
back as meant). Coverage reports a unit left so under this name, apart from a thought no rule could edit."""

ReplayMode = Literal["recorded", "rederive"]
"""What the replay does with the audited step's own tool calls (docs/method.md#the-steps-own-tool-calls):
``recorded`` keeps them and their recorded outputs; ``rederive`` asks a deriver for the calls the intervened
thought leads to and runs those under the tool policy."""

Tracking = Literal["tracks", "elsewhere", "stayed"]
"""Where the counterfactual answer went: to the answer the intervened thought implies (``tracks``), somewhere
else (``elsewhere``), or nowhere (``stayed``: the answer held, the violation case)."""


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
    """``scored``, ``not_applicable`` (nothing to contradict, or no step to audit), ``inconclusive`` (an empty
    answer, no S, too weak, the length gate) or ``failed``."""
    label: Label
    """``faithful``/``violation`` (scored contradictions), ``control`` (scored controls), else ``inconclusive``:
    only a scored audit carries a verdict."""
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
    """S > τ, but an answer was not longer than λ: no verdict (status and label ``inconclusive``, the reason in
    ``inconclusive_reason``), counted apart in :attr:`Aggregate.length_gate_exempted`."""
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
    """What went wrong, for a human (``"<ErrorClass>: <message>"``); never parse it, read ``error_type``."""
    error_type: str | None = None
    """The class name of the error that failed the audit (e.g. ``"ReplayError"``), set whenever ``error`` is;
    :func:`ariadne_lc.errors.error_class` maps it back to the class (``issubclass(..., ReplayError)``)."""
    duration_s: float = 0.0
    agent_name: str | None = None
    tags: tuple[str, ...] = ()
    audit_span: SpanRef | None = None
    """The audit's own span (its edit, replay and score stages under it), when a tracer recorded one: the evidence a
    backend's score links to. ``None`` without a tracer provider, and for traces that could not be audited."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    control: bool = False
    """A control (placebo, rerun, ablation, early answer, filler), reported beside the contradictions."""
    step_indices: tuple[int, ...] = ()
    """All steps intervened on at once (one for a single-step audit)."""
    type_selection: str = "fixed"
    """How the type was chosen: ``fixed``, ``random``, ``adaptive:<pattern>`` or ``decisive`` (the default plan: the
    first contradiction the link's gate accepts)."""
    variant: int = 0
    """Which of several audits of one unit and kind this is: the ``decisive`` selector's k-th contradiction
    (``contradictions_per_step``), an output's k-th other value (``observation_swaps``)."""
    severity: float | None = None
    """Graded severity S × strength (docs/method.md#severity)."""
    too_weak: bool = False
    """The intervention was weaker than the auditor's ``min_strength``: inconclusive, never a violation."""
    inconclusive_reason: str | None = None
    """Why the audit gave no verdict: an empty answer (which side), a judge reply that was no number, a too
    weak intervention, the length gate, or (with :attr:`nothing_to_audit`) why no step could be audited."""
    similarity_samples: tuple[float, ...] = ()
    """Individual judgments when S is an average of repeated ones."""
    similarity_spread: float | None = None
    """Their standard deviation."""
    intervention_rejections: tuple[str, ...] = ()
    """Critic replies rejected before the one used (or before giving up)."""
    domain: str | None = None
    """The trace's domain (:attr:`ariadne_lc.trace.Trace.domain`)."""
    decisiveness: Decisiveness | None = None
    """The decisiveness gate's record; ``None`` with the gate off (``Auditor(decisive=False)``) and for controls
    other than the placebo."""
    tracking: Tracking | None = None
    """Where the counterfactual answer went, when the intervened thought's implied answer is known."""
    reader_agrees: bool | None = None
    """Whether the gate's reading of the *original* thought is the answer the agent recorded (S > τ), for a scored
    decisive audit: when it is not, the reader does not read the thought as this agent does, and "the thought now
    commits to something else" is the reader's claim, not the agent's (calibrated: nearly every false alarm left sits
    there, docs/validity.md). ``None`` when the gate read no answer."""
    nothing_to_audit: bool = False
    """The trace has no step to audit (the agent answered at once, or no thought qualified for ``step="auto"``):
    the one result of such a trace, ``not_applicable``, with the reason in ``inconclusive_reason``."""
    replay_mode: ReplayMode = "recorded"
    """What the replay did with the audited step's own tool calls: kept them with their recorded outputs
    (``recorded``, the default), or re-derived them from the intervened thought (``rederive``); the auditor's
    setting, also on results that were never replayed."""
    tool_call_deriver: str | None = None
    """Who re-derived the step's tool calls (the deriver's ``name``); ``None`` in ``recorded`` mode."""
    input_checked: bool | None = None
    """The replay (or re-run) gave the model the recorded input of that call but for the edit, checked before
    scoring (the replay invariant, :mod:`ariadne_lc.replay._inputs`); ``False`` when the trace recorded no input to
    check against (older traces, LangGraph Server threads); ``None`` when nothing was replayed."""

    link: Link = "thought->answer"
    """Which link of the agent's loop this audit cut (:data:`Link`); reports never pool rates across links."""
    action: ActionCheck | None = None
    """The ``thought->action`` comparison (recorded against derived calls); ``None`` on the other links."""
    observation: ObservationSwap | None = None
    """The ``observation->answer`` change; ``None`` on the other links."""
    run_failed: bool = False
    """The trace's own run ended in an error (the recursion limit, a model error): the one result of such a trace,
    ``failed``, with the run's error in ``error`` and its class in ``error_type``. Listed and counted
    (:attr:`~ariadne_lc.records.Coverage.runs_failed`), never audited."""
    not_testable: str | None = None
    """Why a replay could not test the link although nothing failed (e.g. ``tool lookup not run``: a re-derived
    call needed a tool the policy may not run); such an audit is ``not_applicable``, never scored."""
    unit: str | None = None
    """The unit this result is about within its step, as the plan names it: ``thought`` or the output's
    :func:`~ariadne_lc.trace.output_unit` (``None`` on results not made from a plan, and from before units had
    names: coverage then derives it)."""
    plan_key: str | None = None
    """The planned audit's identity within its run (unit, link, selector, variant): a resumed audit skips the keys it
    has, and the result's id is made from it (``None`` on results from before plans had keys)."""
    inclusion: float = Field(default=1.0, gt=0.0, le=1.0)
    """The probability that the plan's budget kept this result's unit (1: every unit audited), in (0, 1]; rates,
    means and their intervals weight each verdict by its inverse."""
    run_units: RunUnits | None = None
    """The run's units and how many the plan kept (``None`` for an audit of named steps)."""

    @classmethod
    def _of_whole_trace(
        cls,
        trace: Trace,
        status: AuditStatus,
        replay_mode: ReplayMode,
        *,
        reason: str | None = None,
        error: str | None = None,
        error_type: str | None = None,
    ) -> AuditResult:
        """A result about a trace as a whole: no step was intervened on (``step_index`` -1, type ``-``)."""
        return cls(
            replay_mode=replay_mode,
            trace_id=trace.trace_id,
            thread_id=trace.thread_id,
            query=trace.query,
            step_index=-1,
            intervention_type="-",
            status=status,
            label="inconclusive",
            original_thought="",
            original_answer=trace.final_answer,
            inconclusive_reason=reason,
            nothing_to_audit=status == "not_applicable",
            error=error,
            error_type=error_type,
            agent_name=trace.agent_name,
            tags=trace.tags,
            domain=trace.domain,
        )

    @classmethod
    def no_step_to_audit(cls, trace: Trace, reason: str, *, replay_mode: ReplayMode = "recorded") -> AuditResult:
        """The result that says ``trace`` has no step to audit, and why (so that no trace given to an audit
        leaves no trace of it)."""
        return cls._of_whole_trace(trace, "not_applicable", replay_mode, reason=reason)

    @classmethod
    def unauditable(
        cls,
        trace: Trace,
        error: BaseException | str,
        *,
        error_type: str | None = None,
        replay_mode: ReplayMode = "recorded",
        units: RunUnits | None = None,
    ) -> AuditResult:
        """The failed result that records why a trace could not be audited at all (an error before or around
        its audits: no answer, a step out of range, the answer step; see :meth:`no_step_to_audit` for a trace
        that simply has no step to audit).

        Args:
            trace: The trace.
            error: The exception (its class name becomes ``error_type``), or a message for a failure that
                is no exception of ours (then pass ``error_type`` when one class explains it).
            error_type: The class name when ``error`` is a message.
            replay_mode: The auditor's replay mode (:attr:`replay_mode`).
            units: The trace's units (``ariadne_lc.audit.units_of``): coverage counts them, each without a verdict.
        """
        if isinstance(error, BaseException):
            error, error_type = f"{type(error).__name__}: {error}", type(error).__name__
        failed = cls._of_whole_trace(trace, "failed", replay_mode, error=error, error_type=error_type)
        return failed if units is None else failed.model_copy(update={"run_units": units})

    @staticmethod
    def run_error_of(trace: Trace) -> str | None:
        """The class of the error the trace's own run ended in (its ``error`` reads ``"<Class>: ..."``, as the
        recorders write it), else ``None`` (no error, or one about the recording, not the run)."""
        head, sep, _ = (trace.error or "").partition(":")
        return head.strip() if sep and head.strip().isidentifier() and head.strip()[:1].isupper() else None

    @classmethod
    def of_failed_run(cls, trace: Trace, *, replay_mode: ReplayMode = "recorded") -> AuditResult:
        """The result of a trace whose run ended in an error (:attr:`Trace.error`): not audited, counted."""
        error = trace.error or "the run failed"
        error_type = cls.run_error_of(trace) or "RunError"
        failed = cls._of_whole_trace(trace, "failed", replay_mode, error=error, error_type=error_type)
        return failed.model_copy(update={"run_failed": True, "inconclusive_reason": f"run failed: {error_type}"})
