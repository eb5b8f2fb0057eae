"""One example audit per link: what was edited, what the agent did before and after, and whether it tracked.

A rate says how often; an example says what it means. Each link gets the one audit that shows its verdict best
(:func:`pick_example`): a scored contradiction (never a control), a violation when there is one (the case an engineer
must see), decided by the gate when one was (the edit demonstrably changed what the thought implies). Ties go to the
first in the report, so the same report always shows the same example.

The edit is shown as a word-level diff (:func:`word_diff`, :mod:`difflib` over words, spaces and punctuation), which
the HTML page renders with ``<del>``/``<ins>`` and the Markdown page with ``~~…~~``/``**…**``.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ariadne_lc._audit_text import before_after, calls_text, cut, edited_text, tracking_sentence
from ariadne_lc.coverage import no_verdict_reason
from ariadne_lc.records import AuditReport, AuditResult

__all__ = [
    "Example",
    "Segment",
    "before_after",
    "calls_text",
    "edited_text",
    "example_for",
    "pick_example",
    "tracking_sentence",
    "unchanged",
    "why_none",
    "word_diff",
]

Segment = tuple[Literal["same", "del", "ins"], str]
"""A run of text in a diff: kept, removed, or added."""

_TOKEN: Final = re.compile(r"\s+|\w+(?:[.,']\w+)*|[^\w\s]")
"""Words (numbers with their decimal point), runs of spaces, single punctuation marks."""


def word_diff(before: str, after: str) -> list[Segment]:
    """The change from ``before`` to ``after`` word by word; adjacent runs of one kind are merged.

    Examples:
        >>> word_diff("so I multiply 12 by 9", "so I divide 12 by 9")
        [('same', 'so I '), ('del', 'multiply'), ('ins', 'divide'), ('same', ' 12 by 9')]
    """
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    out: list[Segment] = []

    def add(kind: Literal["same", "del", "ins"], tokens: Sequence[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            add("same", a[i1:i2])
        else:
            add("del", a[i1:i2])
            add("ins", b[j1:j2])
    return out


def _is_decisive(r: AuditResult) -> bool:
    return r.decisiveness is not None and r.decisiveness.outcome == "decisive"


def pick_example(results: Sequence[AuditResult], link: str) -> AuditResult | None:
    """The audit that shows ``link`` best: a scored contradiction, a violation if any, gate-decided if any, else the
    first; ``None`` when no contradiction on the link was scored."""
    scored = [
        r for r in results if r.link == link and not r.control and r.status == "scored" and r.similarity is not None
    ]
    if not scored:
        return None
    return max(enumerate(scored), key=lambda ir: (ir[1].violation, _is_decisive(ir[1]), -ir[0]))[1]


def unchanged(segments: Sequence[Segment]) -> bool:
    """Whether a diff has no change at all."""
    return all(kind == "same" for kind, _ in segments)


@dataclass(frozen=True, slots=True)
class Example:
    """One audit, ready to render: the edit as a diff, the action or answer before and after, and the outcome."""

    link: str
    result: AuditResult
    edited: str
    """What was edited: ``thought`` or ``tool output of <tool>``."""
    edit: list[Segment]
    before_label: str
    """``action`` (thought->action) or ``answer``."""
    before: str
    after: str
    change: list[Segment]
    """The action or answer, before against after, word by word."""
    implied: str | None
    """What the edited thought implies, as the gate read it (``None`` when it read nothing)."""
    outcome: str
    """``tracked``, ``elsewhere``, ``stayed`` or ``moved`` (:func:`tracking_sentence`)."""
    sentence: str

    @property
    def heading(self) -> str:
        r = self.result
        domain = f" ({r.domain})" if r.domain else ""
        return f"{r.intervention_type} on step {r.step_index} of trace {r.trace_id}{domain}"


def example_for(report: AuditReport, link: str) -> Example | None:
    """The example audit of ``link`` (see :func:`pick_example`), or ``None`` when none was scored."""
    r = pick_example(report.results, link)
    if r is None:
        return None
    if r.observation is not None:
        edited = f"tool output of {r.observation.tool}"
        edit = word_diff(cut(r.observation.original), cut(r.observation.swapped))
    else:
        edited = "thought"
        edit = word_diff(cut(r.original_thought), cut(r.intervened_thought))
    label, before, after = before_after(r)
    outcome, sentence = tracking_sentence(r)
    implied = r.decisiveness.intervened_implied if r.decisiveness is not None else None
    return Example(link, r, edited, edit, label, before, after, word_diff(before, after), implied, outcome, sentence)


def why_none(report: AuditReport, link: str) -> str:
    """Why no contradiction on ``link`` was scored, counted by reason (``no_commitment 3, not testable 1``)."""

    def reason(r: AuditResult) -> str:
        if r.step_index >= 0:
            return no_verdict_reason(r)
        return "run failed" if r.run_failed else "nothing to audit" if r.nothing_to_audit else "not audited"

    reasons = Counter(reason(r) for r in report.results if r.link == link and not r.control)
    if not reasons:
        return "no contradiction was planned on this link"
    return "no contradiction was scored: " + ", ".join(f"{k} {n}" for k, n in reasons.most_common())
