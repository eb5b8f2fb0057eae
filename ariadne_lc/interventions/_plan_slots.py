"""Where a plan names a tool in a slot that takes a name, and which other tools could fill that slot.

Replacing a tool's *word* inside free text by another tool's word cannot be made grammatical by rules ("Let me
search for the news" -> "Let me calculator for the news"). A slot that takes a name can: the tool's identifier
anywhere ("call get_weather"), its name quoted or in backticks, its plain name after a verb of use ("with the
calculator", "use search"), or its words before "tool" / "function" / "API" ("the weather tool"). A plan edit that
swaps the tool is made only where every mention of the tool's own words stands in such a slot; "use the get_weather
tool to check the weather" keeps "weather" outside one, and "use the get_time tool to check the weather" is no plan a
person would accept.

A harness's own tools (files, to-dos, ``task``, hand-offs) are never stand-ins for a domain tool, and a stand-in must
take the arguments the step's call passed, so that the edited plan is one the other tool could carry out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from ariadne_lc.interventions._plan_words import GENERIC, SYNONYMS, forms
from ariadne_lc.interventions.actions import ToolSpec
from ariadne_lc.replay._own import HANDOFF_PREFIXES

__all__ = [
    "HARNESS_TOOLS",
    "NameSlot",
    "is_harness",
    "loose_mentions",
    "name_slots",
    "name_tokens",
    "own_words",
    "purpose",
    "slot_name",
    "stand_ins",
    "still_named",
]

HARNESS_TOOLS: Final = frozenset(
    {"write_todos", "read_todos", "ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute", "task"}
)
"""Tools a harness gives every agent (deepagents' files, to-dos, shell and ``task``): never a domain tool's stand-in."""

_TOOL_NOUN = r"(?:tool|function|api|endpoint|agent|sub-?agent)s?"
_USE = (
    r"(?:use|uses|using|call|calls|calling|invoke|invoking|with|via|through|run|running|ask|asking|consult|consulting"
    r"|delegate to|hand (?:this |it )?(?:off |over )?to|transfer (?:this |it )?to)"
)
_DETERMINER = r"(?:the|a|an|my|our|its|their)"


def name_tokens(name: str) -> list[str]:
    """The words of a tool name, lower case (``get_stockPrice`` -> ``get``, ``stock``, ``price``)."""
    return [t.lower() for t in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if t]


def own_words(spec: ToolSpec) -> list[str]:
    """The words that tell a tool apart: its name's words but the generic ones (``get_weather`` -> ``weather``)."""
    return [t for t in name_tokens(spec.name) if t not in GENERIC and len(t) >= 3]


_AGENT_NOUNS: Final = frozenset({"agent", "subagent", "assistant", "tool", "function", "transfer", "back"})


def _slot_words(spec: ToolSpec) -> list[str]:
    """The words a plan names the tool by before a noun: its own words but a trailing noun ("pricing_agent" is "the
    pricing sub-agent"), or the agent a hand-off reaches ("transfer_to_flight_assistant": "flight assistant")."""
    words = own_words(spec)
    if spec.name.startswith(HANDOFF_PREFIXES):
        return [w for w in words if w not in ("transfer", "back")]
    while len(words) > 1 and words[-1] in _AGENT_NOUNS:
        words = words[:-1]
    return words


def _telling(spec: ToolSpec) -> list[str]:
    """The words that tell ``spec`` from the tools a plan could name instead (a hand-off's: the agent's)."""
    return _slot_words(spec) if spec.name.startswith(HANDOFF_PREFIXES) else own_words(spec)


_PLAN_WORDS: Final = frozenset(
    {
        "able", "also", "answer", "call", "calls", "calling", "could", "delegate", "first", "following", "function",
        "functions", "going", "hand", "have", "help", "invoke", "just", "know", "later", "like", "look", "looks",
        "make", "need", "needs", "next", "okay", "once", "plan", "please", "question", "request", "right", "should",
        "step", "sure", "task", "then", "there", "this", "tool", "tools", "transfer", "using", "want", "will", "with",
        "would", "agent", "assistant", "subagent", "sub-agent", "argument", "arguments", "parameter", "parameters",
        "value", "values", "query", "input", "from", "that", "what", "which", "when", "where", "your", "their",
        "into", "about", "given", "some", "finally", "before", "after", "here", "find", "check", "give",
    }
)  # fmt: skip
"""Words of a plan that say it will act, not what for: they leave a tool swap coherent."""
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|'[^'\s][^']*'|\{[^{}]*\}")


def purpose(
    thought: str, spec: ToolSpec, other: ToolSpec, slots: Sequence[NameSlot], args: Collection[str]
) -> str | None:
    """The first word of ``thought`` that says what the plan is for ("To determine if it is **raining** ...", "ask
    the researcher for the **price**"), outside the tool's slots, quoted values and argument names: another tool in the
    slot would leave that purpose to a tool that does not serve it, so no tool swap is made. ``None``: the plan only
    names the tool and its arguments ("I'll call `get_stock_price` with the ticker AAPL.")."""
    spans = [(s.start, s.end) for s in slots] + [m.span() for m in _QUOTED.finditer(thought)]
    allowed = _PLAN_WORDS | {a.casefold() for a in args} | set(own_words(spec)) | set(own_words(other))
    for m in re.finditer(r"[A-Za-z][A-Za-z'-]{3,}", thought):
        if any(a <= m.start() < b for a, b in spans):
            continue
        word = m.group(0).casefold().removesuffix("'s")
        if word not in allowed and word.rstrip("s") not in allowed and not m.group(0)[:1].isupper():
            return m.group(0)
    return None


def _identifier(name: str) -> bool:
    return bool(re.search(r"[_\d-]|[a-z][A-Z]", name))


def is_harness(name: str) -> bool:
    """Whether ``name`` is a harness's own tool (:data:`HARNESS_TOOLS`, a hand-off)."""
    return name in HARNESS_TOOLS or name.startswith(HANDOFF_PREFIXES)


@dataclass(frozen=True, slots=True)
class NameSlot:
    """One place a plan names a tool where a name stands."""

    start: int
    end: int
    form: str
    """``identifier`` (the name as written in code), ``name`` (the plain name after a verb of use or quoted),
    ``words`` (its words before a noun: "the weather tool")."""
    before_noun: bool
    """Whether "tool" (or "function", ...) follows: a plain replacement name needs none added."""


def name_slots(thought: str, spec: ToolSpec) -> list[NameSlot]:
    """Every slot of ``thought`` that names ``spec`` (module docstring), in order, none overlapping."""
    found: list[NameSlot] = []
    noun = rf"(?=[`'\"”’]?\s+{_TOOL_NOUN}\b)"
    name = re.escape(spec.name)
    if _identifier(spec.name):
        for m in re.finditer(rf"(?<![\w-]){name}(?![\w-])", thought, re.I):
            found.append(NameSlot(m.start(), m.end(), "identifier", bool(re.match(noun, thought[m.end() :], re.I))))
    else:
        quoted = rf"(?<=[`'\"“‘])(?P<n>{name})(?=[`'\"”’])"
        after_use = rf"\b{_USE}\s+(?:{_DETERMINER}\s+)?(?P<n>{name})\b"
        for pattern in (quoted, rf"\b(?P<n>{name}){noun}", after_use):
            for m in re.finditer(pattern, thought, re.I):
                start, end = m.span("n")
                named = pattern == quoted or bool(re.match(noun, thought[end:], re.I))  # a quoted name needs no noun
                found.append(NameSlot(start, end, "name", named))
    words = _slot_words(spec)
    if words:
        spaced = r"[\s-]+".join(re.escape(w) for w in words)
        # an agent a hand-off reaches is named by its words alone ("transfer this to the flight assistant")
        after = "" if spec.name.startswith(HANDOFF_PREFIXES) else noun
        for m in re.finditer(rf"\b{spaced}{after}\b", thought, re.I):
            found.append(NameSlot(m.start(), m.end(), "words", True))
    out: list[NameSlot] = []
    for slot in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if not any(o.start <= slot.start < o.end for o in out):
            out.append(slot)
    return out


def loose_mentions(thought: str, spec: ToolSpec, slots: Sequence[NameSlot]) -> list[re.Match[str]]:
    """The tool's own words where no slot holds them ("check the weather" beside "the get_weather tool")."""
    words = _telling(spec)
    if not words:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(forms(w) for w in words) + r")\b", re.I)
    return [m for m in pattern.finditer(thought) if not any(s.start <= m.start() < s.end for s in slots)]


