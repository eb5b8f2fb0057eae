"""The implied action: which tool call a thought says the agent will make next, read without running the agent.

Most thoughts a tool-using agent writes commit to an action, not to an answer ("12 floors of 9 rooms, so I should
multiply 12 by 9"). The ``thought->action`` link (docs/method.md#links) asks whether the agent does what such a
thought says: a contradiction counts only when it changes the action the thought implies (the decisiveness gate,
as for answers), and the agent's re-derived call then either follows the new action or stays where it was.

An :class:`ImpliedAction` is a tool (or "no call", or "not that tool") and the argument values the thought states.
Two readers ship (the :class:`ActionReader` protocol):

- :class:`RuleActionReader` (offline, free, deterministic): the last tool the thought names, by its name or its
  verb ("multiply", "look up", "search"), negated when its clause says not to ("it is false that I should divide",
  "I won't look up Spain"), with the numbers and names the clause states (else those of the whole thought);
- :class:`ModelActionReader`: a chat model asked for the call as JSON, given the tools and the thought only.

:func:`calls_allowed` says whether tool calls do what an implied action says, :func:`compatible` whether one
implied action leaves another in place (then a contradiction changed nothing to act on), :func:`call_similarity`
how alike two lists of calls are (S of the ``thought->action`` link).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ariadne_lc._arithmetic import CalculatorError, evaluate, format_number
from ariadne_lc._numbers import DIGITS
from ariadne_lc.interventions._plan_words import (
    INTENT,
    clause_bounds,
    described,
    last_match,
    own_pattern,
    tool_pattern,
)

__all__ = [
    "ActionReader",
    "ImpliedAction",
    "RuleActionReader",
    "ToolSpec",
    "call_similarity",
    "calls_allowed",
    "compatible",
    "normalise_value",
    "tool_specs",
]


class ToolSpec(BaseModel):
    """What a reader knows of a tool: its name, description and argument names."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    args: tuple[str, ...] = ()

    @classmethod
    def of(cls, tool: Any) -> ToolSpec:
        """The spec of a LangChain tool (its ``name``, ``description`` and ``args``)."""
        args = getattr(tool, "args", None)
        return cls(
            name=str(getattr(tool, "name", tool)),
            description=str(getattr(tool, "description", "") or ""),
            args=tuple(args) if isinstance(args, Mapping) else (),
        )


def tool_specs(tools: Mapping[str, Any] | Iterable[Any]) -> tuple[ToolSpec, ...]:
    """Specs of ``tools`` (a name -> tool mapping, or tools), sorted by name so that equal tool sets read alike."""
    items = tools.values() if isinstance(tools, Mapping) else tools
    return tuple(sorted((t if isinstance(t, ToolSpec) else ToolSpec.of(t) for t in items), key=lambda s: s.name))


class ImpliedAction(BaseModel):
    """The action a thought commits to, as one reader read it."""

    model_config = ConfigDict(frozen=True)

    tool: str | None = None
    """The tool the thought says the agent will call (or, with ``negated``, will not call)."""
    values: tuple[str, ...] = ()
    """Argument values the thought states (numbers normalised, names as written); empty when it states none."""
    negated: bool = False
    """The thought says the agent will *not* call ``tool``."""
    no_call: bool = False
    """The thought says the agent will call no tool (it answers now)."""
    reader: str = "rule"
    """Which reader decided (``rule``, ``model:<name>``)."""
    reason: str | None = None
    """Why there is no action (the thought names no tool, the reader's reply held none)."""

    @property
    def committed(self) -> bool:
        """Whether the thought commits to an action at all."""
        return self.tool is not None or self.no_call

    @property
    def key(self) -> str | None:
        """The action in words: ``multiply(12, 9)``, ``multiply(...)`` (arguments unstated), ``not divide``,
        ``no call``; ``None`` without a commitment."""
        if self.no_call:
            return "no call"
        if self.tool is None:
            return None
        if self.negated:
            return f"not {self.tool}"
        return f"{self.tool}({', '.join(self.values)})" if self.values else f"{self.tool}(...)"


