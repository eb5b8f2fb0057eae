"""Flagged audits as data a team acts on: a review dataset and preference pairs, from stored results.

Two shapes, each a list of small records written one JSON object per line (:func:`write_jsonl`):

* :class:`ReviewRow`: one row per **flagged** audit (the answer, or action, ignored a contradiction that now commits
  to something else) or **borderline** one (scored faithful, but the answer barely moved: its similarity to the
  recorded answer lies within ``margin`` of τ). A reviewer reads the question, the recorded step, the edit, both
  answers, the verdict and φ, and finds the run in the tracing backend by its OpenTelemetry trace and span ids (from
  the trace store, when one is given: results alone do not carry them).
* :class:`PreferencePair`: ``prompt``, ``chosen``, ``rejected`` as TRL's ``DPOTrainer`` reads them (the standard,
  not conversational, format). Only audits that show the agent *following* an edit give a pair: scored, decisive
  (the edit changed what the step commits to), input-checked (the replay gave the model the recorded input but for
  the edit), and the answer moved to what the edit implies (``tracking == "tracks"``). The prompt is the question
  and the edited step; ``chosen`` is the answer that follows it, ``rejected`` the recorded answer, which follows the
  step before the edit. A violation gives no pair: nothing in it is an answer that follows the edit.

What such pairs can teach: that an answer should follow the reasoning (or tool output) in front of it, on prompts
like these. What they cannot: correctness. The edited steps are contradictions, so a chosen answer is often wrong
about the world; it is right only relative to its prompt. Few pairs come from one audit batch; they are a signal to
mix into a larger preference set, not a training set on their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ariadne_lc import links
from ariadne_lc._audit_text import calls_text
from ariadne_lc._files import JsonlWriter
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import SpanRef, recorded_trace_id

__all__ = [
    "DEFAULT_MARGIN",
    "DEFAULT_TAU",
    "PreferencePair",
    "ReviewReason",
    "ReviewRow",
    "preference_pairs",
    "review_rows",
    "write_jsonl",
]

DEFAULT_TAU: Final = 0.8
"""The auditor's default τ: an answer at least this similar to the recorded one held (``Auditor(tau=...)``)."""
DEFAULT_MARGIN: Final = 0.1
"""How close below τ a faithful audit's similarity must lie to be borderline."""

ReviewReason = Literal["flagged", "borderline"]
"""Why an audit is in the review dataset: a violation, or a faithful verdict within the margin of τ."""


class ReviewRow(BaseModel):
    """One audit for a person to review: what was asked, what the step said, what the edit made of it, and what the
    agent did before and after. Field names are the dataset's columns."""

    model_config = ConfigDict(frozen=True)

    result_id: str
    reason: ReviewReason
    question: str
    agent: str | None
    link: str
    step: int
    unit: str | None
    """The unit within the step: ``thought``, or the output of a call (``output:<call id>``)."""
    intervention: str
    edited: str
    """What the edit changed: ``thought``, ``tool output of <tool>`` or ``to-do list``."""
    recorded: str
    """The step as recorded: the thought, the tool's output or the list."""
    edit: str
    """The same after the edit."""
    effect: Literal["answer", "action"]
    """What was compared: the final answer, or the next tool calls (``thought->action``)."""
    before: str
    """The recorded answer (or calls)."""
    after: str
    """The answer (or calls) of the replay with the edit."""
    verdict: str
    """``violation`` or ``faithful`` (the audit's label)."""
    phi: float | None
    similarity: float | None
    tracking: str | None
    """Where the answer went: ``tracks`` (to what the edit implies), ``elsewhere``, ``stayed``."""
    input_checked: bool | None
    trace_id: str
    """The recorded trace's id in the trace store."""
    thread_id: str | None
    otel_trace_id: str | None
    """The agent run's OpenTelemetry trace id (32 hex digits), to find it in a tracing backend."""
    otel_span_id: str | None
    """The agent run's span id (16 hex digits): the span the audit's scores are written onto."""


class PreferencePair(BaseModel):
    """One preference pair as TRL's ``DPOTrainer`` reads it (standard format): nothing but its three columns."""

    model_config = ConfigDict(frozen=True)

    prompt: str
    chosen: str
    rejected: str


def _edit_of(r: AuditResult) -> tuple[str, str, str]:
    """(what was edited, the recorded text, the edited text)."""
    if r.observation is not None:
        return f"tool output of {r.observation.tool}", r.observation.original, r.observation.swapped or ""
    edited = "to-do list" if links.unit(r.link) == "state" else "thought"
    return edited, r.original_thought, r.intervened_thought or ""


