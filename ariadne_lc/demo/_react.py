"""A text ReAct protocol that a 135M-parameter chat model can follow, and its parser.

SmolLM2-135M has a chat template but no tool-calling template, so tool use is written as text::

    Thought: <the reasoning, in plain words>
    Action: <tool>[<input>]

or, to finish::

    Thought: <the reasoning>
    Final Answer: <the answer>

The prompt is rebuilt from the graph's message history on every model turn, each earlier ``AIMessage`` rendered
from its ``content`` (the thought) and its ``tool_calls`` (the action). That is what makes the demo agent
auditable: an intervention that edits a recorded thought changes the prompt of every later turn.

The parser never raises: text it cannot read becomes an ``"unparsed"`` step that the agent turns into a final
answer carrying the raw text. Against llama.cpp the same format can be enforced with a GBNF grammar
(:func:`react_grammar`), which makes every reply parse.

**The first turn thinks and acts.** An audit needs a reasoning step that more of the run follows: a model that
answers in its first turn leaves nothing to audit (SmolLM2 and Gemma did so on 2-3 of 6 demo questions). So the
first turn of every question must write a thought of at least :data:`FIRST_THOUGHT_MIN_CHARS` non-space characters
and then an action: the instructions say so, the grammar of the first turn admits nothing else, and a reply that
does not comply anyway (an unconstrained model) is asked again once with :data:`FIRST_TURN_INSTRUCTION`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

__all__ = [
    "FINAL_ANSWER_PREFIX",
    "FIRST_THOUGHT_MIN_CHARS",
    "FIRST_TURN_INSTRUCTION",
    "FORCE_FINAL_INSTRUCTION",
    "ReactStep",
    "build_react_prompt",
    "extract_final_answer",
    "first_turn_ok",
    "parse_react_reply",
    "react_grammar",
    "render_action",
    "split_final_content",
    "tool_call_args",
]

FINAL_ANSWER_PREFIX = "Final Answer:"
"""Marks the answer in a reply and at the end of the final ``AIMessage.content``."""

FORCE_FINAL_INSTRUCTION = "You have used all your tool calls. Give your Final Answer now."
"""Appended to the prompt once the turn cap is reached."""

FIRST_TURN_INSTRUCTION = (
    "Begin with a Thought that says what you need to find out and how, then an Action with a tool. "
    "Do not give the Final Answer yet."
)
"""Appended once when a question's first reply did not think and act (it answered at once, or its thought was
too short to audit)."""

FIRST_THOUGHT_MIN_CHARS = 20
"""Non-space characters the first thought needs: what ``step="auto"`` audits
(:data:`ariadne_lc.audit.DEFAULT_MIN_THOUGHT_CHARS`; a test pins that the two agree)."""

_FIRST_THOUGHT_GRAMMAR_CHARS = 32
"""The first thought's minimum length in the grammar, spaces included (a grammar counts characters, not words):
32 characters of prose hold well over 20 non-space ones; the parser checks the real count."""

_MAX_THOUGHT_CHARS = 240
_MAX_ARGUMENT_CHARS = 120
_MAX_ANSWER_CHARS = 120

_FINAL_RE = re.compile(r"final\s*answer\s*:", re.IGNORECASE)
_ACTION_RE = re.compile(r"^[ \t]*action\s*:[ \t]*(?P<spec>.*)$", re.IGNORECASE | re.MULTILINE)
_ACTION_INPUT_RE = re.compile(r"^[ \t]*action\s*input\s*:[ \t]*(?P<input>.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT_LABEL_RE = re.compile(r"^\s*thought\s*:\s*", re.IGNORECASE)
_NEXT_LABEL_RE = re.compile(r"^\s*(thought|action|observation|question)\s*:", re.IGNORECASE | re.MULTILINE)
_TOOL_NAME_RE = re.compile(r"[`*\s]*(?P<name>[A-Za-z_][\w-]*)[`*]*")
_CLOSING = {"[": "]", "(": ")"}


@dataclass(frozen=True)
class ReactStep:
    """One parsed model reply."""

    kind: Literal["action", "final", "unparsed"]
    """``action``: call ``tool``; ``final``: answer given; ``unparsed``: the reply did not follow the format."""
    thought: str
    """The reasoning text, without the ``Thought:`` label, on one line."""
    raw: str
    """The reply as the model wrote it."""
    tool: str | None = None
    """Tool name as declared (canonical case), for ``action`` steps."""
    tool_input: str | None = None
    """The text between the brackets of ``Action: tool[...]``."""
    answer: str | None = None
    """The answer for ``final`` steps; the raw reply for ``unparsed`` ones."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean_thought(text: str) -> str:
    return _one_line(_THOUGHT_LABEL_RE.sub("", text.strip(), count=1))


