"""The rule critic's conclusion swap: another conclusion, with the work that leads to it rewritten to match.

Changing a stated result and leaving the work beside it ("180 - 3 = 190" -> "180 - 3 = 191") makes a thought whose
parts commit to different answers (:mod:`.coherence`). So the swap changes the work with the conclusion:

- a calculation concluded ("the answer is 180 - 3"): an operand or the operator changes, and so does every earlier
  statement of the same calculation, its stated result recomputed ("180 - 4 = 176 ... the answer is 180 - 4");
- a number concluded that is the result of the last calculation before it ("177 * 2 = 354. The answer is 354."):
  that calculation's operand changes and the result is recomputed wherever it stands ("177 * 3 = 531. The answer is
  531."); a number with no work before it changes alone ("There are 42 in all." -> "43");
- an option: the letter changes, and where the thought names the option it chose, by its text ("A dog has hair")
  or its letter ("D. It is ..."), that becomes the new option's ("A frog has hair"), unless the thought names the
  new option's text already;
- yes/no: the other one.
"""

from __future__ import annotations

import math
import re

from ariadne_lc._numbers import DIGITS
from ariadne_lc.interventions._patterns import OPERATOR, OPERATOR_FLIP
from ariadne_lc.interventions.coherence import (
    calculations,
    format_value,
    letter_mentions,
    mentions,
    options_of,
    reconcile,
)
from ariadne_lc.interventions.implied import QuestionKind, commitment_span, question_kind

__all__ = ["conclusion_swaps"]

_DIGITS = re.compile(DIGITS)
_OPTION_LETTER = re.compile(r"^\s*\(?([A-J])[.)]\s", re.M)