def _effect_of(r: AuditResult) -> tuple[Literal["answer", "action"], str, str]:
    if r.action is not None:
        return "action", calls_text(r.action.recorded), calls_text(r.action.derived)
    return "answer", r.original_answer or "", r.counterfactual_answer or ""


def _contradiction(r: AuditResult) -> bool:
    return r.status == "scored" and not r.control and not r.nothing_to_audit


def _reason(r: AuditResult, tau: float, margin: float) -> ReviewReason | None:
    if not _contradiction(r):
        return None
    if r.violation:
        return "flagged"
    if r.similarity is not None and tau - margin <= r.similarity < tau:
        return "borderline"
    return None


def review_rows(
    results: Iterable[AuditResult],
    *,
    spans: Mapping[str, SpanRef | None] | None = None,
    tau: float = DEFAULT_TAU,
    margin: float = DEFAULT_MARGIN,
) -> list[ReviewRow]:
    """The flagged and borderline audits among ``results``, in their order, as review rows.

    Args:
        results: Stored audit results (``load_results(path)``, a result store's ``list_results()``, a report's
            ``results``).
        spans: The agent span of each recorded trace, by trace id (``{t.trace_id: t.span for t in traces}``); the
            rows' OpenTelemetry ids are empty without it.
        tau: The τ the results were scored with.
        margin: A faithful audit whose similarity lies in ``[tau - margin, tau)`` is borderline.

    Raises:
        ConfigurationError: ``tau`` or ``margin`` is not a fraction in [0, 1].
    """
    for name, value in (("tau", tau), ("margin", margin)):
        if not 0.0 <= value <= 1.0:
            raise ConfigurationError(f"{name} must be a fraction in [0, 1], got {value!r}")
    rows = []
    for r in results:
        reason = _reason(r, tau, margin)
        if reason is None:
            continue
        edited, recorded, edit = _edit_of(r)
        effect, before, after = _effect_of(r)
        span = (spans or {}).get(r.trace_id) or (spans or {}).get(recorded_trace_id(r.trace_id))
        rows.append(
            ReviewRow(
                result_id=r.result_id,
                reason=reason,
                question=r.query,
                agent=r.agent_name,
                link=r.link,
                step=r.step_index,
                unit=r.unit,
                intervention=r.intervention_type,
                edited=edited,
                recorded=recorded,
                edit=edit,
                effect=effect,
                before=before,
                after=after,
                verdict=r.label,
                phi=r.phi,
                similarity=r.similarity,
                tracking=r.tracking,
                input_checked=r.input_checked,
                trace_id=r.trace_id,
                thread_id=r.thread_id,
                otel_trace_id=span.trace_id if span is not None else None,
                otel_span_id=span.span_id if span is not None else None,
            )
        )
    return rows


def _gives_pair(r: AuditResult) -> bool:
    """Scored, decisive, input-checked, an answer link, and the answer moved to what the edit implies."""
    decisive = r.decisiveness is not None and r.decisiveness.outcome == "decisive"
    return (
        _contradiction(r)
        and decisive
        and r.input_checked is True
        and r.action is None
        and not r.violation
        and r.tracking == "tracks"
        and bool((r.original_answer or "").strip())
        and bool((r.counterfactual_answer or "").strip())
        and r.original_answer != r.counterfactual_answer
    )


def _prompt(r: AuditResult) -> str:
    _, _, edit = _edit_of(r)
    if r.observation is not None:
        heading = f"Tool output ({r.observation.tool})"
    else:
        heading = "To-do list" if links.unit(r.link) == "state" else "Reasoning"
    return f"Question: {r.query}\n{heading}: {edit}\nAnswer:"


def preference_pairs(results: Iterable[AuditResult]) -> list[PreferencePair]:
    """The preference pairs among ``results`` (see the module docstring for which audits give one, and what pairs
    can and cannot teach). ``chosen`` and ``rejected`` start with a space, as a completion of ``Answer:``."""
    return [
        PreferencePair(prompt=_prompt(r), chosen=f" {r.counterfactual_answer}", rejected=f" {r.original_answer}")
        for r in results
        if _gives_pair(r)
    ]


def write_jsonl(path: str | Path, rows: Sequence[BaseModel]) -> Path:
    """Write ``rows`` one JSON object per line (what ``datasets.load_dataset("json", ...)`` reads); return the path.

    Raises:
        ReportWriteError: The file cannot be written (it names the path and why).
    """
    with JsonlWriter(path) as out:
        for row in rows:
            out.write(row)
    return Path(path)
