"""Contradicting an action plan: the ``plan_swap`` contradiction (docs/method.md#interventions).

Most thoughts a tool-using agent writes commit to an action ("I should look up the capital of Spain with the capital
tool."), and the only contradiction the thought-only rules make of such a plan is its negation. A plan commits to
something else when it names another tool or another argument, so :class:`PlanCritic`, given the agent's tools,
makes those edits, in this order:

1. another tool of the agent's in place of the one the thought names (where the thought names it by its name, the
   other tool's name; by a word or verb of it, the other tool's word that tells it apart: ``sql_db_query`` ->
   ``sql_db_schema`` turns "with a query" into "with a schema");
2. another value for an argument the thought states, from the value engine's one chain
   (:func:`~._sources.other_values`, shared with the observation swaps): another value of its kind the same tool was
   called with (in the same run, then in the auditor's reference pool when one is given), a value its schema allows
   (an ``enum``), a name of the same family (:mod:`._lexicon`), the number shifted by the one number rule.

The decisiveness gate of the ``thought->action`` link then keeps an edit only when the action it implies changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from ariadne_lc.interventions._plan_words import GENERIC, tool_pattern
from ariadne_lc.interventions._sources import other_values, same_value
from ariadne_lc.interventions._types import Intervention, InterventionType
from ariadne_lc.interventions.actions import RuleActionReader, ToolSpec

__all__ = ["PlanCritic"]

_KIND = InterventionType.PLAN_SWAP


def _tokens(name: str) -> list[str]:
    return [t.lower() for t in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if t]


def _word_for(other: ToolSpec, named: ToolSpec, mention: str) -> str:
    """How the thought would name ``other`` where it named ``named`` by ``mention``."""
    if mention.casefold().replace(" ", "_") == named.name.casefold() or "_" in mention:
        return other.name
    mine = set(_tokens(named.name))
    words = [t for t in _tokens(other.name) if t not in mine and t not in GENERIC and len(t) >= 3]
    word = words[0] if words else other.name
    return word.capitalize() if mention[:1].isupper() else word


_TOOL_WORDS: Final = frozenset({"tool", "tools", "function", "api"})
"""Words a thought uses to name a tool, never an argument value of it."""


class PlanCritic:
    """Makes ``plan_swap`` edits of a thought for an agent with ``tools`` (see the module docstring).

    Args:
        tools: The agent's tools (those of the node that made the step).
        recorded: Tool name -> argument values it was called with, in the order they are tried (the auditor gives
            those of the same run, then the reference pool's): the first source of other values.
        called: The argument values of the step's own calls.
        allowed: Tool name -> the values its schema allows for its arguments (``enum``): the second source.

    Examples:
        >>> tools = [ToolSpec(name="capital"), ToolSpec(name="population")]
        >>> PlanCritic(tools).intervene("I should look up the capital of Spain with the capital tool.", "plan_swap")\\
        ...     .intervened
        'I should look up the capital of Spain with the population tool.'
    """

    def __init__(
        self,
        tools: Sequence[ToolSpec],
        recorded: Mapping[str, Sequence[str]] | None = None,
        *,
        called: Sequence[str] = (),
        allowed: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.tools = tuple(tools)
        self.recorded: Mapping[str, Sequence[str]] = recorded or {}
        self.allowed: Mapping[str, Sequence[str]] = allowed or {}
        self.called = tuple(str(v) for v in called)
        """The argument values of the step's own calls: the arguments a thought most likely states."""
        self.reader = RuleActionReader()

    def candidates(self, thought: str, intervention_type: str = _KIND, *, query: str = "") -> list[Intervention]:
        """Every distinct plan edit of ``thought``: other tools first, then other argument values."""
        if intervention_type != _KIND or not thought.strip():
            return []
        action = self.reader.read_action(query, thought, self.tools)
        named = next((t for t in self.tools if t.name == action.tool), None)
        if named is None or action.no_call:
            return []
        seen = {thought.strip()}
        out: list[Intervention] = []
        stated = (*self.called, *action.values)
        for text, method in (*self._tool_swaps(thought, named), *self._value_swaps(thought, named, stated)):
            if text.strip() not in seen:
                seen.add(text.strip())
                out.append(Intervention(type=_KIND, original=thought, intervened=text, applicable=True, method=method))
        return out

    def _tool_swaps(self, thought: str, named: ToolSpec) -> Iterator[tuple[str, str]]:
        mentions = list(tool_pattern(named).finditer(thought))
        if not mentions:
            return
        last = mentions[-1]
        # a tool taking the same arguments first: in a harness with a dozen tools (files, sub-agents), "the price of
        # the apple with the stock tool" is a plan the agent could follow, "... with the delete tool" is not
        shared = set(named.args)
        for other in sorted(self.tools, key=lambda t: -len(shared.intersection(t.args))):
            if other.name != named.name:
                word = _word_for(other, named, last.group(0))
                yield thought[: last.start()] + word + thought[last.end() :], "rule:plan-tool"

    def _value_swaps(self, thought: str, named: ToolSpec, values: Sequence[str]) -> Iterator[tuple[str, str]]:
        # a word naming a tool is no argument value ("... with the price tool": the reader may read "tool" as one)
        naming = {w.lower() for spec in self.tools for w in re.split(r"[_\W]+", spec.name) if w} | _TOOL_WORDS
        for value in dict.fromkeys(v for v in values if v.strip() and v.strip().lower() not in naming):
            pattern = re.compile(r"(?<![\w.])" + re.escape(value) + r"(?![\w])", re.I)
            found = list(pattern.finditer(thought))
            if not found:
                continue
            for other in self._other_values(named.name, value):
                m = found[-1]
                yield thought[: m.start()] + other + thought[m.end() :], "rule:plan-argument"

    def _other_values(self, tool: str, value: str) -> Iterator[str]:
        recorded, allowed = self.recorded.get(tool, ()), self.allowed.get(tool, ())
        for other in other_values(value, recorded=map(str, recorded), allowed=map(str, allowed)):
            if not same_value(other, value) and len(other) <= 60:
                yield other

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        """The first plan edit of ``thought``, or ``not_applicable`` with the reason."""
        if intervention_type != _KIND:
            return Intervention.not_applicable(intervention_type, thought, f"the plan critic makes {_KIND} only")
        found = self.candidates(thought, intervention_type, query=query)
        if not found:
            names = ", ".join(t.name for t in self.tools) or "none"
            return Intervention.not_applicable(_KIND, thought, f"no plan to swap: the thought names no tool ({names})")
        return found[0]

    def revise(
        self, thought: str, intervention_type: str, *, query: str = "", rejected: Sequence[str] = (), feedback: str = ""
    ) -> Intervention:
        """The next plan edit that is none of ``rejected``, or ``not_applicable``."""
        skip = {r.strip() for r in rejected}
        for candidate in self.candidates(thought, intervention_type, query=query):
            if (candidate.intervened or "").strip() not in skip:
                return candidate
        return Intervention.not_applicable(_KIND, thought, "no other plan edit")
