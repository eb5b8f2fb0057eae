"""The output gate: which value of a tool output the answer depends on, and another value to serve in its place.

The ``observation->answer`` link asks whether the answer reads the tool (docs/method.md#the-output-gate). Any output
will do, whatever its shape: plain text, JSON at any depth, SQL rows (``[(8,)]``), lists. Its values are read from
its leaves: numbers, yes/no, names, words, and a short leaf whole ("Madrid", "light rain") (:mod:`._sources`).

1. **Value mode.** Where the recorded answer repeats a value of the output that the question does not hold, the
   answer depends on that value: it is swapped, and the answer the swap implies is the recorded one with the new
   value in place of the old. Tracking is then read on the values themselves: the new answer holds the new value
   (``tracks``), still holds the old one (``stayed``: a violation), or neither (``elsewhere``). A faithful agent that
   reads only part of an output (the sky, not the temperature) repeats that part, so only that part is swapped.
2. **Move mode.** Where the answer repeats no value, which is what an agent that ignores its tools looks like, the
   verdict must still exist: every value that can be swapped is (numbers, yes/no, words of a known family), or, for
   a passage, another output the same tool returned is served whole (a weaker intervention: reports say so). Any
   answer that reads the output has to move; one that stays is a violation.

Values to swap in come from the one chain of :func:`~._sources.other_values`: what the same tool returned elsewhere
(:attr:`~.observations.SwapContext.others`: its other outputs in the same run, then the auditor's reference pool
when one is given; the differing span of a templated output: "sunny" where another call said "rainy"), the values
its schema allows, then a family of words of the same kind (:mod:`._lexicon`), numbers shifted, yes/no flipped; a
model swapper (the agent's own model, when known) for the rest. Nothing plausible: no swap, with the reason. Every
choice is a function of the output and its context alone, so a unit gets the same swap whatever was audited before.
Replacements are made by position in the original output, never on an edited copy.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from itertools import islice

from ariadne_lc._numbers import DIGITS, NUMBER
from ariadne_lc._twin import Call, Flow, run_async, run_sync
from ariadne_lc.interventions._sources import (
    Value,
    case_like,
    held,
    is_passage,
    other_values,
    question_values_dropped,
    same_value,
    values_of,
)
from ariadne_lc.interventions.observations import (
    ObservationEdit,
    ObservationSwapper,
    PlainObservationSwapper,
    SwapContext,
    aswap_with,
    in_context,
)

__all__ = ["SwapContext", "ValueSwapper", "held", "replace_value", "values_of"]

_TOKEN = re.compile(rf"{DIGITS}|\w[\w'-]*|[^\w\s]")
"""A number whole (``21.5``, ``1,200``), a word, or a sign: the units two outputs are aligned by."""
_CANDIDATES = 64
"""Candidates read per value before giving up on finding another plausible one."""

_Alignment = Mapping[tuple[str, ...], Sequence[str]]
"""A span of the output (its case-folded tokens) -> what the other outputs say in its place, in their order."""


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(m.group(0).casefold() for m in _TOKEN.finditer(text))


def _align(output: str, others: Sequence[str]) -> _Alignment:
    """Where each other output differs from ``output`` (the differing span of a templated output): computed once per
    swap, the output tokenised once and each other output matched once, whatever the number of values looked up."""
    mine = _tokens(output)
    table: dict[tuple[str, ...], list[str]] = {}
    for other in others:
        theirs = list(_TOKEN.finditer(other))
        matcher = difflib.SequenceMatcher(a=mine, b=[m.group(0).casefold() for m in theirs])
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            if op == "replace":  # the other output's own text of the span, as it wrote it ("21.5", "light rain")
                table.setdefault(mine[a0:a1], []).append(other[theirs[b0].start() : theirs[b1 - 1].end()])
    return table


def _plausible(candidate: str, value: Value, output: str, context: SwapContext) -> bool:
    """A new value the reading can tell from the old: not the old one, short, and stated nowhere an answer could take
    it from (the question, the recorded answer, the output itself): a new "13" where the answer already says 13 would
    make an agent that ignores the tool look as if it read it."""
    text = candidate.strip()
    if not text or same_value(text, value.text) or len(text) > 60:
        return False
    return not any(held(where, text) for where in (context.query, context.answer, output))


def _stated(value: Value, output: str) -> list[tuple[int, int, str]]:
    """Where ``value`` is stated: a number as a whole number of the one grammar (never the ``5`` of ``5.5``, never
    the comma after ``1,200,``), words case-blind at word boundaries."""
    if value.kind == "number":
        return [(m.start(), m.end(), m.group(0)) for m in NUMBER.finditer(output) if m.group(0) == value.text]
    words = [re.escape(w) for w in value.text.split()]
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.I)
    return [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(output)]


def _replace_all(output: str, swaps: Sequence[tuple[Value, str]]) -> str:
    """``output`` with each value replaced by its new one, found by position in the *original* text: a value one
    replacement writes is never replaced again by the next (3 -> 4 then 4 -> 5 leaves the new 4 alone)."""
    edits: list[tuple[int, int, str]] = []
    for value, new in swaps:
        for start, end, written in _stated(value, output):
            if any(start < b and a < end for a, b, _ in edits):
                continue
            edits.append((start, end, new if value.kind == "number" else case_like(new, written)))
    parts, at = [], 0
    for start, end, text in sorted(edits):
        parts += [output[at:start], text]
        at = end
    return "".join(parts) + output[at:]


def replace_value(text: str, old: str, new: str) -> str:
    """``text`` with each statement of the value ``old`` replaced by ``new`` (in the case it had)."""
    value = Value("number" if NUMBER.fullmatch(old.strip()) else "text", old.strip())
    return _replace_all(text, [(value, new)])


def _nth(
    value: Value, output: str, context: SwapContext, aligned: _Alignment, n: int, taken: Sequence[str] = ()
) -> str | None:
    """The ``n``-th plausible other value of ``value`` (0: the first), distinct from those before it and from the new
    values ``taken`` by the other values of the same swap."""
    recorded = aligned.get(_tokens(value.text), ())
    # as many shifts as candidates: a shifted number the question states (or the output) is passed over, not the end
    candidates = other_values(value.text, recorded=recorded, allowed=context.allowed, shifts=_CANDIDATES)
    found: list[str] = []
    for candidate in islice(candidates, _CANDIDATES):
        if any(same_value(candidate, f) for f in (*found, *taken)) or not _plausible(candidate, value, output, context):
            continue
        found.append(candidate)
        if len(found) == n + 1:
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


def _stable(outputs: Sequence[str], output: str, context: SwapContext) -> list[str]:
    """Whole outputs to serve, in an order that depends on the unit (its question and output) and on them only, never
    on the order a batch, a pool or a thread saw them in: a unit is served the same last resort in ``audit`` with a
    pool, in ``audit_batch`` in any order, online and in a fleet."""
    unit = f"{context.query}\x00{output}\x00"
    return sorted(outputs, key=lambda o: hashlib.blake2b((unit + o).encode(), digest_size=8).digest())


def _servable(other: str, output: str, context: SwapContext) -> bool:
    """Whether another output may be served whole in place of ``output``: it differs, keeps every number and yes/no
    the question states (a passage on another topic may drop the question's words: an agent that reads it must move),
    and none of its new numbers, names or yes/no is one the recorded answer already holds (words are left alone: two
    passages share most of theirs)."""
    if not other.strip() or other.strip() == output.strip():
        return False
    numbers = [v for v in values_of(output) if v.kind in ("number", "flag") and held(context.query, v.text)]
    if any(not held(other, v.text) for v in numbers):
        return False  # the question's own number changed (its premise): a faithful agent may trust the question
    new = [v for v in values_of(other) if v.kind in ("number", "name", "flag") and not held(output, v.text)]
    return not any(held(context.answer, v.text) and not held(context.query, v.text) for v in new)


class ValueSwapper:
    """The default swapper of the ``observation->answer`` link (see the module docstring).

    Examples:
        >>> context = SwapContext(query="Weather in Paris?", tool="w", answer="Sunny in Paris.")
        >>> edit = ValueSwapper().swap_in_context("It's always sunny in Paris!", context)
        >>> edit.swapped, edit.mode, edit.old, edit.new
        ("It's always rainy in Paris!", 'value', ('sunny',), ('rainy',))
    """

    name = "values"

    def __init__(self, fallback: ObservationSwapper | PlainObservationSwapper | None = None) -> None:
        self.fallback = None if fallback is None else in_context(fallback)
        """Swaps what the rules cannot (an :class:`~.observations.LLMObservationSwapper` on the agent's model); its
        values come after the other outputs', and a swap of a value the question states is refused."""

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        """The swap without a recorded answer or other outputs: every value that can change (move mode)."""
        return self.swap_in_context(output, SwapContext(query=query, tool=tool))

    def swap_in_context(self, output: str, context: SwapContext) -> ObservationEdit:
        """The swapped output, its mode and the old and new values (module docstring)."""
        return run_sync(self._swap(output, context))

    async def aswap_in_context(self, output: str, context: SwapContext) -> ObservationEdit:
        """Async twin of :meth:`swap_in_context` (the fallback's model awaited)."""
        return await run_async(self._swap(output, context))

    def _swap(self, output: str, context: SwapContext) -> Flow[ObservationEdit]:
        if not output.strip():
            return ObservationEdit(swapped=None, method="no value to swap: the tool output is empty")
        values = values_of(output)
        keys = [v for v in values if held(context.answer, v.text) and not held(context.query, v.text)]
        passage = is_passage(output)
        aligned = {} if passage else _align(output, context.others)
        if not passage:
            for key in keys:
                new = _nth(key, output, context, aligned, context.variant)
                if new is not None:
                    return ObservationEdit(
                        swapped=_replace_all(output, [(key, new)]), method=f"values:{key.kind}", mode="value",
                        old=(key.text,), new=(new,),
                    )  # fmt: skip
            swaps: list[tuple[Value, str]] = []
            for value in values:
                if value.kind == "text" or not held(output, value.text) or held(context.query, value.text):
                    continue
                other = _nth(value, output, context, aligned, context.variant, [n for _, n in swaps])
                if other is not None:
                    swaps.append((value, other))
            if swaps:
                return ObservationEdit(
                    swapped=_replace_all(output, swaps), method="values:every-value", mode="move",
                    old=tuple(v.text for v, _ in swaps), new=tuple(n for _, n in swaps),
                )  # fmt: skip
        # in the order given: this run's outputs first, then the reference pool's, then the batch's (the last resort)
        mine = _stable([o for o in context.others if _servable(o, output, context)], output, context)
        batch = _stable([o for o in context.batch if _servable(o, output, context)], output, context)
        others = list(dict.fromkeys([*mine, *batch]))
        if context.variant < len(others):
            other = others[context.variant]
            how = "values:other-passage" if passage else "values:other-output"
            how += " in the batch" if other not in mine else ""
            return ObservationEdit(
                swapped=other, method=how, mode="move", old=_distinct(output, other, context.query),
                new=_distinct(other, output, context.query),
            )  # fmt: skip
        refused = ""
        if self.fallback is not None:  # its values come after the other outputs'
            asked = dataclasses.replace(context, variant=context.variant - len(others))
            edit: ObservationEdit = yield Call(
                functools.partial(self.fallback.swap_in_context, output, asked),
                functools.partial(aswap_with, self.fallback, output, asked),
            )
            dropped = () if edit.swapped is None else question_values_dropped(output, edit.swapped, context.query)
            if edit.swapped is not None and not dropped:
                return edit.model_copy(update={"mode": "move", "new": _distinct(edit.swapped, output, context.query)})
            refused = f"; {self.fallback.name}: " + (
                f"the swap changed {dropped[0]!r}, which the question states" if dropped else edit.method
            )
        why = "the answer repeats values of the output, but none has a plausible other value" if keys else ""
        what = "a passage and no other output of this tool" if passage else "no number, yes/no or known word"
        found = values_of(output)
        if found and all(held(context.query, v.text) for v in found):  # "6" for "36 eggs into 6 trays"
            what = (
                f"its only values ({', '.join(v.text for v in found[:3])}) are ones the question states, never swapped"
            )
        return ObservationEdit(
            swapped=None,
            method=f"no value to swap: {why or what} (other outputs of the tool in the run or a reference pool, its "
            f"schema, or the agent's model give more){refused}",
        )