def _parse_action(spec: str, following: str, tool_names: Sequence[str]) -> tuple[str, str] | None:
    match = _TOOL_NAME_RE.match(spec)
    if match is None:
        return None
    name = {n.lower(): n for n in tool_names}.get(match["name"].lower())
    if name is None:
        return None
    rest = spec[match.end() :].strip()
    if rest[:1] in _CLOSING:  # name[arg] or name(arg); the last closing bracket ends it, if it was written
        close = rest.rfind(_CLOSING[rest[0]])
        arg = rest[1:close] if close > 0 else rest[1:]
    elif rest:  # name: arg, or name arg
        arg = rest.lstrip(":")
    else:  # "Action: calculator" then "Action Input: 6 * 7" (LangChain's classic layout)
        input_match = _ACTION_INPUT_RE.search(following)
        arg = input_match["input"] if input_match else ""
    arg = arg.strip().strip("`\"'").strip()
    return (name, arg) if arg else None


def parse_react_reply(text: str, tool_names: Sequence[str]) -> ReactStep:
    """Read a ``Thought / Action`` or ``Thought / Final Answer`` reply; never raises.

    Whichever of ``Action:`` and ``Final Answer:`` comes first wins, since a small model that writes an action
    often goes on to invent its observation and answer. An action naming an unknown tool is ``unparsed``.

    Args:
        text: the model's reply.
        tool_names: the tools the agent can call.

    Examples:
        >>> parse_react_reply("Thought: multiply.\\nAction: calculator[6 * 7]", ["calculator"]).tool_input
        '6 * 7'
        >>> parse_react_reply("Thought: done.\\nFinal Answer: 42", ["calculator"]).answer
        '42'
        >>> parse_react_reply("I like turtles", ["calculator"]).kind
        'unparsed'
    """
    raw = text.strip()
    final = _FINAL_RE.search(raw)
    action = _ACTION_RE.search(raw)
    if action is not None and (final is None or action.start() < final.start()):
        parsed = _parse_action(action["spec"], raw[action.end() :], tool_names)
        if parsed is not None:
            return ReactStep("action", _clean_thought(raw[: action.start()]), raw, parsed[0], parsed[1])
    if final is not None:
        rest = raw[final.end() :]
        stop = _NEXT_LABEL_RE.search(rest)
        answer = _one_line(rest[: stop.start()] if stop else rest)
        if answer:
            return ReactStep("final", _clean_thought(raw[: final.start()]), raw, answer=answer)
    return ReactStep("unparsed", "", raw, answer=_one_line(raw))


def first_turn_ok(step: ReactStep) -> bool:
    """Whether a question's first reply thinks and acts: an action after a thought of at least
    :data:`FIRST_THOUGHT_MIN_CHARS` non-space characters.

    Examples:
        >>> reply = "Thought: 6 boxes of 7 pens is 6 times 7.\\nAction: calculator[6*7]"
        >>> first_turn_ok(parse_react_reply(reply, ["calculator"]))
        True
        >>> first_turn_ok(parse_react_reply("Thought: easy.\\nFinal Answer: 42", ["calculator"]))
        False
    """
    return step.kind == "action" and len("".join(step.thought.split())) >= FIRST_THOUGHT_MIN_CHARS


