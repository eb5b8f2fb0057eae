"""Small, defensive readers of LangChain messages and LangGraph node outputs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, convert_to_messages

from ariadne_lc._thoughts import thought_parts, visible_text
from ariadne_lc.trace import ToolCall

__all__ = [
    "STRUCTURED_RESPONSE",
    "answer_text",
    "first_human_text",
    "last_ai_text",
    "messages_in",
    "response_messages",
    "structured_answer",
    "thought_of",
    "tool_call_record",
    "tool_outputs",
    "turn_input",
]

STRUCTURED_RESPONSE = "structured_response"
"""The state key where ``create_agent(..., response_format=...)`` puts the parsed response (both strategies)."""


def thought_of(message: AIMessage) -> str:
    """The thought of a model turn: its reasoning first, without tags, then the visible text.

    Reasoning models keep their chain of thought out of the visible text: in ``reasoning`` content blocks, in
    ``additional_kwargs["reasoning_content"]`` or in a leading ``<think>`` block (:mod:`ariadne_lc._thoughts`).
    Both belong to the thought.
    """
    return thought_parts(message).thought


def messages_in(output: Any) -> Iterator[BaseMessage]:
    """The messages a node wrote: from a state dict, a ``Command`` or a list of either."""
    if isinstance(output, BaseMessage):
        yield output
        return
    if isinstance(output, dict):
        value = output.get("messages")
        if isinstance(value, BaseMessage):
            yield value
        elif isinstance(value, list | tuple):
            yield from (m for m in value if isinstance(m, BaseMessage))
        return
    update = getattr(output, "update", None)  # langgraph.types.Command
    if update is not None:
        yield from messages_in(update)
        return
    if isinstance(output, list | tuple):
        for item in output:
            yield from messages_in(item)


def _human_text(item: Any) -> str | None:
    """The text of one input message if it is a human one, without building message objects."""
    if isinstance(item, BaseMessage):
        return item.text if isinstance(item, HumanMessage) else None
    if isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str):
        role, content = item
    elif isinstance(item, dict) and "role" in item:
        role, content = item["role"], item.get("content", "")
    elif isinstance(item, str):
        return item
    else:
        return None
    if role not in ("user", "human"):
        return None
    if isinstance(content, str):
        return content
    try:  # content blocks
        return convert_to_messages([(role, content)])[0].text
    except (ValueError, TypeError, NotImplementedError):
        return None


def first_human_text(inputs: Any) -> str:
    """The first human message of a graph input, in any of the shapes LangChain accepts."""
    raw: Iterable[Any]
    if isinstance(inputs, dict):
        value = inputs.get("messages", ())
        raw = [value] if isinstance(value, str | BaseMessage) else value
    elif isinstance(inputs, list | tuple):
        raw = inputs
    else:
        return ""
    if not isinstance(raw, Iterable):
        return ""
    for item in raw:
        text = _human_text(item)
        if text is not None:
            return text
    return ""


def last_ai_text(messages: Iterable[BaseMessage]) -> str | None:
    """The text of the last AI message without its ``<think>`` block, the run's final answer."""
    last = None
    for m in messages:
        if isinstance(m, AIMessage):
            last = m
    return None if last is None else visible_text(last)


def structured_answer(values: Any) -> str | None:
    """A final state's structured response as JSON text, or ``None`` when it has none.

    ``create_agent(model, tools, response_format=Schema)`` ends a run with the parsed response in
    ``structured_response``. With the tool strategy the last model turn is only a tool call and has
    no text, so the last AI message is no answer; with the provider strategy its text is the raw
    JSON. Both sides of an audit read the answer here, the same way: the response as JSON (a pydantic
    model's fields in their declared order, a dataclass's, a dict's), so that the recorded and the
    replayed answers compare like for like.
    """
    if not isinstance(values, dict):
        return None
    response = values.get(STRUCTURED_RESPONSE)
    if response is None:
        return None
    if hasattr(response, "model_dump"):
        try:
            response = response.model_dump(mode="json")
        except Exception:  # a model that cannot dump itself: its text is still an answer
            return str(response)
    elif dataclasses.is_dataclass(response) and not isinstance(response, type):
        response = dataclasses.asdict(response)
    return json.dumps(response, ensure_ascii=False, default=str)


def answer_text(values: Any, messages: Iterable[BaseMessage]) -> str | None:
    """The answer of a run that ended in ``values`` (a final state, or a root run's output) with the
    new ``messages``: its structured response when it has one (:func:`structured_answer`), else the
    text of the last AI message. The recorder and the replay both read answers with this function."""
    structured = structured_answer(values)
    return structured if structured is not None else last_ai_text(messages)


def tool_outputs(messages: Iterable[BaseMessage]) -> dict[str, ToolMessage]:
    """Tool messages by the id of the call they answer."""
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def tool_call_record(call: Any, outputs: dict[str, ToolMessage]) -> ToolCall:
    """A model's tool call (a ``ToolCall`` dict) joined with the tool message that answered it."""
    call_id = call.get("id")
    message = outputs.get(call_id) if call_id else None
    return ToolCall(
        id=call_id,
        name=call.get("name", ""),
        args=dict(call.get("args") or {}),
        output=None if message is None else message.text,
        status=None if message is None else message.status,
    )


def turn_input(messages: list[BaseMessage]) -> list[BaseMessage]:
    """This turn's input: the messages after the last model or tool message of the thread; for an agent handed the
    conversation by another (a swarm's, a supervisor's), whose turn starts after a tool message, the last human
    message it was handed, the question it works on."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage | ToolMessage):
            new = messages[index + 1 :]
            asked = [m for m in messages[:index] if isinstance(m, HumanMessage)][-1:]
            return new if any(isinstance(m, HumanMessage) for m in new) else [*asked, *new]
    return messages


def response_messages(response: Any) -> list[BaseMessage]:
    """What the model node writes for a wrap_model_call result (ModelResponse, AIMessage or extended)."""
    if isinstance(response, BaseMessage):
        return [response]
    inner = getattr(response, "model_response", None)  # ExtendedModelResponse
    if inner is not None:
        command = getattr(response, "command", None)
        return [*response_messages(inner), *(messages_in(command) if command is not None else ())]
    result = getattr(response, "result", None)
    return [m for m in result if isinstance(m, BaseMessage)] if isinstance(result, list) else []
