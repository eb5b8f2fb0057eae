"""How a thought names a tool and says what it will do: the words of tool names, the clause of an intent, and a plan
that names no tool but describes one. Shared by the rule action reader (:mod:`.actions`) and the plan critic
(:mod:`.plans`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Protocol, TypeVar


class Described(Protocol):
    """What these helpers read of a tool (:class:`~ariadne_lc.interventions.actions.ToolSpec` has both)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


T = TypeVar("T", bound=Described)

__all__ = [
    "CLAUSE_END",
    "GENERIC",
    "INTENT",
    "PLAIN_WORDS",
    "SYNONYMS",
    "Described",
    "clause_bounds",
    "described",
    "forms",
    "last_match",
    "own_pattern",
    "tool_pattern",
]

GENERIC = frozenset({"get", "set", "do", "run", "call", "tool", "fn", "func", "make", "use", "the", "of", "to", "a"})
SYNONYMS = {
    "multiply": ("times", "product"),
    "add": ("plus", "sum", "total"),
    "subtract": ("minus", "difference", "take away"),
    "divide": ("divided", "quotient", "split"),
    "search": ("look up", "find"),
    "lookup": ("look up", "find"),
    "calculator": ("calculate", "compute", "work out", "evaluate"),
    "calculate": ("compute", "work out", "evaluate"),
}
CLAUSE_END = re.compile(r"[.;!?](?:\s|$)|,?\s+(?:so|then|therefore|thus|hence|but)\s+|,\s+(?=I\b)", re.I)
INTENT = re.compile(
    r"\b(?:I|we)(?:'ll|'m going to| will| shall| should| must| need to| have to| am going to| are going to| want to"
    r"| can| plan to)\b|\blet(?:'s| me| us)\b|\b(?:next|first)(?: step)?(?: is)? to\b",
    re.I,
)


def forms(token: str) -> str:
    """A regex for the word forms of a verb or noun token (multiply -> multiplies, multiplied, multiplying)."""
    if token.endswith("y") and len(token) > 3:
        return re.escape(token[:-1]) + r"(?:y|ies|ied|ying|ication)"
    if token.endswith("ator") and len(token) > 6:  # an agent noun: calculator -> calculate, calculating
        stem = re.escape(token[:-2])
        return rf"{re.escape(token)}s?|{stem}(?:e|es|ed|ing|ion)"
    if token.endswith("e") and len(token) > 3:
        return re.escape(token[:-1]) + r"(?:e|es|ed|ing|ion)"
    return re.escape(token) + r"(?:s|es|ed|d|ing|ion|ition)?"


_DELEGATION: Final = r"delegat(?:e|es|ed|ing|ion)|sub[\s-]?agents?|hand(?:s|ing)?\s+(?:it\s+|this\s+)?off"
"""How a plan names the tool that starts a sub-agent (deepagents' ``task``): "delegate ... to a sub-agent"."""


def _delegates(spec: Described) -> bool:
    """Whether ``spec`` starts a sub-agent: deepagents' ``task`` (an argument ``subagent_type``)."""
    return spec.name == "task" or "subagent_type" in (getattr(spec, "args", None) or ())


def tool_pattern(spec: Described) -> re.Pattern[str]:
    tokens = [t.lower() for t in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", spec.name) if t]
    alternatives = [r"[\s_-]*".join(re.escape(t) for t in tokens)] if tokens else [re.escape(spec.name)]
    if _delegates(spec):
        alternatives.append(_DELEGATION)
    words = [t for t in tokens if t not in GENERIC and len(t) >= 3]
    alternatives += [forms(t) for t in words]
    for t in tokens:
        alternatives += [re.escape(s).replace(r"\ ", r"\s+") for s in SYNONYMS.get(t, ())]
    if "lookup" in tokens or tokens[:2] == ["look", "up"]:
        alternatives.append(r"look(?:s|ed|ing)?\s+(?:\w+\s+)?up")
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.I)


def own_pattern(spec: Described) -> re.Pattern[str]:
    """The mentions of :func:`tool_pattern` by the tool's own name or words, not by a synonym (a sub-agent tool's own
    words include delegating to a sub-agent: the plan names what it does, not its name)."""
    tokens = [t.lower() for t in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", spec.name) if t]
    alternatives = [r"[\s_-]*".join(re.escape(t) for t in tokens)] if tokens else [re.escape(spec.name)]
    if _delegates(spec):
        alternatives.append(_DELEGATION)
    alternatives += [forms(t) for t in tokens if t not in GENERIC and len(t) >= 3]
    return re.compile(r"(?:" + "|".join(alternatives) + r")", re.I)


def clause_bounds(text: str, at: int) -> tuple[int, int]:
    """Start and end of the clause around position ``at``."""
    start, end = 0, len(text)
    for m in CLAUSE_END.finditer(text):
        if m.end() <= at:
            start = m.end()
        elif m.start() >= at:
            end = m.start()
            break
    return start, end


PLAIN_WORDS: Final = frozenset(
    {
        "about", "after", "also", "and", "any", "are", "been", "before", "being", "both", "but", "can", "does", "each",
        "for", "from", "given", "have", "into", "its", "more", "most", "not", "only", "other", "over", "same", "some",
        "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through",
        "tool", "tools", "under", "very", "what", "when", "where", "which", "while", "will", "with", "would", "your",
        "information", "return", "returns",
    }
)  # fmt: skip


def described(thought: str, tools: Sequence[T]) -> tuple[int, int, T] | None:
    """Where a plan that names no tool describes one: in a clause that says what I will do, the words of one tool's
    description ("I should search the blog posts for reward hacking" and ``retrieve_docs``, "Search and return
    information about the blog posts"). The tool whose description shares the most words with the clause, at least
    two (one for an agent with a single tool), and no other as many; the position of its last word there."""
    intent = last_match(INTENT, thought)
    if intent is None:
        return None
    _, end = clause_bounds(thought, intent.start())
    clause = thought[intent.end() : end]
    scored: list[tuple[int, int, T]] = []
    for spec in tools:
        # a description's plural ("looks up prices") is the plan's singular ("look up the price") too
        words = {w.removesuffix("s") for w in re.findall(r"[a-z]+", spec.description.casefold()) if len(w) >= 4}
        words -= PLAIN_WORDS
        hits = [m for w in words for m in re.finditer(rf"\b{forms(w)}\b", clause, re.I)]
        if hits:
            scored.append((len({m.group(0).casefold() for m in hits}), max(m.end() for m in hits), spec))
    if not scored:
        return None
    scored.sort(key=lambda x: -x[0])
    best, at, spec = scored[0]
    if best < (1 if len(tools) == 1 else 2) or (len(scored) > 1 and scored[1][0] == best):
        return None
    return intent.end() + at - 1, intent.end() + at, spec


def last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for m in pattern.finditer(text):
        found = m
    return found