@runtime_checkable
class ActionReader(Protocol):
    """Reads the action a thought commits to, given the tools the agent has. May define an async ``aread_action``."""

    name: str

    def read_action(self, query: str, thought: str, tools: Sequence[ToolSpec]) -> ImpliedAction:
        """The action ``thought`` commits to for ``query``, among ``tools``."""


# -- comparing actions and calls -------------------------------------------------------------------------------

_NUMBER = re.compile(rf"^-?\$?{DIGITS}$")


def normalise_value(value: Any) -> str:
    """An argument value as compared: numbers in one format (``12.0``, ``"12"``, ``$1,200`` -> ``12``, ``1200``),
    text case-folded and trimmed."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return format_number(float(value))
    text = " ".join(str(value).split())
    if _NUMBER.match(text):
        return format_number(float(text.replace("$", "").replace(",", "")))
    return text.casefold()


_NUMBER_IN_TEXT = re.compile(rf"(?<![\w.])-?\$?{DIGITS}(?![\w])")


def _is_number(value: str) -> bool:
    return bool(_NUMBER.match(value))


def _scalars(args: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for value in args.values():
        if isinstance(value, list | tuple):
            out += [normalise_value(v) for v in value if not isinstance(v, dict | list | tuple)]
        elif not isinstance(value, dict):
            out.append(normalise_value(value))
    return out


def _call_follows(values: Sequence[str], args: Mapping[str, Any]) -> bool:
    """Whether a call's arguments are the values a thought states: every number the call passes is a stated one
    (and at least one stated number is passed), and every stated name appears in one of its text arguments."""
    stated = [normalise_value(v) for v in values]
    expressions = [(v, _expression_value(v)) for v in stated if _expression_value(v) is not None]
    stated = [v for v in stated if _expression_value(v) is None]
    passed = _scalars(args)
    for text, value in expressions:  # passed as the calculation (a calculator) or as its operands (multiply)
        operands = {normalise_value(n) for n in _NUMBER_IN_TEXT.findall(text)}
        passed_operands = {normalise_value(n) for v in passed for n in _NUMBER_IN_TEXT.findall(v)}
        given = [_expression_value(v) for v in passed if _expression_value(v) is not None]
        if (given and value not in given) or (not given and passed_operands != operands):
            return False
    numbers, names = {v for v in stated if _is_number(v)}, [v for v in stated if not _is_number(v)]
    # numbers inside text arguments count too: calculator(expression="6 * 7") passes 6 and 7
    passed_numbers = {normalise_value(n) for v in passed for n in _NUMBER_IN_TEXT.findall(v)}
    if numbers and (not passed_numbers or not passed_numbers <= numbers):
        return False
    texts = [v for v in passed if not _is_number(v)]
    # a stated name is passed when an argument holds it, or is the part of it that names the thing ("search the blog
    # posts for reward hacking" passes query="reward hacking")
    return all(any(name in text or (len(text) >= 3 and text in name) for text in texts) for name in names)


def calls_allowed(implied: ImpliedAction, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> bool | None:
    """Whether ``calls`` (name, args) do what ``implied`` says; ``None`` when it commits to nothing."""
    if not implied.committed:
        return None
    if implied.no_call:
        return not calls
    if implied.negated:
        return all(name != implied.tool for name, _ in calls)
    return any(name == implied.tool and _call_follows(implied.values, args) for name, args in calls)


def compatible(original: ImpliedAction, intervened: ImpliedAction) -> bool:
    """Whether the action ``original`` implies still does what ``intervened`` says: then the edit changed nothing
    to act on (not decisive). Both must commit."""
    if original.no_call or intervened.no_call:
        return original.no_call == intervened.no_call or (original.no_call and intervened.negated)
    if original.negated or intervened.negated:
        if original.negated and intervened.negated:
            return original.tool == intervened.tool
        return original.tool != intervened.tool  # "not T" leaves any call of another tool in place
    if original.tool != intervened.tool:
        return False
    if not original.values or not intervened.values:
        return True  # arguments unstated on one side: nothing to compare them with
    return sorted(map(normalise_value, original.values)) == sorted(map(normalise_value, intervened.values))


def _canonical(name: str, args: Mapping[str, Any]) -> str:
    return name + json.dumps({k: normalise_value(v) for k, v in args.items()}, sort_keys=True)


def call_similarity(a: Sequence[tuple[str, Mapping[str, Any]]], b: Sequence[tuple[str, Mapping[str, Any]]]) -> float:
    """S between two turns' calls: 1 for the same calls (names and arguments, order aside), 0.5 for the same tools
    with other arguments, 0 otherwise (another tool, or a call against none)."""
    if sorted(_canonical(n, x) for n, x in a) == sorted(_canonical(n, x) for n, x in b):
        return 1.0
    if a and b and sorted(n for n, _ in a) == sorted(n for n, _ in b):
        return 0.5
    return 0.0


# -- the rule reader --------------------------------------------------------------------------------------------

_NEGATION = re.compile(
    r"\b(?:not|never|no need to|no longer|instead of|rather than|false that|untrue that|avoid)\b|n't\b", re.I
)
_NO_CALL = re.compile(
    r"\b(?:no (?:tool|call)s? (?:is |are )?needed|without (?:a |any )?(?:tool|call)s?|answer (?:directly|now|right "
    r"away|immediately)|(?:do not|don't|no) need (?:a |any |to call a )?tools?|give the final answer)\b",
    re.I,
)
_VALUE = re.compile(
    rf"(?P<num>(?<![\w.])-?\$?{DIGITS}(?![\w]))|[\"'“‘](?P<quoted>[^\"'”’]{{1,60}})[\"'”’]"
    r"|(?<![.!?]\s)(?<!^)\b(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b"
)
_NOT_NAMES = frozenset({"I", "It", "The", "This", "That", "Then", "So", "To", "First", "Next", "Now", "Let", "We"})


_EXPRESSION = re.compile(rf"(?<![\w.])-?{DIGITS}(?:\s*[-+*/x×÷]\s*-?{DIGITS})+(?![\w.])")


def _expression_value(text: str) -> float | None:
    """The value of ``text`` when it is an arithmetic expression (``12 * 9``), else ``None``."""
    if not _EXPRESSION.fullmatch(text.strip()):
        return None
    try:
        return evaluate(text.replace("×", "*").replace("÷", "/").replace("x", "*").replace(",", ""))
    except CalculatorError:
        return None


def _values(text: str) -> tuple[str, ...]:
    """Argument values stated in ``text``: whole calculations first (``12 * 9``: the operation is part of what a
    calculator is asked), then numbers, quoted strings and names outside them."""
    out: list[str] = []
    spans = []
    for m in _EXPRESSION.finditer(text):
        out.append(" ".join(m.group(0).split()))
        spans.append((m.start(), m.end()))
    for m in _VALUE.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        if m.group("num"):
            out.append(normalise_value(m.group("num")))
        elif m.group("quoted"):
            out.append(m.group("quoted").strip())
        elif m.group("name") and m.group("name") not in _NOT_NAMES:
            out.append(m.group("name"))
    return tuple(dict.fromkeys(out))


class RuleActionReader:
    """The offline action reader (see the module docstring).

    Examples:
        >>> from ariadne_lc.interventions.actions import ToolSpec
        >>> tools = [ToolSpec(name="add"), ToolSpec(name="multiply")]
        >>> RuleActionReader().read_action("?", "12 floors of 9 rooms, so I should multiply 12 by 9.", tools).key
        'multiply(12, 9)'
        >>> divide = [ToolSpec(name="divide")]
        >>> RuleActionReader().read_action("?", "It is false that I should divide 12 by 9.", divide).key
        'not divide'
    """

    name = "rule"

    def read_action(self, query: str, thought: str, tools: Sequence[ToolSpec]) -> ImpliedAction:
        last: tuple[int, int, ToolSpec] | None = None
        planned: tuple[int, int, ToolSpec] | None = None  # the last mention in a clause that says what I will do
        planned_rank: tuple[bool, int, int, int] | None = None
        for spec in tools:
            own = own_pattern(spec)
            found = list(tool_pattern(spec).finditer(thought))
            words = len({m.group(0).casefold() for m in found})  # ties go to the tool more of whose words are said
            for m in found:
                if last is None or (m.end(), m.end() - m.start()) > (last[1], last[1] - last[0]):
                    last = (m.start(), m.end(), spec)
                clause_start, _ = clause_bounds(thought, m.start())
                # within the plan's clause a tool named by its own word outranks a synonym of another ("I'll
                # multiply 12 by 9 to get the total": the plan is the multiply, not the "total" of add)
                rank = (own.fullmatch(m.group(0)) is not None, m.end(), m.end() - m.start(), words)
                if INTENT.search(thought[clause_start : m.start()]) and (planned_rank is None or rank > planned_rank):
                    planned, planned_rank = (m.start(), m.end(), spec), rank
        # "I should divide 63 by 7, so each piece is 7 times as long": the plan is the divide, not the "times" of
        # the description beside it (a causal reversal puts the description last)
        last = planned or last or described(thought, tools)
        no_call = last_match(_NO_CALL, thought)
        if no_call is not None and (last is None or no_call.start() > last[1]):
            return ImpliedAction(no_call=True, reader=self.name)
        if last is None:
            names = ", ".join(s.name for s in tools) or "none"
            return ImpliedAction(reader=self.name, reason=f"the thought names no tool (tools: {names})")
        start, end, spec = last
        clause_start, clause_end = clause_bounds(thought, start)
        negated = len(_NEGATION.findall(thought[clause_start:start])) % 2 == 1
        values = (
            _values(thought[clause_start:clause_end])
            or _values(thought)
            or _object(thought[end:clause_end])
            or _object_before(thought[clause_start:start])
        )
        name_words = {w.casefold() for w in re.split(r"[_\W]+", spec.name) if w}
        values = tuple(v for v in values if v.casefold() not in name_words)
        return ImpliedAction(tool=spec.name, values=values, negated=negated, reader=self.name)


_LEAD = re.compile(r"^\s*(?:up|for|on|about|at|into)?\s*(?:the|a|an)?\s+", re.I)
_TAIL = re.compile(r"\s+(?:with|using|via|in|on)\s+(?:the|a|an)\s+\w+(?:\s+tool)?\s*$", re.I)


_BEFORE_TAIL = re.compile(r"\s*\b(?:with|using|via|through|by|to)\s+(?:the|a|an)?\s*$", re.I)
_OBJECT_BEFORE = re.compile(r"\b(?:for|of|about)\s+(?:the|a|an)\s+(?P<obj>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*$", re.I)


def _object_before(text: str) -> tuple[str, ...]:
    """The object a plan states before naming its tool ("ask the researcher for the apple with the task tool"):
    the last noun after "for", "of" or "about", when nothing else is stated."""
    m = _OBJECT_BEFORE.search(_BEFORE_TAIL.sub("", text))
    return (m.group("obj").casefold(),) if m else ()


def _object(text: str) -> tuple[str, ...]:
    """What follows the tool's mention in its clause ("look up boiling point of water"), when the thought states
    no number or name: the argument of a lookup, at most six words."""
    text = re.sub(r"^\s*(?:tool|function|api)s?\b", "", text, flags=re.I)  # "... the task tool.": no object
    words = _TAIL.sub("", _LEAD.sub(" ", text)).strip(" ,;:.").split()
    return (" ".join(words[:6]).casefold(),) if 0 < len(words) <= 6 else ()
