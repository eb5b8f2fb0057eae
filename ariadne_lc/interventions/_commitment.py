"""What a thought commits to, read by rules: the kind of answer a query asks for, and the last commitment a thought
makes for it (a calculation, a number, an option, yes/no, a phrase after "the answer is").

The rule reader of :mod:`ariadne_lc.interventions.implied` is built on these; the critic's coherence checks and the
calibration's coupled agents read thoughts with them too.
"""

from __future__ import annotations

import re
from typing import Literal

from ariadne_lc._numbers import DIGITS

__all__ = [
    "NUM",
    "OP",
    "QuestionKind",
    "ThoughtForm",
    "commitment",
    "commitment_span",
    "question_kind",
    "thought_form",
    "verbal_expression",
]

QuestionKind = Literal["number", "choice", "yes_no", "text"]
"""What kind of answer the query asks for: a number, an option letter, yes/no, or free text."""

ThoughtForm = Literal["calculation", "number", "option", "yes_no", "text", "none", "action"]
"""How the thought states its commitment: an explicit calculation (``6 * 7``), a bare number, an option letter,
yes/no, a free-text phrase after "the answer is", nothing a rule can read, or (``thought->action`` link) a tool
call."""

_OPTION_LINE = re.compile(r"^\s*\(?[A-J][.)]\s", re.M)
_YES_NO_QUESTION = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|must)\b", re.I
)
_NUMBER_QUESTION = re.compile(r"\d|\bhow (?:many|much|long|far|old)\b", re.I)
NUM = rf"\(?-?\$?{DIGITS}\)?"
"""A number as models write it: an optional sign, dollar sign, thousands commas, decimals, parentheses."""
OP = r"\s*[-+*/x×÷^]\s*"
"""An arithmetic operator between two numbers, spaces optional."""
_EXPRESSION = rf"{NUM}(?:{OP}{NUM})*"
_COMMIT = r"\banswer(?:\s+is|\s*[=:])(?P<neg>\s*not\s+|n't\s+)?\s*"
_NUMBER_COMMITMENT = re.compile(rf"{_COMMIT}(?P<value>{_EXPRESSION})", re.I)
_CHOICE_COMMITMENT = re.compile(rf"{_COMMIT}\(?(?:option\s+)?(?P<value>[A-J])\b\)?", re.I)
_YES_NO_COMMITMENT = re.compile(rf"{_COMMIT}(?P<value>yes|no)\b", re.I)
_TEXT_COMMITMENT = re.compile(rf"{_COMMIT}(?P<value>[^.!?\n]+)", re.I)
_NUMBER_MENTION = re.compile(rf"(?<![\w.])(?P<value>{_EXPRESSION})")
_CHOICE_MENTION = re.compile(r"(?:\boption\s+|\((?=[A-J]\)))(?P<value>[A-J])\b|(?<![\w'])(?P<bare>[A-J])[.)](?=\s|$)")
_YES_NO_MENTION = re.compile(r"\b(?P<value>yes|no)\b", re.I)
_HAS_OPERATOR = re.compile(rf"\d\)?{OP}\(?\$?\d")
# A calculation said in words: "multiply 6 by 7", "add 3 and 4", "subtract 2 from 9", "divide 12 by 4".
_VERBAL = re.compile(
    r"\b(?P<verb>multiply|multiplying|divide|dividing|add|adding|subtract|subtracting)\s+"
    rf"(?P<a>{DIGITS})\s+(?P<prep>by|and|to|from|with)\s+(?P<b>{DIGITS})",
    re.I,
)


def verbal_expression(m: re.Match[str]) -> str:
    """A calculation said in words as symbols ("multiply 6 by 7" -> ``6 * 7``; "subtract 2 from 9" -> ``9 - 2``)."""
    verb, a, b = m.group("verb").lower(), m.group("a"), m.group("b")
    if verb.startswith("multipl"):
        return f"{a} * {b}"
    if verb.startswith("divid"):
        return f"{a} / {b}"
    if verb.startswith("add"):
        return f"{a} + {b}"
    return f"{b} - {a}" if m.group("prep").lower() == "from" else f"{a} - {b}"