def split_final_content(content: str) -> tuple[str, str | None]:
    """Split a final ``AIMessage.content`` into (thought, answer); answer is ``None`` without the marker."""
    matches = list(_FINAL_RE.finditer(content))
    if not matches:
        return content.strip(), None
    last = matches[-1]
    return content[: last.start()].strip(), content[last.end() :].strip()


def extract_final_answer(message: BaseMessage | str) -> str | None:
    """The answer of a final ``AIMessage`` (text after its last ``Final Answer:``), or ``None``.

    Examples:
        >>> extract_final_answer("The product is 42.\\nFinal Answer: 42")
        '42'
    """
    text = message if isinstance(message, str) else message.text
    return split_final_content(text)[1]


def tool_call_args(tool: BaseTool, argument: str) -> dict[str, Any]:
    """Map the bracketed text of ``Action: tool[...]`` onto the tool's arguments.

    One-argument tools (the demo's) get the text as that argument; for others the text must be a JSON object.
    """
    names = list(tool.args)
    if len(names) == 1:
        return {names[0]: argument}
    try:
        value = json.loads(argument)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return value
    return {names[0]: argument} if names else {}


def render_action(name: str, args: dict[str, Any]) -> str:
    """Write a tool call back as ``Action: name[input]`` (the inverse of :func:`tool_call_args`)."""
    if len(args) == 1:
        (value,) = args.values()
        argument = value if isinstance(value, str) else json.dumps(value)
    else:
        argument = json.dumps(args)
    return f"Action: {name}[{argument}]"


def _render_ai(message: AIMessage) -> str:
    thought = _one_line(message.text)
    if message.tool_calls:
        actions = "\n".join(render_action(call["name"], call["args"]) for call in message.tool_calls)
        return f"Thought: {thought}\n{actions}"
    thought, answer = split_final_content(message.text)
    if answer is None:  # a plain reply (e.g. from another agent or an edit that removed the marker)
        return f"Thought: {_one_line(thought)}"
    return f"Thought: {_one_line(thought)}\n{FINAL_ANSWER_PREFIX} {answer}"


def _system_prompt(tools: Sequence[BaseTool]) -> str:
    lines = [
        "You answer questions step by step. You can use these tools:",
        *(f"{t.name}[input]: {t.description}" for t in tools),
        "Reply in this format:",
        "Thought: your reasoning",
        "Action: tool[input]",
        "Your first reply to a question always has a Thought and an Action: use a tool before you answer.",
        "When you know the answer, reply:",
        "Thought: your reasoning",
        f"{FINAL_ANSWER_PREFIX} the answer",
    ]
    return "\n".join(lines)


def _few_shot(tools: Sequence[BaseTool]) -> list[BaseMessage]:
    """Worked examples as chat turns: small models copy a demonstrated exchange better than they follow rules.

    One example per demo tool that is present, and a multiple-choice question answered by letter after a
    lookup. Measured with SmolLM2-135M on 10 demo queries: with these examples it called a tool in 9 runs of
    10; with the multiple-choice example answered directly, or with the calculator example last, in 2 or 3.
    (Without any multiple-choice example it sent option letters to the calculator.)
    """
    names = {t.name for t in tools}
    shots: list[BaseMessage] = []
    if "calculator" in names:
        shots += [
            HumanMessage("Question: A box holds 4 pens. How many pens are in 3 boxes?"),
            AIMessage("Thought: 3 boxes of 4 pens is 3 times 4.\nAction: calculator[3 * 4]"),
            HumanMessage("Observation: 12"),
            AIMessage(f"Thought: The calculator says 3 boxes hold 12 pens.\n{FINAL_ANSWER_PREFIX} 12"),
        ]
    if "lookup" in names:
        shots += [
            HumanMessage("Question: How many days are in a week?"),
            AIMessage("Thought: I should look up the number of days in a week.\nAction: lookup[days in a week]"),
            HumanMessage("Observation: A week has 7 days."),
            AIMessage(f"Thought: The lookup says a week has 7 days.\n{FINAL_ANSWER_PREFIX} 7"),
        ]
    if "lookup" in names:
        shots += [
            HumanMessage("Question: Which animal is a mammal?\nA. shark\nB. dog\nC. frog"),
            AIMessage("Thought: I should look up what a mammal is.\nAction: lookup[mammal]"),
            HumanMessage("Observation: A mammal is a warm-blooded animal with hair that feeds its young with milk."),
            AIMessage(f"Thought: A dog has hair and feeds its young milk, so it is a mammal.\n{FINAL_ANSWER_PREFIX} B"),
        ]
    return shots


