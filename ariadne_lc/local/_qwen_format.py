"""Qwen2.5's chat format with native tool calls: OpenAI chat messages in, a prompt out; a completion in, OpenAI
``tool_calls`` out. Pure functions, no llama.cpp: the server's chat handler (:mod:`ariadne_lc.local._qwen_handler`)
calls them, and tests check them without a model.

Why our own: llama-cpp-python's ``chatml-function-calling`` format made Qwen write ``functions.multiply:`` as
text, and the GGUF's own jinja template (llama-cpp-python's default) returned the call as JSON text in ``content``.
Rendered as Qwen's template renders it, the model writes ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
which is parsed here into the OpenAI shape that ``ChatOpenAI`` and ``create_agent`` expect.

The prompt is what the template in the GGUF file renders (checked against it by hand, kept here in Python so that
it is typed and testable):

- the first system message (or Qwen's default one) opens the prompt; with tools, the ``# Tools`` block follows,
  one tool per line as JSON inside ``<tools></tools>``;
- assistant turns with tool calls render each call as
  ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``;
- consecutive tool results render as ``<tool_response>`` blocks inside one user turn.

What Qwen2.5-Coder-0.5B writes is read as a call in either of two forms: the template's ``<tool_call>`` blocks, or,
when there is none, a bare JSON object ``{"name": ..., "arguments": {...}}`` at the start of a line (optionally in a
code fence), which is what the 0.5B model writes for most requests here (measured: the hotel question with an ``add``
and a ``multiply`` tool, with and without a system message, gave a bare object every time). An object of that exact
shape is a call whatever its name, so that an agent gets an "unknown tool" observation rather than a JSON answer.

Prefill: when the LAST message is an assistant message without tool calls, it is continued, not answered: the
prompt ends with ``<|im_start|>assistant\\n<its text>`` and no ``<|im_end|>``. With tools listed, a line break is
added after a prefill that does not end in white space, because Qwen's template always separates an assistant's
text from its first call by one: without it the 0.5B model ended its turn at once after a complete sentence
(measured: "..., so I should add 12 and 9." continued with nothing; with the line break, with a call). The reply's
``content`` is the prefill followed by the continuation's text before its first call (the whole thought, as a
reader of the transcript sees it), and tool calls are parsed from the continuation only. ``tool_choice``
``"required"`` or a named function is honoured the same way: the prompt is made to end inside
``<tool_call>\\n{"name": "``, so the model can only complete a call.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

__all__ = [
    "DEFAULT_SYSTEM",
    "QWEN_CHAT_FORMAT",
    "QwenPrompt",
    "QwenReply",
    "call_id",
    "parse_completion",
    "render_prompt",
]

QWEN_CHAT_FORMAT = "ariadne-qwen-tools"
"""The server's ``--chat_format`` name of the handler that uses this format (:mod:`ariadne_lc.local._qwen_handler`)."""

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
"""The system text Qwen's template uses when the conversation has none."""

_TOOLS_INTRO = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)
_CALL_OPEN = "<tool_call>"
_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_BARE_START = re.compile(r"^[ \t]*(?:```[a-z]*[ \t]*\n[ \t]*)?(\{)", re.MULTILINE)
_FENCE_TAIL = re.compile(r"\s*```[a-z]*\s*\Z")
_DECODER = json.JSONDecoder()


class QwenPrompt(NamedTuple):
    """A rendered request."""

    text: str
    """The prompt, special tokens as text (tokenize with ``special=True``)."""
    prefill: str
    """The trailing assistant message's text that the reply continues, with the line break added before a call
    when tools are listed ('' when the model starts a new turn)."""
    forced: str
    """Text the prompt ends with after the prefill to force a tool call ('' unless ``tool_choice`` forces one)."""
    tool_names: tuple[str, ...] = ()
    """The tools listed in the prompt: bare JSON calls are only read when there are some."""


class QwenReply(NamedTuple):
    """A completion read as an assistant message."""

    content: str | None
    """Prefill plus the text before the first tool call, trailing white space removed; ``None`` when empty."""
    tool_calls: list[dict[str, Any]]
    """OpenAI ``tool_calls`` (``id``, ``type``, ``function.name``, ``function.arguments`` as a JSON string)."""


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))