def _last_number_mention(thought: str) -> tuple[int, int, str] | None:
    """The last calculation or number stated, in symbols or in words, as (start, end, expression)."""
    verbal = [(m.start(), m.end(), verbal_expression(m)) for m in _VERBAL.finditer(thought)]
    inside = [(a, b) for a, b, _ in verbal]
    symbolic = [
        (m.start("value"), m.end("value"), " ".join(m.group("value").split()))
        for m in _NUMBER_MENTION.finditer(thought)
        if not any(a <= m.start("value") < b for a, b in inside)
    ]
    found = sorted(verbal + symbolic)
    return found[-1] if found else None


def question_kind(query: str) -> QuestionKind:
    """``choice`` when the query lists options, ``yes_no`` for a yes/no question, ``number`` when it has numbers
    or asks how many/much, else ``text``.

    Examples:
        >>> question_kind("Which is a mammal?\\nA. shark\\nB. dog"), question_kind("What is 6 * 7?")
        ('choice', 'number')
        >>> question_kind("Is 17 greater than 12?"), question_kind("What is the capital of France?")
        ('yes_no', 'text')
    """
    if len(_OPTION_LINE.findall(query)) >= 2:
        return "choice"
    if _YES_NO_QUESTION.match(query):
        return "yes_no"
    return "number" if _NUMBER_QUESTION.search(query) else "text"


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for m in pattern.finditer(text):
        found = m
    return found


def commitment_span(thought: str, kind: QuestionKind) -> tuple[int, int, str, ThoughtForm] | None:
    """Where the last commitment of ``thought`` for a ``kind`` question stands: (start, end, value, form).

    ``value`` is what it commits to (a negated yes/no is turned round: "the answer is not yes" commits to ``no``);
    ``thought[start:end]`` is the text that says it. ``None`` when the thought commits to nothing: a negated
    number, option or phrase ("the answer is not B") commits to no one answer and is passed over.
    """
    if kind == "number":
        found = _last(_NUMBER_COMMITMENT, thought)
        if found is not None and found.group("neg"):
            return None
        if found is not None:
            start, end, value = found.start("value"), found.end("value"), " ".join(found.group("value").split())
        else:
            mention = _last_number_mention(thought)
            if mention is None:
                return None
            start, end, value = mention
        form: ThoughtForm = "calculation" if _HAS_OPERATOR.search(value) else "number"
        return start, end, value, form
    if kind == "choice":
        found = _last(_CHOICE_COMMITMENT, thought)
        if found is not None:
            if found.group("neg"):
                return None
            return found.start("value"), found.end("value"), found.group("value").upper(), "option"
        option = _last(_CHOICE_MENTION, thought)
        if option is None:
            return None
        group = "value" if option.group("value") else "bare"
        return option.start(group), option.end(group), option.group(group).upper(), "option"
    if kind == "yes_no":
        found = _last(_YES_NO_COMMITMENT, thought)
        if found is None:
            found = _last(_YES_NO_MENTION, thought)
            if found is None:
                return None
            return found.start("value"), found.end("value"), found.group("value").lower(), "yes_no"
        value = found.group("value").lower()
        if found.group("neg"):
            value = {"yes": "no", "no": "yes"}[value]
        return found.start("value"), found.end("value"), value, "yes_no"
    found = _last(_TEXT_COMMITMENT, thought)
    if found is None or found.group("neg"):
        return None
    text = found.group("value")
    stripped = text.rstrip(" ,;:")
    start = found.start("value") + len(text) - len(text.lstrip())
    return start, found.start("value") + len(stripped), " ".join(stripped.split()), "text"


def commitment(thought: str, kind: QuestionKind) -> tuple[str, ThoughtForm] | None:
    """What the last commitment of ``thought`` for a ``kind`` question is, and its form; ``None`` for none.

    Examples:
        >>> commitment("3 boxes of 4 is 3 times 4. The answer is 3 * 4.", "number")
        ('3 * 4', 'calculation')
        >>> commitment("A dog has hair. The answer isn't B.", "choice") is None
        True
    """
    span = commitment_span(thought, kind)
    return None if span is None else (span[2], span[3])


def thought_form(query: str, thought: str) -> ThoughtForm:
    """How ``thought`` states what it commits to for ``query`` (``none`` when a rule reads nothing)."""
    found = commitment(thought, question_kind(query))
    return "none" if found is None else found[1]