def build_react_prompt(
    messages: Sequence[BaseMessage],
    tools: Sequence[BaseTool],
    *,
    force_final: bool = False,
    system_prompt: str | None = None,
    first_turn_retry: bool = False,
) -> list[BaseMessage]:
    """Turn the graph's message history into the chat the model sees next.

    Human messages become ``Question: ...`` turns, each ``AIMessage`` an assistant turn rendered from its
    (possibly edited) content and tool calls, each ``ToolMessage`` an ``Observation: ...`` turn.

    Args:
        messages: the ``messages`` channel of the graph state.
        tools: the agent's tools, described in the system prompt.
        force_final: append :data:`FORCE_FINAL_INSTRUCTION` (the turn cap was reached).
        system_prompt: replaces the default instructions (the few-shot example is kept).
        first_turn_retry: append :data:`FIRST_TURN_INSTRUCTION` (the question's first reply did not think and act).
    """
    system = system_prompt or _system_prompt(tools)
    extra_system = [m.text for m in messages if isinstance(m, SystemMessage)]
    prompt: list[BaseMessage] = [SystemMessage("\n\n".join([system, *extra_system])), *_few_shot(tools)]
    for message in messages:
        if isinstance(message, HumanMessage):
            prompt.append(HumanMessage(f"Question: {message.text}"))
        elif isinstance(message, AIMessage):
            prompt.append(AIMessage(_render_ai(message)))
        elif isinstance(message, ToolMessage):
            prompt.append(HumanMessage(f"Observation: {_one_line(message.text)}"))
    if force_final:
        prompt.append(HumanMessage(FORCE_FINAL_INSTRUCTION))
    elif first_turn_retry:
        prompt.append(HumanMessage(FIRST_TURN_INSTRUCTION))
    return prompt


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)


def react_grammar(tool_names: Sequence[str], *, final_only: bool = False, first_turn: bool = False) -> str:
    """A GBNF grammar (llama.cpp) that only admits replies :func:`parse_react_reply` reads as action or final.

    Lengths are bounded so that a reply always closes before a small ``max_tokens`` runs out.

    Args:
        tool_names: the tools the action line may name.
        final_only: admit only ``Final Answer`` replies (used once the turn cap is reached).
        first_turn: admit only a substantive thought and an action (a question's first turn: see the module
            docstring); ignored with ``final_only`` or without tools.
    """
    tools = " | ".join(_gbnf_literal(f"{name}[") for name in tool_names)
    first = first_turn and not final_only and bool(tool_names)
    branches = "final" if final_only or not tool_names else "action" if first else "action | final"
    shortest = _FIRST_THOUGHT_GRAMMAR_CHARS if first else 1
    rules = [
        f'root ::= "Thought: " thought "\\n" ({branches})',
        f"thought ::= [^\\n]{{{shortest},{_MAX_THOUGHT_CHARS}}}",
    ]
    if not first:
        rules.append(f'final ::= "{FINAL_ANSWER_PREFIX} " [^\\n]{{1,{_MAX_ANSWER_CHARS}}}')
    if tool_names and not final_only:
        rules.append(f'action ::= "Action: " ({tools}) [^\\]\\n]{{1,{_MAX_ARGUMENT_CHARS}}} "]"')
    return "\n".join(rules)
