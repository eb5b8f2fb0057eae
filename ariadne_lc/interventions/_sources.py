"""The value engine: where a value stands in a text, and which other values it could plausibly take.

Every swap of a value (an ``observation_swap`` of a tool output, a ``plan_swap`` of a thought's argument, the rule
swapper's number or yes/no) needs the same two things, so they are defined here once:

- **Values of a text** (:func:`values_of`): the leaves of a JSON or Python-literal output (SQL rows), their numbers,
  yes/no words, names, words, and a short leaf whole; :func:`held` says whether a text states a value (numbers as
  numbers, ``1,200`` is ``1200``; words case-blind at word boundaries).
- **Other values** (:func:`other_values`), one chain of sources in this order: values the same tool really gave
  (its other outputs, or the values it was called with), the values its schema allows, then a rule by kind: a word
  of the same family (:mod:`._lexicon`), a number shifted, yes/no flipped. A source's value counts only when it is
  of the value's own kind (a number for a number, yes/no for yes/no), so a recorded "42" never replaces "Madrid".

One number rule (:func:`shifted`): the magnitude up by 30%, by at least one unit of the last decimal place, in the
number's own format (sign, decimals, thousands separators): ``108 -> 140 -> 182 -> 237``, ``3.5 -> 4.5``,
``1,200 -> 1,560``, ``1,299.99 -> 1,689.99``. A shift never lands back on a value already tried, so successive
shifts give distinct values.

The chain yields candidates only: the caller filters what is plausible where it swaps (a value the question states
is never swapped in or out: :func:`question_values_dropped`). Everything here is a pure function of its arguments;
nothing depends on what was swapped before.
"""

from __future__ import annotations

import ast
import datetime
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final, Literal

from ariadne_lc._numbers import NUMBER
from ariadne_lc.interventions._lexicon import family_of
from ariadne_lc.interventions.actions import normalise_value

__all__ = [
    "DATE",
    "FLAG",
    "FLIPS",
    "NUMBER",
    "PASSAGE_WORDS",
    "Kind",
    "Value",
    "case_like",
    "flip",
    "held",
    "is_passage",
    "kind_of",
    "leaves",
    "other_values",
    "question_values_dropped",
    "same_value",
    "shifted",
    "values_of",
]

Kind = Literal["text", "date", "number", "flag", "name", "word"]
_PRIORITY: Final[dict[str, int]] = {"text": 0, "date": 1, "number": 2, "flag": 3, "name": 4, "word": 5}
DATE: Final = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
"""An ISO date (``2023-10-04``): one value, shifted by days, never three numbers (``2023-13-04`` is no date)."""


FLAG: Final = re.compile(r"\b(?:yes|no|true|false)\b", re.I)
"""A yes/no or true/false word, in any case."""
FLIPS: Final[dict[str, str]] = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
"""The other answer of each yes/no word (lower case)."""
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w'-]*)*")
_WORD = re.compile(r"\b[A-Za-z][A-Za-z-]{2,}\b")
_STOPWORDS = (
    "the and for are was were been being has have had its it's this that these those with from into onto than "
    "then there their they them what which who whom whose when where why how all any each few more most other "
    "some such only own same very can will just should now about above below over under again further once "
    "here both not nor too out off our you your his her she him result results tool returned answer content "
    "text value data is also per via "
)
_STOP = frozenset(_STOPWORDS.split())
"""Words never swapped: they carry no value an answer could depend on."""
PASSAGE_WORDS: Final = 20
"""A text leaf longer than this is a passage: swapped whole for another the tool returned, not word by word."""
_SHIFT: Final = 0.3
"""The number rule's relative step (module docstring)."""


@dataclass(frozen=True, slots=True)
class Value:
    """One value of a text: its kind and how the text writes it."""

    kind: Kind
    text: str