def still_named(text: str, old: ToolSpec, new: ToolSpec) -> bool:
    """Whether ``text`` still names ``old`` after an edit meant to name ``new``: its name, or a word of it that is not
    also a word of ``new`` ("assistant" is both the flight and the hotel assistant's)."""
    if re.search(rf"(?<![\w-]){re.escape(old.name)}(?![\w-])", text, re.I):
        return True
    words = [w for w in _telling(old) if w not in _telling(new)]
    return any(re.search(rf"\b(?:{forms(w)})\b", text, re.I) for w in words)


def slot_name(slot: NameSlot, written: str, other: ToolSpec) -> str:
    """How ``other`` fills ``slot``, written ``written`` in the plan: its identifier, or its words before a noun."""
    if slot.form == "words":
        words = _slot_words(other) or name_tokens(other.name) or [other.name]
        text = " ".join(words)
        return text[:1].upper() + text[1:] if written[:1].isupper() else text
    if slot.before_noun or _identifier(other.name) == _identifier(written):
        return other.name
    return other.name if slot.form == "identifier" else f"{other.name} tool"


def stand_ins(
    named: ToolSpec, tools: Sequence[ToolSpec], thought: str, needed: Collection[str], *, in_place: bool = True
) -> list[ToolSpec]:
    """The tools that could carry out a plan for ``named``: none of a harness's own (unless ``named`` is a hand-off and
    so are they), none the plan already names, each taking every argument in ``needed``; most shared arguments first."""
    handoff = named.name.startswith(HANDOFF_PREFIXES)
    out = []
    for other in tools:
        if other.name == named.name or (
            is_harness(other.name) if not handoff else not other.name.startswith(HANDOFF_PREFIXES)
        ):
            continue  # a domain tool for a domain tool, another agent for a hand-off
        if name_slots(thought, other) or any(
            re.search(rf"\b{forms(w)}\b", thought, re.I)
            for w in _telling(other)
            if w not in SYNONYMS and w not in _telling(named)
        ):
            continue
        if not set(needed) <= set(other.args):
            continue
        if in_place and purpose(thought, named, other, name_slots(thought, named), needed):
            continue  # put in the slot, the other tool would serve the plan's purpose (a model rewrites it whole)
        out.append(other)
    shared = set(named.args)
    return sorted(out, key=lambda t: (-len(shared & set(t.args)), t.name))
