"""What a model call was given, as digests (:class:`~ariadne_lc.trace.ModelInput`): kept per step by the recorder,
captured again by every replay, and compared (the replay invariant, :mod:`ariadne_lc.replay._inputs`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ariadne_lc.trace import MessageDigest, ModelInput

__all__ = ["model_input", "tool_names"]


def _digest(message: BaseMessage) -> str:
    parts: list[Any] = [message.type, message.content]
    if isinstance(message, AIMessage):
        parts.append([[c["name"], c.get("args")] for c in message.tool_calls])
        parts.append(message.additional_kwargs.get("reasoning_content"))
    if isinstance(message, ToolMessage):
        parts.append(message.tool_call_id)
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def tool_names(tools: Iterable[Any] | None) -> tuple[str, ...] | None:
    """Sorted names of bound tools: ``BaseTool``s, OpenAI-style dicts, or anything with a ``name``."""
    if tools is None:
        return None
    names = []
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
        else:
            name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
        names.append(str(name))
    return tuple(sorted(names))


def model_input(messages: Sequence[BaseMessage], tools: Iterable[Any] | None, source: str) -> ModelInput:
    """The digests of one model call's input (module docstring)."""
    return ModelInput(
        messages=tuple(str(MessageDigest(m.type, m.id or "", _digest(m))) for m in messages),
        tools=tool_names(tools),
        source=source,
    )
