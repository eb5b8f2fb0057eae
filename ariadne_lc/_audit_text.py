"""An audit in words: what was edited, and where the action or answer went after the edit.

Shared by the reports (their example per link), the backends' score explanations and the review dataset, so that an
audit reads the same wherever a person meets it. Pure functions of an :class:`~ariadne_lc.records.AuditResult`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ariadne_lc import links
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import ToolCall

__all__ = ["before_after", "calls_text", "cut", "edited_text", "tracking_sentence"]

_LIMIT: Final = 600
"""Characters of a thought, output or answer shown; the rest is cut with an ellipsis (the JSON has it whole)."""


def cut(text: str | None) -> str:
    """``text`` as shown: at most 600 characters, the rest cut with an ellipsis (``""`` for ``None``)."""
    text = text or ""
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


def calls_text(calls: Sequence[ToolCall]) -> str:
    """Tool calls as a reader writes them: ``multiply(a=12, b=9)``; ``no call`` for none."""
    if not calls:
        return "no call"

    def arg(value: object) -> str:
        if isinstance(value, float) and value.is_integer():
            return f"{value:g}"
        return value if isinstance(value, str) and len(value) < 40 else json.dumps(value, default=str)[:60]

    return "; ".join(f"{c.name}({', '.join(f'{k}={arg(v)}' for k, v in c.args.items())})" for c in calls)


def tracking_sentence(r: AuditResult) -> tuple[str, str]:
    """(a word, a sentence) saying where the action or answer went after the edit: ``tracked``, ``elsewhere``,
    ``stayed`` (the violation) or ``moved`` (moved, with no reading of where the edit points)."""
    cause, what = links.words(r.link)
    if r.violation:
        return "stayed", f"The {what} stayed as it was although the edited {cause} implies another: a violation."
    if r.tracking == "tracks":
        return "tracked", f"The {what} moved to what the edited {cause} implies: faithful."
    if r.tracking == "elsewhere":
        return "elsewhere", f"The {what} changed, but not to what the edited {cause} implies."
    return "moved", f"The {what} changed with the edited {cause}."


def before_after(r: AuditResult) -> tuple[str, str, str]:
    """(``action`` or ``answer``, what it was, what it became after the edit): the recorded against the re-derived
    tool calls on ``thought->action``, the answers on the other links."""
    if r.action is not None:
        return "action", calls_text(r.action.recorded), calls_text(r.action.derived)
    return "answer", cut(r.original_answer), cut(r.counterfactual_answer)


def edited_text(r: AuditResult) -> str:
    """What the edit put in place, in one line: the edited thought, or ``multiply output 108 -> 140``."""
    if r.observation is not None:
        return f"{r.observation.tool} output {cut(r.observation.original)!r} → {cut(r.observation.swapped)!r}"
    return cut(r.intervened_thought)
