"""The output gate: which value of a tool output the answer depends on, and another value to serve in its place.

The ``observation->answer`` link asks whether the answer reads the tool (docs/method.md#the-output-gate). Any output
will do, whatever its shape: plain text, JSON at any depth, SQL rows (``[(8,)]``), lists. Its values are read from
its leaves: numbers, yes/no, names, words, and a short leaf whole ("Madrid", "light rain").

1. **Value mode.** Where the recorded answer repeats a value of the output that the question does not hold, the
   answer depends on that value: it is swapped, and the answer the swap implies is the recorded one with the new
   value in place of the old. Tracking is then read on the values themselves: the new answer holds the new value
   (``tracks``), still holds the old one (``stayed``: a violation), or neither (``elsewhere``). A faithful agent that
   reads only part of an output (the sky, not the temperature) repeats that part, so only that part is swapped.
2. **Move mode.** Where the answer repeats no value, which is what an agent that ignores its tools looks like, the
   verdict must still exist: every value that can be swapped is (numbers, yes/no, words of a known family), or, for
   a passage, another output the same tool returned is served whole (a weaker intervention: reports say so). Any
   answer that reads the output has to move; one that stays is a violation.

Values to swap in come first from what the system already holds: the same tool's other recorded outputs (the
differing span of a templated output: "sunny" where another run said "rainy"), the values the tool's schema allows,
then a family of words of the same kind (:mod:`._lexicon`), numbers shifted, yes/no flipped; a model swapper (the
agent's own model, when known) for the rest. Nothing plausible: no swap, with the reason.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ariadne_lc.interventions._lexicon import family_of
from ariadne_lc.interventions.actions import normalise_value
from ariadne_lc.interventions.observations import ObservationEdit, ObservationSwapper, _other_number

__all__ = ["SwapContext", "ValueSwapper", "held", "replace_value", "values_of"]

Kind = Literal["text", "number", "flag", "name", "word"]
_PRIORITY: dict[str, int] = {"text": 0, "number": 1, "flag": 2, "name": 3, "word": 4}
_NUMBER = re.compile(r"(?<![\w.])(-?)(\d[\d,]*)(?:\.(\d+))?(?![\w])")
_FLAG = re.compile(r"\b(?:yes|no|true|false)\b", re.I)
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w'-]*)*")
_WORD = re.compile(r"\b[A-Za-z][A-Za-z-]{2,}\b")
_FLIPS = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
_STOPWORDS = (
    "the and for are was were been being has have had its it's this that these those with from into onto than "
    "then there their they them what which who whom whose when where why how all any each few more most other "
    "some such only own same very can will just should now about above below over under again further once "
    "here both not nor too out off our you your his her she him result results tool returned answer content "
    "text value data is also per via "
)
_STOP = frozenset(_STOPWORDS.split())
"""Words never swapped: they carry no value an answer could depend on."""
PASSAGE_WORDS = 20
"""A text leaf longer than this is a passage: swapped whole for another the tool returned, not word by word."""


@dataclass(frozen=True, slots=True)
class SwapContext:
    """What a swapper may read besides the output: the run, and the values the system already holds."""

    query: str
    tool: str
    answer: str = ""
    """The recorded answer (as scored): which values it repeats decides which value is swapped."""
    others: tuple[str, ...] = ()
    """Other outputs the same tool returned in recorded runs."""
    allowed: tuple[str, ...] = ()
    """Values the tool's schema allows (``Literal`` / enum)."""
    variant: int = 0
    """Which other value (0: the first candidate; see ``Auditor(observation_swaps=...)``)."""


@dataclass(frozen=True, slots=True)
class _Value:
    kind: Kind
    text: str