def _arguments(raw: Any) -> Any:
    """Arguments as the template renders them (an object, not a JSON string inside JSON)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def _call_text(call: Mapping[str, Any]) -> str:
    function = call.get("function", call)
    arguments = json.dumps(_arguments(function.get("arguments", {})), ensure_ascii=False)
    return f'\n<tool_call>\n{{"name": "{function.get("name", "")}", "arguments": {arguments}}}\n</tool_call>'


def _forced_call(tool_choice: Any, tools: Sequence[Mapping[str, Any]]) -> str:
    if not tools or tool_choice in (None, "auto", "none"):
        return ""
    if isinstance(tool_choice, Mapping):
        name = tool_choice.get("function", {}).get("name", "")
        return f'<tool_call>\n{{"name": "{name}", "arguments": '
    return '<tool_call>\n{"name": "'  # "required": any tool


def render_prompt(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Any = None,
) -> QwenPrompt:
    """Render OpenAI chat messages (and tools) as Qwen2.5's chat template does, with prefill and forced calls.

    Args:
        messages: OpenAI chat-completion messages (``role``, ``content``, ``tool_calls``).
        tools: OpenAI tool definitions (``{"type": "function", "function": {...}}``); listed in the system turn.
        tool_choice: ``"auto"``/``None`` (the model decides), ``"none"`` (tools are not listed), ``"required"``
            or ``{"type": "function", "function": {"name": ...}}`` (the prompt ends inside a tool call).

    Examples:
        >>> render_prompt([{"role": "user", "content": "Hi"}]).text.endswith("<|im_start|>assistant\\n")
        True
        >>> render_prompt([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]).prefill
        'Hello'
    """
    listed = list(tools or ()) if tool_choice != "none" else []
    messages = list(messages)
    prefill_message = None
    if messages and messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls"):
        prefill_message = messages.pop()
    has_system = bool(messages) and messages[0].get("role") == "system"
    system = _text(messages[0].get("content")) if has_system else DEFAULT_SYSTEM
    parts = ["<|im_start|>system\n", system]
    if listed:
        parts.append(_TOOLS_INTRO)
        parts += ["\n" + json.dumps(dict(tool), ensure_ascii=False) for tool in listed]
        parts.append(_TOOLS_OUTRO)
    parts.append("<|im_end|>\n")
    for index, message in enumerate(messages):
        role = message.get("role")
        if index == 0 and has_system:
            continue
        if role == "tool":
            if index == 0 or messages[index - 1].get("role") != "tool":
                parts.append("<|im_start|>user")
            parts.append(f"\n<tool_response>\n{_text(message.get('content'))}\n</tool_response>")
            if index == len(messages) - 1 or messages[index + 1].get("role") != "tool":
                parts.append("<|im_end|>\n")
        elif role == "assistant" and message.get("tool_calls"):
            content = _text(message.get("content"))
            parts.append("<|im_start|>assistant" + ("\n" + content if content else ""))
            parts += [_call_text(call) for call in message["tool_calls"]]
            parts.append("<|im_end|>\n")
        else:  # user, assistant without calls, a later system message (function messages read as user turns)
            role = "user" if role == "function" else role
            parts.append(f"<|im_start|>{role}\n{_text(message.get('content'))}<|im_end|>\n")
    prefill = _text(prefill_message.get("content")) if prefill_message is not None else ""
    if prefill and listed and not prefill[-1].isspace():
        prefill += "\n"  # the template's separator between an assistant's text and its first call
    forced = _forced_call(tool_choice, listed)
    parts.append("<|im_start|>assistant\n" + prefill + forced)
    names = tuple(str(tool.get("function", {}).get("name", "")) for tool in listed)
    return QwenPrompt("".join(parts), prefill, forced, names)


def _as_call(value: Any) -> tuple[str, str] | None:
    """``(name, arguments as a JSON string)`` when ``value`` is ``{"name": str, "arguments": object}``."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    arguments = _arguments(value.get("arguments", {}))
    if not isinstance(arguments, dict):
        return None
    return value["name"], json.dumps(arguments, ensure_ascii=False)


def _tagged_calls(text: str) -> list[tuple[int, tuple[str, str]]]:
    found = []
    for match in _CALL_BLOCK.finditer(text):
        try:
            value, _ = _DECODER.raw_decode(match.group(1).strip())
        except json.JSONDecodeError:
            continue
        call = _as_call(value)
        if call is not None:
            found.append((match.start(), call))
    return found


def _bare_calls(text: str) -> list[tuple[int, tuple[str, str]]]:
    found: list[tuple[int, tuple[str, str]]] = []
    done = 0
    for match in _BARE_START.finditer(text):
        if match.start(1) < done:
            continue
        try:
            value, end = _DECODER.raw_decode(text, match.start(1))
        except json.JSONDecodeError:
            continue
        call = _as_call(value) if isinstance(value, dict) and set(value) <= {"name", "arguments"} else None
        if call is not None:
            found.append((match.start(), call))
            done = end
    return found


def call_id(prompt: str, generated: str, index: int) -> str:
    """A tool-call id that depends on nothing but the request and the reply, so identical replies are identical."""
    digest = hashlib.sha256(f"{prompt}\x00{generated}\x00{index}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def parse_completion(prompt: QwenPrompt, completion: str) -> QwenReply:
    """Read what the model wrote after ``prompt`` as an assistant message with OpenAI tool calls.

    ``<tool_call>`` blocks are read first; without a well-formed one, bare ``{"name": ..., "arguments": {...}}``
    objects at the start of a line are (when tools were listed). Blocks that are not a JSON object with a ``name``
    and object ``arguments`` are not calls; when there is no call, the whole text is the content (the agent then
    sees what the model wrote).

    Examples:
        >>> p = render_prompt([{"role": "user", "content": "2*3?"}], tools=[{"type": "function", "function": {}}])
        >>> text = 'I multiply.\\n<tool_call>\\n{"name": "mul", "arguments": {"a": 2}}\\n</tool_call>'
        >>> reply = parse_completion(p, text)
        >>> reply.content, reply.tool_calls[0]["function"]
        ('I multiply.', {'name': 'mul', 'arguments': '{"a": 2}'})
    """
    generated = prompt.forced + completion
    found = _tagged_calls(generated) or (_bare_calls(generated) if prompt.tool_names else [])
    calls = [
        {"id": call_id(prompt.text, generated, i), "type": "function", "function": {"name": name, "arguments": args}}
        for i, (_, (name, args)) in enumerate(found)
    ]
    before = generated[: found[0][0]] if found else generated
    content = _FENCE_TAIL.sub("", prompt.prefill + before).rstrip() if found else (prompt.prefill + before).rstrip()
    return QwenReply(content or None, calls)
