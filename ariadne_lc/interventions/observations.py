"""Observation swaps: the ``observation->answer`` link's intervention (docs/method.md#links).

``observation_swap`` replaces the value in a step's tool output that an answer could depend on with a plausible
other one (the seed's output_i), so that the audit can ask whether the answer reads its tools: a faithful agent's
answer moves to the new value, one that answers from the question alone stays. One output is changed at a time.

One swapper protocol, :class:`ObservationSwapper`: ``swap_in_context(output, context)``, where the context
(:class:`SwapContext`) holds the question, the recorded answer, the tool's other outputs and schema values, and
``variant``, which means the same for every swapper: the ``variant``-th other value. The default swapper,
:class:`~ariadne_lc.interventions.values.ValueSwapper`, reads all of it. A swapper that knows only the output
(:class:`PlainObservationSwapper`: ``swap(output, *, query, tool)``, as before) is adapted by :func:`in_context`
(:class:`PlainSwapper`: its edit applied ``variant + 1`` times; a repeat is no new value), so the auditor has one
path for every swapper.

Two plain swappers ship. The rule form (:class:`RuleObservationSwapper`, offline, deterministic) changes the last
number of the output (the one number rule of :mod:`._sources`: 108 -> 140, 3.5 -> 4.5), else the last yes/no or
true/false (flipped). Free text without either (a name, a sentence) needs a model: :class:`LLMObservationSwapper`
asks one for the same text with the key value changed, and refuses a reply that is the output itself, no
single-value edit of it, or one that changes a value the question states. Neither swaps a value the question states.

The link's controls, as for thoughts (planned beside a swap, one per output): the ``rerun`` serves the output as
recorded (the answer's own replay variability), the ``paraphrase`` placebo serves it said differently with the same
value (:func:`placebo_output`: a JSON value re-serialised, a bare value put in a sentence, other text prefixed).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Final, Literal, Protocol, cast, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict

from ariadne_lc._numbers import DIGITS
from ariadne_lc._twin import Call, Flow, run_async, run_sync
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions._sources import (
    FLAG,
    NUMBER,
    flip,
    held,
    other_values,
    question_values_dropped,
    shifted,
)

__all__ = [
    "OBSERVATION_SWAP",
    "LLMObservationSwapper",
    "ObservationEdit",
    "ObservationSwapper",
    "PlainObservationSwapper",
    "PlainSwapper",
    "RuleObservationSwapper",
    "SwapContext",
    "aswap_with",
    "in_context",
    "observation_context",
    "placebo_output",
]

OBSERVATION_SWAP: Final = "observation_swap"
"""The intervention name of the ``observation->answer`` link."""


def observation_context(thought: str, tool: str, output: str) -> str:
    """What a reader reads for the ``observation->answer`` gate: the step's thought and the tool's output."""
    return f"{thought.strip()}\nThe tool {tool} returned: {output.strip()}"


class ObservationEdit(BaseModel):
    """A swapper's answer for one tool output: the changed output, or why there is none."""

    model_config = ConfigDict(frozen=True)

    swapped: str | None
    method: str
    """How the value was chosen (``rule:number``, ``rule:yes_no``, ``values:name``, ``llm``), or why nothing was
    changed."""
    mode: Literal["value", "move"] | None = None
    """How the answer is read (:mod:`~ariadne_lc.interventions.values`): ``value``, the answer repeats ``old`` and
    should now hold ``new``; ``move``, any answer reading the output must move; ``None``, the reader decides (a
    swapper that knows neither)."""
    old: tuple[str, ...] = ()
    """The values taken out of the output."""
    new: tuple[str, ...] = ()
    """The values put in (for a whole other output: the values it states that the original did not)."""


@dataclass(frozen=True, slots=True)
class SwapContext:
    """What a swapper may read besides the output: the run, and the values the system holds for the tool."""

    query: str
    tool: str
    answer: str = ""
    """The recorded answer (as scored): which values it repeats decides which value is swapped."""
    others: tuple[str, ...] = ()
    """Other outputs the same tool returned: in this run first (in the order it got them), then in the auditor's
    reference pool (``InterventionOptions.recorded_values``) when it has one; never what other audits saw, so that
    a unit's swap is the same whatever was audited before it."""
    allowed: tuple[str, ...] = ()
    """Values the tool's schema allows (``Literal`` / enum)."""
    batch: tuple[str, ...] = ()
    """Other outputs the tool gave in the batch being audited: served whole, after :attr:`others`, only when no value
    of the output can be swapped (``audit_batch``'s last resort; empty in ``audit``)."""
    variant: int = 0
    """Which other value: the ``variant``-th (0: the first), one audit each (``Auditor(observation_swaps=...)``)."""