def held(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` (numbers compared as numbers, words case-blind at word boundaries)."""
    if _NUMBER.fullmatch(value.strip()):
        want = normalise_value(value)
        return any(normalise_value(m.group(0)) == want for m in _NUMBER.finditer(text))
    words = [re.escape(w) for w in value.split()]
    return bool(words) and re.search(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", text, re.I) is not None


def _leaves(output: str) -> list[str]:
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


def _is_passage(output: str) -> bool:
    return any(len(leaf.split()) > PASSAGE_WORDS for leaf in _leaves(output))


def values_of(output: str) -> list[_Value]:
    """Every value of ``output`` a swap could change, most specific kind first, longer first within a kind."""
    found: dict[tuple[str, str], _Value] = {}
    for leaf in _leaves(output):
        short = leaf.strip().strip(".!?,;:'\"")
        if short and len(short.split()) <= 3 and not _NUMBER.fullmatch(short) and short.casefold() not in _STOP:
            found.setdefault(("text", short.casefold()), _Value("text", short))
        for m in _NUMBER.finditer(leaf):
            found.setdefault(("number", normalise_value(m.group(0))), _Value("number", m.group(0)))
        for m in _FLAG.finditer(leaf):
            found.setdefault(("flag", m.group(0).casefold()), _Value("flag", m.group(0)))
        for m in _NAME.finditer(leaf):
            if m.group(0).casefold() not in _STOP:
                found.setdefault(("name", m.group(0).casefold()), _Value("name", m.group(0)))
        for m in _WORD.finditer(leaf):
            word = m.group(0)
            if word.casefold() not in _STOP and word.casefold() not in _FLIPS:
                found.setdefault(("word", word.casefold()), _Value("word", word))
    ranked = list(found.values())
    return sorted(ranked, key=lambda v: (_PRIORITY[v.kind], -len(v.text)))


def _case_like(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return " ".join(w[:1].upper() + w[1:] for w in word.split())
    return word


def _aligned(value: str, output: str, others: Sequence[str]) -> Iterator[str]:
    """What the other outputs say where ``output`` says ``value`` (the differing span of a templated output)."""
    tokens = re.findall(r"\w[\w'-]*|[^\w\s]", output)
    target = value.casefold().split()
    for other in others:
        theirs = re.findall(r"\w[\w'-]*|[^\w\s]", other)
        matcher = difflib.SequenceMatcher(a=[t.casefold() for t in tokens], b=[t.casefold() for t in theirs])
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            if op == "replace" and [t.casefold() for t in tokens[a0:a1]] == target:
                yield " ".join(theirs[b0:b1])


def _replacements(value: _Value, output: str, context: SwapContext) -> Iterator[str]:
    """Plausible other values for ``value``, in the order they are tried (module docstring)."""
    if value.kind == "number":
        m = _NUMBER.fullmatch(value.text)
        current = value.text
        while m is not None:
            current = _other_number(m.group(1), m.group(2), m.group(3))
            yield current
            m = _NUMBER.fullmatch(current)
        return
    if value.kind == "flag":
        yield _case_like(_FLIPS[value.text.casefold()], value.text)
        return
    yield from _aligned(value.text, output, context.others)
    yield from context.allowed
    yield from (_case_like(w, value.text) for w in family_of(value.text))


def _plausible(candidate: str, value: _Value, output: str, context: SwapContext) -> bool:
    text = candidate.strip()
    if not text or text.casefold() == value.text.casefold() or len(text) > 60:
        return False
    if value.kind == "number":
        return True
    return not any(held(where, text) for where in (context.query, context.answer, output))


def _pattern(value: _Value) -> re.Pattern[str]:
    """Where ``value`` is stated: a number as a whole number, words case-blind at word boundaries."""
    if value.kind == "number":
        return re.compile(r"(?<![\w.])" + re.escape(value.text) + r"(?![\w])")
    words = [re.escape(w) for w in value.text.split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.I)


def _replace(output: str, value: _Value, new: str) -> str:
    return _replace_all(output, [(value, new)])


def _replace_all(output: str, swaps: Sequence[tuple[_Value, str]]) -> str:
    """``output`` with each value replaced by its new one, found by position in the *original* text: a value one
    replacement writes is never replaced again by the next (3 -> 4 then 4 -> 5 leaves the new 4 alone)."""
    edits: list[tuple[int, int, str]] = []
    for value, new in swaps:
        for m in _pattern(value).finditer(output):
            if any(m.start() < end and start < m.end() for start, end, _ in edits):
                continue
            edits.append((m.start(), m.end(), new if value.kind == "number" else _case_like(new, m.group(0))))
    parts, at = [], 0
    for start, end, text in sorted(edits):
        parts += [output[at:start], text]
        at = end
    return "".join(parts) + output[at:]


def replace_value(text: str, old: str, new: str) -> str:
    """``text`` with each statement of the value ``old`` replaced by ``new`` (in the case it had)."""
    return _replace(text, _Value("number" if _NUMBER.fullmatch(old.strip()) else "text", old.strip()), new)


def _nth(value: _Value, output: str, context: SwapContext, n: int) -> str | None:
    seen: set[str] = set()
    for candidate in _replacements(value, output, context):
        if len(seen) > 64:
            break
        key = candidate.casefold()
        if key in seen or not _plausible(candidate, value, output, context):
            continue
        seen.add(key)
        if len(seen) == n + 1:
            return candidate
    return None


def _distinct(text: str, than: str, query: str) -> tuple[str, ...]:
    """Values of ``text`` that neither ``than`` nor the query states: what an answer reading ``text`` may repeat."""
    found = {
        v.text.casefold(): v.text
        for v in reversed(values_of(text))
        if v.kind != "text" and not held(than, v.text) and not held(query, v.text)
    }
    return tuple(reversed(found.values()))[:12]


class ValueSwapper:
    """The default swapper of the ``observation->answer`` link (see the module docstring).

    Examples:
        >>> context = SwapContext(query="Weather in Paris?", tool="w", answer="Sunny in Paris.")
        >>> edit = ValueSwapper().swap_in_context("It's always sunny in Paris!", context)
        >>> edit.swapped, edit.mode, edit.old, edit.new
        ("It's always rainy in Paris!", 'value', ('sunny',), ('rainy',))
    """

    name = "values"

    def __init__(self, fallback: ObservationSwapper | None = None) -> None:
        self.fallback = fallback
        """Swaps what the rules cannot (an :class:`~.observations.LLMObservationSwapper` on the agent's model)."""

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        """The swap without a recorded answer or other outputs: every value that can change (move mode)."""
        return self.swap_in_context(output, SwapContext(query=query, tool=tool))

    def swap_in_context(self, output: str, context: SwapContext) -> ObservationEdit:
        """The swapped output, its mode and the old and new values (module docstring)."""
        if not output.strip():
            return ObservationEdit(swapped=None, method="no value to swap: the tool output is empty")
        values = values_of(output)
        keys = [v for v in values if held(context.answer, v.text) and not held(context.query, v.text)]
        if not _is_passage(output):
            for key in keys:
                new = _nth(key, output, context, context.variant)
                if new is not None:
                    return ObservationEdit(
                        swapped=_replace(output, key, new), method=f"values:{key.kind}", mode="value",
                        old=(key.text,), new=(new,),
                    )  # fmt: skip
        return self._move(output, values, context, bool(keys))

    def _move(self, output: str, values: list[_Value], context: SwapContext, repeated: bool) -> ObservationEdit:
        others = sorted({o for o in context.others if o.strip() and o.strip() != output.strip()})
        passage = _is_passage(output)
        if not passage:
            swaps: list[tuple[_Value, str]] = []
            for value in values:
                if value.kind == "text" or not held(output, value.text) or held(context.query, value.text):
                    continue
                other = _nth(value, output, context, context.variant)
                if other is not None:
                    swaps.append((value, other))
            if swaps:
                return ObservationEdit(
                    swapped=_replace_all(output, swaps), method="values:every-value", mode="move",
                    old=tuple(v.text for v, _ in swaps), new=tuple(n for _, n in swaps),
                )  # fmt: skip
        if context.variant < len(others):
            other = others[context.variant]
            how = "values:other-passage" if passage else "values:other-output"
            return ObservationEdit(
                swapped=other, method=how, mode="move", old=_distinct(output, other, context.query),
                new=_distinct(other, output, context.query),
            )  # fmt: skip
        if self.fallback is not None:
            edit = self.fallback.swap(output, query=context.query, tool=context.tool)
            if edit.swapped is not None:
                return edit.model_copy(update={"mode": "move", "new": _distinct(edit.swapped, output, context.query)})
        why = "the answer repeats values of the output, but none has a plausible other value" if repeated else ""
        what = "a passage and no other output of this tool" if passage else "no number, yes/no or known word"
        return ObservationEdit(
            swapped=None,
            method=f"no value to swap: {why or what} (other recorded outputs of the tool, its schema, or the agent's "
            "model give more)",
        )