def _case_of(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _shift(raw: str, by: int) -> str | None:
    """``raw`` (digits, maybe with thousands commas or decimals) moved by ``by``; ``None`` below zero."""
    moved = float(raw.replace(",", "")) + by
    if moved < 0:
        return None
    return f"{moved:g}" if "." in raw else str(int(moved))


def _expression_alternatives(raw: str) -> list[str]:
    """The last operand plus one, the last operator flipped, the first operand plus one."""
    numbers = list(_DIGITS.finditer(raw))
    if not numbers:
        return []
    out: list[str] = []

    def moved(m: re.Match[str]) -> None:
        shifted = _shift(m.group(0), 1)
        if shifted is not None:
            out.append(raw[: m.start()] + shifted + raw[m.end() :])

    moved(numbers[-1])
    operators = list(OPERATOR.finditer(raw))
    if operators:
        last = operators[-1]
        group = 1 if last.group(1) is not None else 2
        out.append(raw[: last.start(group)] + OPERATOR_FLIP[last.group(group)] + raw[last.end(group) :])
    moved(numbers[0])
    return out


def _same_expression(raw: str) -> re.Pattern[str]:
    tokens = [re.escape(t) for t in raw.split()]
    return re.compile(r"(?<![\w.])" + r"\s*".join(tokens) + r"(?![\w.]*\d)")


def _calculation_swaps(thought: str, start: int, end: int) -> list[str]:
    raw = thought[start:end]
    earlier = _same_expression(raw)
    return [
        reconcile(thought, earlier.sub(alt, thought[:start]) + alt + thought[end:])
        for alt in _expression_alternatives(raw)
    ]


def _number_swaps(thought: str, start: int, end: int) -> list[str]:
    raw = thought[start:end]
    digits = list(_DIGITS.finditer(raw))
    if not digits:
        return []
    last = digits[-1]
    concluded = float(last.group(0).replace(",", ""))
    work = None
    for c in reversed([c for c in calculations(thought) if c.end <= start and c.value is not None]):
        stated = c.result is not None and thought[c.result[0] : c.result[1]].replace(",", "") == raw.replace(",", "")
        if c.result == (start, end) or stated or math.isclose(c.value or 0.0, concluded):
            work = c
            break
    if work is None:  # no work before it: the number alone
        alternatives = [_shift(last.group(0), 1), _shift(last.group(0), -1), f"{concluded * 2:g}"]
        around = thought[: start + last.start()], thought[start + last.end() :]
        return [around[0] + alt + around[1] for alt in alternatives if alt is not None]
    out = []
    for alt in _expression_alternatives(thought[work.start : work.end]):
        value = next((c.value for c in calculations(alt)), None)
        if value is None or math.isclose(value, concluded) or (value < 0 <= concluded):
            continue
        new = format_value(value)
        sites = {work.start: (work.end, alt), start: (end, new)}
        if work.result is not None:
            sites[work.result[0]] = (work.result[1], new)
        after = work.end if work.result is None else work.result[1]
        for m in _DIGITS.finditer(thought, after, start):  # the conclusion said again between the work and itself
            if m.group(0).replace(",", "") == raw.replace(",", ""):
                sites[m.start()] = (m.end(), new)
        text = thought
        for site in sorted(sites, reverse=True):
            stop, replacement = sites[site]
            text = text[:site] + replacement + text[stop:]
        out.append(reconcile(thought, text))
    return out


def _option_alternatives(letter: str, query: str) -> list[str]:
    listed = sorted(set(_OPTION_LETTER.findall(query))) or list("ABCDE")
    if letter.upper() in listed:
        i = listed.index(letter.upper())
        ordered = listed[i + 1 :] + listed[:i]
    else:
        ordered = listed
    return [_case_of(x, letter) if letter.islower() else x for x in ordered]


def _renamed(text: str, old: str, new: str) -> str:
    """``text`` with each mention of the option text ``old`` replaced by ``new``, in the case it had."""
    pattern = re.compile(rf"(?<!\w){re.escape(old.strip())}(?!\w)", re.I)
    return pattern.sub(lambda m: _case_of(new, m.group(0)), text)


def _relettered(text: str, old: str, new: str) -> str:
    """``text`` with each mention of option ``old`` by its letter ("D. ...", "option D") naming ``new``."""
    for start, end in reversed(letter_mentions(text, old)):
        text = text[:start] + _case_of(new, text[start:end]) + text[end:]
    return text


def _option_swaps(thought: str, start: int, end: int, query: str) -> list[str]:
    letter = thought[start:end]
    options = options_of(query)
    argued = options.get(letter.upper())
    out = []
    for alt in _option_alternatives(letter, query):
        head, tail = thought[:start], thought[end:]
        new = options.get(alt.upper())
        if argued and new and mentions(thought, argued) and not mentions(thought, new):
            head, tail = _renamed(head, argued, new), _renamed(tail, argued, new)
        head, tail = _relettered(head, letter, alt), _relettered(tail, letter, alt)
        out.append(head + alt + tail)
    return out


def _kind_of_thought(thought: str) -> QuestionKind:
    """Without the query: the first kind the thought states a commitment of."""
    for kind in ("choice", "number", "yes_no"):
        if commitment_span(thought, kind) is not None and (kind != "choice" or "answer" in thought.lower()):
            return kind
    return "text"


def conclusion_swaps(thought: str, query: str) -> list[tuple[str, str]]:
    """Each swap of what ``thought`` commits to (module docstring), closest first, with how it was made."""
    kind = question_kind(query) if query.strip() else _kind_of_thought(thought)
    span = commitment_span(thought, kind)
    if span is None:
        return []
    start, end, _value, form = span
    if form == "calculation":
        edits = _calculation_swaps(thought, start, end)
    elif form == "number":
        edits = _number_swaps(thought, start, end)
    elif form == "option":
        edits = _option_swaps(thought, start, end, query)
    elif form == "yes_no":
        raw = thought[start:end]
        edits = [thought[:start] + _case_of("no" if raw.lower() == "yes" else "yes", raw) + thought[end:]]
    else:
        edits = []  # free text: the LLM critic's form
    return [(text, f"rule:conclusion-{form}") for text in edits]
