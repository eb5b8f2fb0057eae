"""Observation swaps: the ``observation->answer`` link's intervention (docs/method.md#links).

``observation_swap`` replaces the value in a step's tool output that an answer could depend on with a plausible
other one (the seed's output_i), so that the audit can ask whether the answer reads its tools: a faithful agent's
answer moves to the new value, one that answers from the question alone stays. One output is changed at a time.

The rule form (:class:`RuleObservationSwapper`, offline, deterministic) changes the last number of the output (same
format and magnitude: 108 -> 140, 3.5 -> 4.5), else the last yes/no or true/false (flipped). Free text without either
(a name, a sentence) needs a model: :class:`LLMObservationSwapper` asks one for the same text with the key value
changed, and refuses a reply that is the output itself or no single-value edit of it.

The link's controls, as for thoughts (planned beside a swap, one per output): the ``rerun`` serves the output as
recorded (the answer's own replay variability), the ``paraphrase`` placebo serves it said differently with the same
value (:func:`placebo_output`: a JSON value re-serialised, a bare value put in a sentence, other text prefixed).
"""

from __future__ import annotations

import json
import re
from typing import Final, Literal, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict

from ariadne_lc.errors import ConfigurationError

__all__ = [
    "OBSERVATION_SWAP",
    "LLMObservationSwapper",
    "ObservationEdit",
    "ObservationSwapper",
    "RuleObservationSwapper",
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


@runtime_checkable
class ObservationSwapper(Protocol):
    """Changes the value a tool output gives (may also define ``async def aswap`` with the same signature)."""

    name: str

    def swap(self, output: str, *, query: str, tool: str) -> ObservationEdit: ...


_NUMBER = re.compile(r"(?<![\w.])(-?)(\d[\d,]*)(?:\.(\d+))?(?![\w])")
_YES_NO = re.compile(r"\b(yes|no|true|false|Yes|No|True|False|YES|NO|TRUE|FALSE)\b")
_FLIPS = {"yes": "no", "no": "yes", "true": "false", "false": "true"}


def _other_number(sign: str, whole: str, decimals: str | None) -> str:
    value = float(whole.replace(",", "") + ("." + decimals if decimals else ""))
    step = max(abs(value) * 0.3, 1.0 if not decimals else 10 ** -len(decimals))
    new = value + step
    if decimals:
        text = f"{new:.{len(decimals)}f}"
    else:
        text = str(round(new))
        if "," in whole:
            text = f"{round(new):,}"
    return sign + text


class RuleObservationSwapper:
    """The offline swapper: the output's last number, else its last yes/no or true/false (module docstring).

    Examples:
        >>> RuleObservationSwapper().swap("108", query="?", tool="multiply").swapped
        '140'
        >>> RuleObservationSwapper().swap("Is it open? yes", query="?", tool="check").swapped
        'Is it open? no'
    """

    name = "rule"

    def swap(self, output: str, *, query: str = "", tool: str = "") -> ObservationEdit:
        numbers = [m for m in _NUMBER.finditer(output) if not _in_question(query, m.group(0))]
        if numbers:
            m = numbers[-1]
            other = _other_number(m.group(1), m.group(2), m.group(3))
            return ObservationEdit(swapped=output[: m.start()] + other + output[m.end() :], method="rule:number")
        flags = [m for m in _YES_NO.finditer(output) if not _in_question(query, m.group(0))]
        if flags:
            m = flags[-1]
            word = _FLIPS[m.group(1).lower()]
            word = word.upper() if m.group(1).isupper() else word.capitalize() if m.group(1)[0].isupper() else word
            return ObservationEdit(swapped=output[: m.start()] + word + output[m.end() :], method="rule:yes_no")
        return ObservationEdit(
            swapped=None,
            method="no number or yes/no in the tool output to swap (free text needs LLMObservationSwapper)",
        )


_BARE = re.compile(r"-?\d[\d,]*(?:\.\d+)?|yes|no|true|false", re.I)


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


_BARE_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_WORD_VALUE = re.compile(r"\b(?:yes|no|true|false)\b", re.I)


def _stated_values(text: str) -> list[str]:
    """The numbers and yes/no words ``text`` states."""
    return [m.group(0) for m in (*_BARE_NUMBER.finditer(text), *_WORD_VALUE.finditer(text))]


def _in_question(query: str, value: str) -> bool:
    """Whether ``query`` states ``value``: a number as a number (``1,200`` is ``1200``), a word at word boundaries."""
    if _BARE_NUMBER.fullmatch(value.strip()):
        want = value.strip().replace(",", "")
        return any(m.group(0).replace(",", "") == want for m in _BARE_NUMBER.finditer(query))
    return re.search(r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)", query, re.I) is not None


class LLMObservationSwapper:
    """Asks a chat model to change the key value of a free-text output; the rule swap first, where it applies.

    A reply equal to the output (after whitespace), empty, or more than twice as long is refused: it is no swap.
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
        ruled = self.rule.swap(output, query=query, tool=tool)
        if ruled.swapped is not None:
            return ruled
        prompt = f"Question: {query}\nTool: {tool}\nOutput:\n{output}\n\nEdited output:"
        reply = self.model.invoke(
            [SystemMessage(content=_SWAP_SYSTEM), HumanMessage(content=prompt)], max_tokens=self.max_tokens
        )
        text = reply.text.strip()
        if not text or " ".join(text.split()) == " ".join(output.split()) or len(text) > 2 * len(output) + 20:
            return ObservationEdit(swapped=None, method=f"llm: no swap in the reply {text[:60]!r}")
        kept = [v for v in _stated_values(query) if _in_question(output, v) and not _in_question(text, v)]
        if kept:  # the question's own values are never swapped, by any source
            said = f"llm: the reply changed {kept[0]!r}, which the question states"
            return ObservationEdit(swapped=None, method=said)
        return ObservationEdit(swapped=text, method="llm")
