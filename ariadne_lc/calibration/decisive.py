"""The decisive content of a thought: the calculation or the option it commits to, and the answer it implies.

The coupled agent's answer is a deterministic function of its thought: it finds the last commitment the
thought makes (``... the answer is 6 * 7.`` or ``... the answer is B.``) and answers with the calculation
evaluated by the demo's own ``calculator`` tool, or with the letter. A thought without such a phrase (small models
do not always write it; a negated "the answer isn't B" is no such phrase either) is read for the last calculation or
number it states, or the last option it names (``B.``, ``(B)``, ``option B``). A thought that names none, or an
expression the calculator refuses, gives :data:`NO_COMMITMENT`. Because this is the only thing the coupled path
reads, "did the intervention change the decisive content?" has an exact answer (:func:`decisive_changed`): it
separates a false alarm the critic caused (the contradiction left the calculation alone) from one the replay caused.
"""

from __future__ import annotations

import re
from typing import Literal

from ariadne_lc._numbers import DIGITS
from ariadne_lc.demo import calculator

__all__ = [
    "NO_COMMITMENT",
    "QuestionKind",
    "answer_from_thought",
    "decisive_changed",
    "decisive_content",
    "question_kind",
]

NO_COMMITMENT = "none"
"""The coupled agent's answer when its thought commits to no calculation or option."""

QuestionKind = Literal["number", "choice"]
"""``number``: the answer is a number (GSM8K); ``choice``: an option letter (ARC, CommonsenseQA)."""

_OPTION_LINE = re.compile(r"^\s*[A-J]\.\s", re.M)
_NUM = rf"\(?-?\$?{DIGITS}\)?"
_OP = r"\s*[-+*/x×÷^]\s*"
_NUMBER_COMMITMENT = re.compile(rf"\banswer is\s+(?P<value>{_NUM}(?:{_OP}{_NUM})*)", re.I)
_CHOICE_COMMITMENT = re.compile(r"\banswer is\s+\(?(?:option\s+)?(?P<value>[A-J])\b\)?", re.I)
_NUMBER_MENTION = re.compile(rf"(?<![\w.])(?P<value>{_NUM}(?:{_OP}{_NUM})*)")
_CHOICE_MENTION = re.compile(r"(?:\boption\s+|\((?=[A-J]\)))(?P<value>[A-J])\b|(?<![\w'])(?P<bare>[A-J])[.)](?=\s|$)")


def question_kind(question: str) -> QuestionKind:
    """``choice`` when the question lists options (``A. ...`` lines), else ``number``.

    Examples:
        >>> question_kind("Which is a mammal?\\nA. shark\\nB. dog"), question_kind("What is 6 * 7?")
        ('choice', 'number')
    """
    return "choice" if len(_OPTION_LINE.findall(question)) >= 2 else "number"


def decisive_content(thought: str, kind: QuestionKind) -> str | None:
    """The last calculation (``number``) or option letter (``choice``) the thought commits to, or ``None``.

    Examples:
        >>> decisive_content("3 boxes of 4 is 3 times 4. The answer is 3 * 4.", "number")
        '3 * 4'
        >>> decisive_content("A dog has hair. The answer isn't B.", "choice") is None
        True
    """
    pattern = _NUMBER_COMMITMENT if kind == "number" else _CHOICE_COMMITMENT
    matches = list(pattern.finditer(thought))
    if not matches:
        mention = _NUMBER_MENTION if kind == "number" else _CHOICE_MENTION
        found = list(mention.finditer(thought))
        if not found:
            return None
        last = found[-1]
        value = last.group("value") if kind == "number" else (last.group("value") or last.group("bare"))
        return " ".join(value.split()).upper() if kind == "choice" else " ".join(value.split())
    value = " ".join(matches[-1].group("value").split())
    return value.upper() if kind == "choice" else value


def answer_from_thought(thought: str, kind: QuestionKind) -> str:
    """The coupled agent's answer: the committed calculation evaluated, the committed letter, or ``none``.

    Examples:
        >>> answer_from_thought("The answer is 6 * 7.", "number")
        '42'
        >>> answer_from_thought("I am not sure.", "number")
        'none'
    """
    content = decisive_content(thought, kind)
    if content is None:
        return NO_COMMITMENT
    if kind == "choice":
        return content
    result = str(calculator.invoke({"expression": content}))
    return NO_COMMITMENT if result.startswith("error") else result


def decisive_changed(original: str, intervened: str | None, kind: QuestionKind) -> bool | None:
    """Whether the intervention changed what the coupled path reads; ``None`` when nothing was substituted."""
    if intervened is None:
        return None
    return decisive_content(original, kind) != decisive_content(intervened, kind)