def held(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` (numbers compared as numbers, words case-blind at word boundaries)."""
    if NUMBER.fullmatch(value.strip()):
        want = normalise_value(value)
        return any(normalise_value(m.group(0)) == want for m in NUMBER.finditer(text))
    words = [re.escape(w) for w in value.split()]
    return bool(words) and re.search(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", text, re.I) is not None


def same_value(a: str, b: str) -> bool:
    """Whether two values are one (``1,200`` and ``1200``; ``Madrid`` and ``madrid``)."""
    return normalise_value(a) == normalise_value(b)


def leaves(output: str) -> list[str]:
    """The scalar leaves of a JSON or Python-literal output (SQL rows), else the text itself."""
    text = output.strip()
    parsed: Any = None
    if text[:1] in "[{(":
        try:
            parsed = json.loads(text)
        except ValueError:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                parsed = None
    if parsed is None:
        return [text]
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for item in node.values():
                walk(item)
        elif isinstance(node, list | tuple | set):
            for item in node:
                walk(item)
        elif isinstance(node, bool):
            out.append(str(node).lower())
        elif node is not None:
            out.append(str(node))

    walk(parsed)
    return out


def is_passage(output: str) -> bool:
    """Whether ``output`` holds a passage (a leaf of more than :data:`PASSAGE_WORDS` words)."""
    return any(len(leaf.split()) > PASSAGE_WORDS for leaf in leaves(output))


def values_of(output: str) -> list[Value]:
    """Every value of ``output`` a swap could change, most specific kind first, longer first within a kind."""
    found: dict[tuple[str, str], Value] = {}
    for leaf in leaves(output):
        short = leaf.strip().strip(".!?,;:'\"")
        if short and len(short.split()) <= 3 and not NUMBER.fullmatch(short) and short.casefold() not in _STOP:
            found.setdefault(("text", short.casefold()), Value("text", short))
        dates = [m.span() for m in DATE.finditer(leaf)]
        for m in DATE.finditer(leaf):
            found.setdefault(("date", m.group(0)), Value("date", m.group(0)))
        for m in NUMBER.finditer(leaf):
            if not any(a <= m.start() < b for a, b in dates):
                found.setdefault(("number", normalise_value(m.group(0))), Value("number", m.group(0)))
        for m in FLAG.finditer(leaf):
            found.setdefault(("flag", m.group(0).casefold()), Value("flag", m.group(0)))
        for m in _NAME.finditer(leaf):
            if m.group(0).casefold() not in _STOP:
                found.setdefault(("name", m.group(0).casefold()), Value("name", m.group(0)))
        for m in _WORD.finditer(leaf):
            word = m.group(0)
            if word.casefold() not in _STOP and word.casefold() not in FLIPS:
                found.setdefault(("word", word.casefold()), Value("word", word))
    return sorted(found.values(), key=lambda v: (_PRIORITY[v.kind], -len(v.text)))


def question_values_dropped(output: str, swapped: str, query: str) -> tuple[str, ...]:
    """The values of ``output`` that the question states and ``swapped`` no longer does: a swap that drops one
    changed the question's own value, which no source may do (a model asked to change "the key value" may pick it)."""
    dropped = {
        v.text.casefold(): v.text for v in values_of(output) if held(query, v.text) and not held(swapped, v.text)
    }
    return tuple(dropped.values())


def case_like(word: str, like: str) -> str:
    """``word`` in the case of ``like`` (``NO`` for ``YES``, ``Lisbon`` for ``Madrid``)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return " ".join(w[:1].upper() + w[1:] for w in word.split())
    return word


def kind_of(value: str) -> Literal["date", "number", "flag", "text"]:
    """Which rule gives ``value`` other values: a date's, a number's, a yes/no word's, or a text's."""
    text = value.strip()
    if DATE.fullmatch(text):
        return "date"
    if NUMBER.fullmatch(text):
        return "number"
    return "flag" if FLAG.fullmatch(text) else "text"


def shifted(number: str) -> str | None:
    """The number rule (module docstring): ``number`` 30% larger in magnitude, in its own format; ``None`` for no
    number."""
    m = NUMBER.fullmatch(number.strip())
    if m is None:
        return None
    sign, whole, decimals = m.group(1), m.group(2), m.group(3)
    value = float(whole.replace(",", "") + ("." + decimals if decimals else ""))
    new = value + max(abs(value) * _SHIFT, 10.0 ** -len(decimals) if decimals else 1.0)
    grouped = "," if "," in whole else ""
    if decimals:
        return sign + f"{new:{grouped}.{len(decimals)}f}"
    return sign + f"{round(new):{grouped}d}"


def _later_days(date: str, count: int) -> Iterator[str]:
    """The ``count`` days after ``date``, in its format; none for a date that is not one (``2023-02-30``)."""
    try:
        day = datetime.date.fromisoformat(date)
    except ValueError:
        return
    for n in range(1, count + 1):
        yield (day + datetime.timedelta(days=n)).isoformat()


def flip(word: str) -> str:
    """The other yes/no word, in ``word``'s case (``Yes`` -> ``No``)."""
    return case_like(FLIPS[word.strip().casefold()], word.strip())


def other_values(
    value: str, *, recorded: Iterable[str] = (), allowed: Iterable[str] = (), shifts: int = 1
) -> Iterator[str]:
    """Candidates for ``value``, in the order they are tried (module docstring): values of its kind among
    ``recorded`` (what the same tool gave) and ``allowed`` (its schema), then its kind's rule (``shifts`` successive
    shifts of a number). Candidates may repeat or equal ``value``: the caller decides what is plausible."""
    kind = kind_of(value)
    for candidate in chain(recorded, allowed):
        if kind_of(candidate) == kind:
            yield candidate
    if kind == "number":
        current = value
        for _ in range(shifts):
            after = shifted(current)
            if after is None:
                return
            yield after
            current = after
    elif kind == "date":
        yield from _later_days(value.strip(), shifts)
    elif kind == "flag":
        yield flip(value)
    else:
        yield from (case_like(w, value.strip()) for w in family_of(value.strip()))
