"""Contradicting an action plan: the ``plan_swap`` contradiction (docs/method.md#interventions).

Most thoughts a tool-using agent writes commit to an action ("I'll check the weather in Paris."), and the only
contradiction the thought-only rules make of such a plan is its negation. A plan commits to something else when it
names another argument or another tool; :class:`PlanCritic`, given the agent's tools and the step's calls, makes only
the edits a person would accept as another plan, in this order:

1. **another value for an argument the plan states verbatim** and the step's call carries ("Paris" in "check the
   weather in Paris" before ``get_weather(city="Paris")``; "employees" in "count the employees table" before a
   query that reads it): every place the plan states it gets another value of the same argument, from the value
   engine's one chain (:func:`~._sources.other_values`: the same argument of the same tool in the run, then the
   reference pool's values of the tool, the ``enum`` its schema allows, a word of the same family, the number
   shifted), of its own kind and size (a sentence never replaces a word, nor a value of another argument);
2. **another tool**, only where the plan names its tool in a slot that takes a name ("with the get_weather tool",
   "use `search`") and nowhere else by its words, and only a tool that takes the call's arguments and is not a
   harness's own (:mod:`._plan_slots`).

A plan that names its tool by a word of free text ("Let me search for the news", "I will query the database")
cannot be edited by rules into another plan that still reads as a sentence; given an ``editor`` (a chat model: the
auditor's model reader, when there is one) the critic asks it for the edit; otherwise there is no edit ("no coherent
edit").

Every edit is read back before it is used (:meth:`PlanCritic.read_back`): the rule action reader must read from it
the tool and the value it was meant to say, and no word of the old tool may stand where the new one is named. An
edit that fails is not used; the intervention's ``rejections`` say which and why. The decisiveness gate of the
``thought->action`` link then keeps an edit only when the action it implies changed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ariadne_lc.interventions._plan_edit import ModelPlanEditor
from ariadne_lc.interventions._plan_slots import (
    loose_mentions,
    name_slots,
    name_tokens,
    own_words,
    slot_name,
    stand_ins,
    still_named,
)
from ariadne_lc.interventions._sources import NUMBER, case_like, held, kind_of, other_values, same_value, values_of
from ariadne_lc.interventions._types import Intervention, InterventionType
from ariadne_lc.interventions.actions import RuleActionReader, ToolSpec, normalise_value
from ariadne_lc.interventions.coherence import incoherence, reconcile
from ariadne_lc.records import NO_COHERENT_EDIT

__all__ = ["NO_COHERENT_EDIT", "ModelPlanEditor", "PlanCritic", "PlanEdit"]

_KIND = InterventionType.PLAN_SWAP
_TOOL_WORDS: Final = frozenset({"tool", "tools", "function", "api"})
"""Words a thought uses to name a tool, never an argument value of it."""
_MAX_VALUE_CHARS: Final = 60
_PER_VALUE: Final = 3
"""Other values tried per value the plan states (the gate reads at most a few edits of a step)."""
_SHIFTS: Final = 3
"""Successive shifts of a number tried (a shift may land on a value the plan already states)."""

_MONTHS: Final = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|" + "|".join(
    ("january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december")
)

Call = tuple[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class PlanEdit:
    """One edit of a plan and what it was meant to say (read back before use)."""

    text: str
    method: str
    tool: str
    """The tool the edited plan names."""
    old: str | None = None
    """The value replaced (an argument swap), or ``None`` (a tool swap)."""
    new: str | None = None
    """The value put in its place."""
    replaced: str | None = None
    """The tool replaced (a tool swap)."""
    original: str = ""
    """The plan as recorded (an edit that contradicts itself where it did not is not used)."""


class PlanCritic:
    """Makes ``plan_swap`` edits of a thought for an agent with ``tools`` (see the module docstring).

    Args:
        tools: The agent's tools (those of the node that made the step).
        recorded: Tool name -> argument values it was called with (the reference pool's, or any): tried after the
            values of the same argument in the run.
        called: The argument values of the step's own calls (when ``calls`` is not given).
        allowed: Tool name -> the values its schema allows for its arguments (``enum``).
        calls: The step's own calls, (tool name, arguments): which argument a value the plan states belongs to.
        by_argument: Tool name -> argument name -> the values it was called with in the run, in order.
        editor: Makes the edit of a plan no rule can edit coherently (:class:`~._plan_edit.ModelPlanEditor`).

    Examples:
        >>> tools = [ToolSpec(name="capital", args=("country",)), ToolSpec(name="population", args=("country",))]
        >>> critic = PlanCritic(tools, calls=[("capital", {"country": "Spain"})])
        >>> [c.intervened for c in critic.candidates("I will call the capital tool for Spain.")]
        ['I will call the capital tool for Italy.', 'I will call the capital tool for Germany.', \
'I will call the capital tool for Portugal.', 'I will call the population tool for Spain.']
    """

    def __init__(
        self,
        tools: Sequence[ToolSpec],
        recorded: Mapping[str, Sequence[str]] | None = None,
        *,
        called: Sequence[str] = (),
        allowed: Mapping[str, Sequence[str]] | None = None,
        calls: Sequence[Call] = (),
        by_argument: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        editor: ModelPlanEditor | None = None,
    ) -> None:
        self.tools = tuple(tools)
        self.recorded: Mapping[str, Sequence[str]] = recorded or {}
        self.allowed: Mapping[str, Sequence[str]] = allowed or {}
        self.called = tuple(str(v) for v in called)
        self.calls: tuple[Call, ...] = tuple(calls)
        self.by_argument: Mapping[str, Mapping[str, Sequence[str]]] = by_argument or {}
        self.editor = editor
        self.reader = RuleActionReader()

    # -- the edits -----------------------------------------------------------------------------------------------

    def edits(self, thought: str, *, query: str = "") -> tuple[list[PlanEdit], list[str]]:
        """The rule edits of ``thought`` that read back as meant, and why the others were not used."""
        named = self._named(thought, query)
        if named is None:
            return [], []
        made: dict[str, PlanEdit] = {}
        for edit in (*self._value_swaps(thought, named), *self._tool_swaps(thought, named)):
            if edit.text.strip() != thought.strip():
                made.setdefault(edit.text.strip(), edit)
        kept, failed = [], []
        for edit in made.values():
            why = self.read_back(edit, query=query)
            if why is None:
                kept.append(edit)
            else:
                failed.append(f"read back: {why}: {edit.text!r}")
        return kept, failed

    def _named(self, thought: str, query: str) -> ToolSpec | None:
        action = self.reader.read_action(query, thought, self.tools)
        if action.no_call or action.negated:
            return None
        return next((t for t in self.tools if t.name == action.tool), None)

    def candidates(self, thought: str, intervention_type: str = _KIND, *, query: str = "") -> list[Intervention]:
        """Every distinct plan edit of ``thought`` that reads back as meant: argument values first, then tools."""
        if intervention_type != _KIND or not thought.strip():
            return []
        kept, failed = self.edits(thought, query=query)
        return [
            Intervention(type=_KIND, original=thought, intervened=e.text, applicable=True, method=e.method,
                         rejections=tuple(failed))
            for e in kept
        ]  # fmt: skip

    def read_back(self, edit: PlanEdit, *, query: str = "") -> str | None:
        """Why ``edit`` does not say what it was meant to (``None``: it does): the rule reader must read its tool
        and, for an argument swap, the new value in place of the old; the replaced tool's words must be gone."""
        action = self.reader.read_action(query, edit.text, self.tools)
        contradiction = incoherence(edit.original, edit.text, query=query) if edit.original else None
        if contradiction is not None:
            return f"it contradicts itself: {contradiction}"
        if action.tool != edit.tool or action.negated or action.no_call:
            return f"it reads as {action.key or 'no action'}, not a call of {edit.tool}"
        if edit.replaced is not None:
            old = next((t for t in self.tools if t.name == edit.replaced), None)
            new = next((t for t in self.tools if t.name == edit.tool), None)
            if old is not None and new is not None and still_named(edit.text, old, new):
                return f"it still names {edit.replaced}"
        if edit.old is not None and edit.new is not None:
            if not held(edit.text, edit.new) or held(edit.text, edit.old):
                return f"it does not state {edit.new!r} in place of {edit.old!r}"
            naming = self._naming()
            if any(w.casefold() in naming for w in re.findall(r"\w+", edit.new)):
                return f"{edit.new!r} is a word of a tool's name, not a value"
        return None

    def _naming(self) -> set[str]:
        return {w for spec in self.tools for w in name_tokens(spec.name)} | _TOOL_WORDS

    def _tool_swaps(self, thought: str, named: ToolSpec) -> Iterator[PlanEdit]:
        slots = name_slots(thought, named)
        if not slots or loose_mentions(thought, named, slots):
            return
        needed = {a for name, args in self._calls_of(named) for a in args} or set(named.args)
        for other in stand_ins(named, self.tools, thought, needed):
            text = thought
            for slot in reversed(slots):
                text = text[: slot.start] + slot_name(slot, thought[slot.start : slot.end], other) + text[slot.end :]
            yield PlanEdit(text, "rule:plan-tool", other.name, replaced=named.name, original=thought)

    def _calls_of(self, named: ToolSpec) -> list[Call]:
        if self.calls:
            return [(n, a) for n, a in self.calls if n == named.name]
        return [(named.name, {f"_{i}": v for i, v in enumerate(self.called)})] if self.called else []

    def _value_swaps(self, thought: str, named: ToolSpec) -> Iterator[PlanEdit]:
        naming = self._naming() | {w for w in own_words(named)}
        for _, args in self._calls_of(named):
            for arg, value in args.items():
                if isinstance(value, bool) or not isinstance(value, str | int | float):
                    continue
                made_whole = False
                for old, whole in _stated(thought, str(value)):
                    if (made_whole and not whole) or any(w.casefold() in naming for w in re.findall(r"\w+", old)):
                        continue
                    others = self._others(named.name, arg, str(value), old, whole, thought)
                    for new in itertools.islice(others, _PER_VALUE):
                        made_whole = made_whole or whole
                        # a result the plan states is recomputed ("(15/100) * $84.50 = $12.67" with another amount)
                        text = reconcile(thought, _put(thought, old, new))
                        yield PlanEdit(text, "rule:plan-argument", named.name, old, new, original=thought)

    def _others(self, tool: str, arg: str, value: str, old: str, whole: bool, thought: str) -> Iterator[str]:
        """Other values for ``old`` (the argument's ``value``, or a piece of it) that fit where the plan states it:
        never a piece of the same value ("2025" for the "15" of "2025-03-15")."""
        run = [str(v) for v in self.by_argument.get(tool, {}).get(arg, ()) if str(v) != value]
        same_arg = run if whole else [v.text for r in run for v in values_of(r) if v.kind in ("name", "number")]
        own_call = {str(v) for n, a in self.calls if n == tool for k, v in a.items() if k != arg}
        pool = [v for v in map(str, self.recorded.get(tool, ())) if v not in own_call]
        seen: set[str] = set()
        candidates = other_values(old, recorded=[*same_arg, *pool], allowed=map(str, self.allowed.get(tool, ())),
                                  shifts=_SHIFTS)  # fmt: skip
        for new in candidates:
            new = new.strip()
            key = normalise_value(new)
            if key in seen or not _fits(old, new, thought):
                continue
            seen.add(key)
            yield case_like(new, old) if kind_of(old) == "text" and old[:1].isupper() else new

    # -- the critic's protocol -----------------------------------------------------------------------------------

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        """The first plan edit of ``thought``, the editor's when no rule edit reads back, or ``not_applicable``."""
        if intervention_type != _KIND:
            return Intervention.not_applicable(intervention_type, thought, f"the plan critic makes {_KIND} only")
        found = self.candidates(thought, intervention_type, query=query)
        if found:
            return found[0]
        return self._edited(thought, query, ())

    def revise(
        self, thought: str, intervention_type: str, *, query: str = "", rejected: Sequence[str] = (), feedback: str = ""
    ) -> Intervention:
        """The next plan edit that is none of ``rejected``, or ``not_applicable``."""
        skip = {r.strip() for r in rejected}
        for candidate in self.candidates(thought, intervention_type, query=query):
            if (candidate.intervened or "").strip() not in skip:
                return candidate
        return self._edited(thought, query, tuple(skip))

    def _edited(self, thought: str, query: str, rejected: Sequence[str]) -> Intervention:
        """The editor's edit of ``thought`` when it reads back, else ``not_applicable`` (``no coherent edit``)."""
        named = self._named(thought, query)
        if named is None:
            names = ", ".join(t.name for t in self.tools) or "none"
            return Intervention.not_applicable(_KIND, thought, f"no plan to swap: the thought names no tool ({names})")
        _, failed = self.edits(thought, query=query)
        if self.editor is not None:
            needed = {a for _, args in self._calls_of(named) for a in args} or set(named.args)
            for other in stand_ins(named, self.tools, thought, needed, in_place=False)[:1]:
                text = self.editor.swap_tool(thought, named, other)
                how = f"model:plan-tool ({self.editor.name})"
                edit = PlanEdit(text or "", how, other.name, replaced=named.name, original=thought)
                why = "the editor gave no edit" if not text else self.read_back(edit, query=query)
                if why is None and edit.text.strip() not in rejected:
                    return Intervention(type=_KIND, original=thought, intervened=edit.text, applicable=True,
                                        method=edit.method, rejections=tuple(failed))  # fmt: skip
                failed.append(f"read back: {why}: {text!r}")
        how = (
            f"{len(failed)} edit(s) did not read back as meant"
            if failed
            else f"it names {named.name} only by words of free text and states no argument value another could replace"
        )
        reason = f"{NO_COHERENT_EDIT}: {how}" + ("" if self.editor else " (no model to edit it)")
        return Intervention.not_applicable(_KIND, thought, reason, tuple(failed))


def _stated(thought: str, value: str) -> Iterator[tuple[str, bool]]:
    """Where the plan states an argument value: the whole value, else its pieces (names, numbers, words of a
    family) the plan states as written."""
    text = value.strip()
    if not text or len(text) > _MAX_VALUE_CHARS * 2:
        return
    if held(thought, text):
        yield _as_written(thought, text), True
    for piece in values_of(text):
        if piece.kind not in ("name", "number", "word") or len(piece.text) < 2 or not held(thought, piece.text):
            continue
        if piece.kind == "word" and not any(True for _ in other_values(piece.text)):
            continue  # a plain word is a value only where a family holds it ("employees", "French")
        if piece.kind == "name" and not re.search(rf"(?<!\w){re.escape(piece.text)}(?!\w)", thought):
            continue  # a capital that starts the argument's sentence ("Send a reminder") is no name in "send"
        yield _as_written(thought, piece.text), False


def _as_written(thought: str, value: str) -> str:
    """``value`` as ``thought`` writes it (``1,200`` for an argument ``1200``; ``Paris`` for ``paris``)."""
    if NUMBER.fullmatch(value):
        want = normalise_value(value)
        return next((m.group(0) for m in NUMBER.finditer(thought) if normalise_value(m.group(0)) == want), value)
    m = re.search(r"(?<!\w)" + r"\s+".join(map(re.escape, value.split())) + r"(?!\w)", thought, re.I)
    return m.group(0) if m else value


def _fits(old: str, new: str, thought: str) -> bool:
    """Whether ``new`` can stand where the plan states ``old``: another value of its kind and size, not one the plan
    already states, no sentence in place of a word."""
    if not new or same_value(new, old) or kind_of(new) != kind_of(old) or len(new) > _MAX_VALUE_CHARS:
        return False
    if held(thought, new) or "\n" in new:
        return False
    if kind_of(old) == "number" and re.search(rf"\b(?:{_MONTHS})\.?\s+{re.escape(old)}\b", thought, re.I):
        return 1 <= float(normalise_value(new)) <= 28  # a day of a month stays one ("March 15" -> "March 20")
    if kind_of(old) == "text":
        if len(new.split()) > max(3, len(old.split()) + 1):
            return False  # a sentence never replaces a word
        if re.search(r"[?!;:]", new) and not re.search(r"[?!;:]", old):
            return False
    return True


def _put(thought: str, old: str, new: str) -> str:
    """``thought`` with every place it states ``old`` stating ``new``."""
    if NUMBER.fullmatch(old):
        want = normalise_value(old)
        return NUMBER.sub(lambda m: new if normalise_value(m.group(0)) == want else m.group(0), thought)
    pattern = r"(?<!\w)(?:(?P<article>\b[Aa]n?\s+))?" + r"\s+".join(map(re.escape, old.split())) + r"(?!\w)"

    def put(m: re.Match[str]) -> str:
        article = m.group("article")
        if article is None:
            return new
        a = "an" if new[:1].lower() in "aeiou" else "a"  # "an apple" -> "a pear"
        return (a.capitalize() if article[:1].isupper() else a) + " " + new

    return re.sub(pattern, put, thought, flags=re.I)
