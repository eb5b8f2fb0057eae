"""Where the scripted reasoning models of :mod:`ariadne_lc.testing` write their thoughts, and how they read them back.

A reasoning model reads its own earlier reasoning from where it wrote it: a thought moved elsewhere (into the text,
out of its tags) is no thought of its own to it. So the scripted models read strictly from their place, and an audit
that substitutes an edited thought anywhere else leaves them on their recorded plan, which a test sees.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.messages import AIMessage

__all__ = ["ThoughtPlace", "carried", "carry"]

ThoughtPlace = Literal["text", "reasoning_content", "think"]
"""The visible text; ``additional_kwargs["reasoning_content"]`` (DeepSeek, Ollama); a ``<think>`` block (Qwen3)."""

_THINK = re.compile(r"<think>(.*?)</think>", re.S)


def carry(place: ThoughtPlace, reasoning: str, visible: str = "", **fields: Any) -> AIMessage:
    """A model turn with ``reasoning`` in ``place`` and ``visible`` as its text (``text``: the two, one line apart)."""
    if place == "reasoning_content":
        return AIMessage(content=visible, additional_kwargs={"reasoning_content": reasoning}, **fields)
    if place == "think":
        return AIMessage(content=f"<think>\n{reasoning}\n</think>\n\n{visible}", **fields)
    return AIMessage(content="\n".join(p for p in (reasoning, visible) if p), **fields)


def carried(place: ThoughtPlace, message: AIMessage) -> str:
    """The reasoning of ``message`` as the model reads it back: only from ``place`` ('' when it is not there)."""
    if place == "reasoning_content":
        value = message.additional_kwargs.get("reasoning_content")
        return value if isinstance(value, str) else ""
    if place == "think":
        found = _THINK.search(message.text)
        return "" if found is None else found.group(1).strip()
    return message.text