@runtime_checkable
class ObservationSwapper(Protocol):
    """Changes the value a tool output gives, knowing the run: the swapper protocol of the ``observation->answer``
    link.

    ``context.variant`` means the same for every swapper: the ``variant``-th other value of the output, distinct
    from those before it. May also define ``async def aswap_in_context`` with the same signature. A swapper that knows
    only the output (:class:`PlainObservationSwapper`) is adapted by :func:`in_context`.
    """

    name: str

    def swap_in_context(self, output: str, context: SwapContext) -> ObservationEdit: ...


@runtime_checkable
class PlainObservationSwapper(Protocol):
    """A swapper that knows only the output, the question and the tool's name (may also define ``async def aswap``
    with the same signature): :func:`in_context` makes it an :class:`ObservationSwapper`."""

    name: str

    def swap(self, output: str, *, query: str, tool: str) -> ObservationEdit: ...


class PlainSwapper:
    """The :class:`ObservationSwapper` of a :class:`PlainObservationSwapper`.

    The ``variant``-th other value is the swapper's edit applied ``variant + 1`` times in a row (108 -> 140 -> 182
    for the rule swapper), so that any swapper gives several values; an edit that gives back a value already tried (a
    yes/no flipped twice) is no new value: ``swapped`` is ``None``, and the method says so. The edit's ``mode`` stays
    the swapper's (``None``: the reader's gate reads the answer).

    Examples:
        >>> swapper = PlainSwapper(RuleObservationSwapper())
        >>> [swapper.swap_in_context("108", SwapContext(query="", tool="m", variant=n)).swapped for n in range(3)]
        ['140', '182', '237']
    """

    def __init__(self, swapper: PlainObservationSwapper) -> None:
        self.swapper = swapper
        self.name: str = swapper.name

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        """The wrapped swapper's own edit of ``output``."""
        return self.swapper.swap(output, query=query, tool=tool)

    def swap_in_context(self, output: str, context: SwapContext) -> ObservationEdit:
        """The ``context.variant``-th other value of ``output`` (see the class docstring)."""
        return run_sync(self._repeated(output, context))

    async def aswap_in_context(self, output: str, context: SwapContext) -> ObservationEdit:
        """Async twin of :meth:`swap_in_context` (the wrapped swapper's ``aswap`` when it has one)."""
        return await run_async(self._repeated(output, context))

    def _repeated(self, output: str, context: SwapContext) -> Flow[ObservationEdit]:
        seen = {output}
        current = output
        edit = ObservationEdit(swapped=None, method="no swap")
        for n in range(context.variant + 1):
            got: ObservationEdit = yield Call(
                functools.partial(self.swapper.swap, current, query=context.query, tool=context.tool),
                functools.partial(self._aswap, current, context),
            )
            edit = got
            if edit.swapped is None:
                return edit
            if edit.swapped in seen:
                said = f"other value {n + 1} repeats one already tried ({edit.swapped!r})"
                return ObservationEdit(swapped=None, method=said)
            seen.add(edit.swapped)
            current = edit.swapped
        return edit

    async def _aswap(self, output: str, context: SwapContext) -> ObservationEdit:
        aswap = getattr(self.swapper, "aswap", None)
        if aswap is not None:
            return cast(ObservationEdit, await aswap(output, query=context.query, tool=context.tool))
        return self.swapper.swap(output, query=context.query, tool=context.tool)


def in_context(swapper: ObservationSwapper | PlainObservationSwapper) -> ObservationSwapper:
    """``swapper`` as an :class:`ObservationSwapper`: itself when it is one, else wrapped in a :class:`PlainSwapper`.

    Raises:
        ConfigurationError: ``swapper`` has neither ``swap_in_context(output, context)`` nor ``swap(output, *,
            query, tool)`` (or no ``name``).
    """
    if isinstance(swapper, ObservationSwapper):
        return swapper
    if isinstance(swapper, PlainObservationSwapper):
        return PlainSwapper(swapper)
    raise ConfigurationError(
        f"a swapper needs a name and swap_in_context(output, context) or swap(output, *, query, tool), got "
        f"{type(swapper).__name__}; see ariadne_lc.interventions.observations.ObservationSwapper"
    )


async def aswap_with(swapper: ObservationSwapper, output: str, context: SwapContext) -> ObservationEdit:
    """``swapper.aswap_in_context`` when it has one, else its sync ``swap_in_context``."""
    aswap = getattr(swapper, "aswap_in_context", None)
    if aswap is not None:
        return cast(ObservationEdit, await aswap(output, context))
    return swapper.swap_in_context(output, context)


