"""What a score says in words next to its value: what the audit changed and what moved, in one or two sentences.

Backends show a score's explanation (Phoenix) or rationale (MLflow) beside it, and a number alone tells a reader
nothing about the run. The sentence names the edit and where the action or answer went; it quotes the thought, the
tool output and the answers only when ``quote`` is on, because those are content (the caller decides, with the
auditor's content-capture setting).
"""

from __future__ import annotations

from ariadne_lc import links
from ariadne_lc._audit_text import before_after, edited_text, tracking_sentence
from ariadne_lc.records import AuditResult

__all__ = ["audit_rationale"]


def _phi(r: AuditResult) -> str:
    return "" if r.phi is None else f" (φ {r.phi:.2f})"


def audit_rationale(r: AuditResult, *, quote: bool) -> str:
    """One audit in words: ``plan_swap on step 0 (thought->action): the action stayed as it was although the edited
    thought implies another: a violation. (φ 0.00)``; with ``quote``, also the edit and both actions or answers."""
    cause, _ = links.words(r.link)
    head = f"{r.intervention_type} on step {r.step_index} ({r.link})"
    if r.status != "scored":
        gate = r.decisiveness.outcome if r.decisiveness is not None and r.decisiveness.outcome != "decisive" else None
        why = r.inconclusive_reason or r.not_testable or gate or r.error_type or r.status
        return f"{head}: no verdict ({why})."
    _, sentence = tracking_sentence(r)
    text = f"{head}: {sentence}{_phi(r)}"
    if not quote:
        return text
    label, before, after = before_after(r)
    return f"{text} Edited {cause}: {edited_text(r)}. {label.capitalize()} before: {before!r}; after: {after!r}."