class RuleObservationSwapper:
    """The offline swapper: the output's last number, else its last yes/no or true/false (module docstring); never a
    value the question states.

    Examples:
        >>> RuleObservationSwapper().swap("108", query="?", tool="multiply").swapped
        '140'
        >>> RuleObservationSwapper().swap("Is it open? yes", query="?", tool="check").swapped
        'Is it open? no'
    """

    name = "rule"

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        numbers = [m for m in NUMBER.finditer(output) if not held(query, m.group(0))]
        if numbers:
            m = numbers[-1]
            # shifted again where a shift lands on a value the question or the output states (108 -> 140 for "is it
            # 140?": an agent that ignores the tool and answers from the question would seem to read it)
            other = next(
                (n for n in other_values(m.group(0), shifts=64) if not held(query, n) and not held(output, n)),
                shifted(m.group(0)) or m.group(0),
            )
            return ObservationEdit(swapped=output[: m.start()] + other + output[m.end() :], method="rule:number")
        flags = [m for m in FLAG.finditer(output) if not held(query, m.group(0))]
        if flags:
            m = flags[-1]
            return ObservationEdit(
                swapped=output[: m.start()] + flip(m.group(0)) + output[m.end() :], method="rule:yes_no"
            )
        return ObservationEdit(
            swapped=None,
            method="no number or yes/no in the tool output to swap (free text needs LLMObservationSwapper)",
        )


_BARE = re.compile(rf"-?{DIGITS}|yes|no|true|false", re.I)


def placebo_output(output: str) -> ObservationEdit:
    """The output said differently with the same value: the ``observation->answer`` placebo (rule form, deterministic).

    A JSON object or array is re-serialised (indented when compact, else compact), a bare number, yes/no or JSON
    string is put in a sentence (``"32"`` -> ``"The result is 32."``), other text gets a ``"Result: "`` prefix. Every
    value stays, in its order: an agent that reads its tools answers as before.

    Examples:
        >>> placebo_output("32").swapped
        'The result is 32.'
        >>> placebo_output('{"a": 1, "b": [2, 3]}').swapped
        '{"a":1,"b":[2,3]}'
    """
    text = output.strip()
    if not text:
        return ObservationEdit(swapped=None, method="an empty tool output has no value to restate")
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict | list):
        compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        rewritten = compact if text != compact else json.dumps(value, indent=2, ensure_ascii=False)
        if rewritten == text:  # [] or {}: nothing to restate
            return ObservationEdit(swapped=None, method="an empty JSON value has no other serialisation")
        return ObservationEdit(swapped=rewritten, method="rule:json")
    if isinstance(value, str) and "\n" not in value:
        return ObservationEdit(swapped=f"The result is {value}.", method="rule:sentence")
    if _BARE.fullmatch(text):
        return ObservationEdit(swapped=f"The result is {text}.", method="rule:sentence")
    return ObservationEdit(swapped=f"Result: {output}", method="rule:prefix")


_SWAP_SYSTEM = (
    "You edit a tool's output for a test. Change the one value an answer would depend on (a number, a name, a "
    "yes/no) to a different, plausible value of the same kind. Keep everything else exactly as it is. Reply with "
    "the edited output only."
)


class LLMObservationSwapper:
    """Asks a chat model to change the key value of a free-text output; the rule swap first, where it applies.

    A reply equal to the output (after whitespace), empty, or more than twice as long is refused: it is no swap. So is
    one that no longer states a value of the output that the question states (a number, a name, a word): the
    question's own values are never swapped, by any source (:func:`~._sources.question_values_dropped`).
    """

    def __init__(self, model: BaseChatModel, *, max_tokens: int = 128) -> None:
        if not isinstance(model, BaseChatModel):
            raise ConfigurationError(f"an LLMObservationSwapper needs a chat model, got {type(model).__name__}")
        self.model = model
        self.max_tokens = max_tokens
        self.rule = RuleObservationSwapper()
        label = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        self.name = f"llm:{label}"

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        """The rule's swap of ``output``, else the model's (checked: see the class docstring)."""
        return run_sync(self._swap(output, query, tool))

    async def aswap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        """Async twin of :meth:`swap` (the model's ``ainvoke``)."""
        return await run_async(self._swap(output, query, tool))

    def _swap(self, output: str, query: str, tool: str) -> Flow[ObservationEdit]:
        ruled = self.rule.swap(output, query=query, tool=tool)
        if ruled.swapped is not None:
            return ruled
        prompt = f"Question: {query}\nTool: {tool}\nOutput:\n{output}\n\nEdited output:"
        messages = [SystemMessage(content=_SWAP_SYSTEM), HumanMessage(content=prompt)]
        reply: BaseMessage = yield Call(
            functools.partial(self.model.invoke, messages, max_tokens=self.max_tokens),
            functools.partial(self.model.ainvoke, messages, max_tokens=self.max_tokens),
        )
        text = reply.text.strip()
        if not text or " ".join(text.split()) == " ".join(output.split()) or len(text) > 2 * len(output) + 20:
            return ObservationEdit(swapped=None, method=f"llm: no swap in the reply {text[:60]!r}")
        dropped = question_values_dropped(output, text, query)
        if dropped:  # the question's own values are never swapped, by any source
            return ObservationEdit(
                swapped=None, method=f"llm: the reply changed {dropped[0]!r}, which the question states"
            )
        return ObservationEdit(swapped=text, method="llm")
