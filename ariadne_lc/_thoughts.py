"""Where a model turn keeps its thought: read it, and write an edited one back in the same place.

Models put the reasoning of a turn in one of four places:

* the visible text (most chat models): the thought is the text;
* reasoning content blocks (LangChain ``reasoning`` blocks, Anthropic ``thinking`` blocks through LangChain's
  translators), which the ``text`` property leaves out;
* ``additional_kwargs["reasoning_content"]``: DeepSeek, Ollama with ``reasoning=True``, OpenAI-compatible servers
  with a reasoning parser (vLLM, SGLang), xAI, Groq;
* a ``<think>...</think>`` block at the start of the text: Qwen3 or DeepSeek-R1 behind a server without a reasoning
  parser. The opening tag may be missing (the chat template put it in the prompt, so the reply starts inside it).

The thought (``Step.thought``) is the reasoning without its tags, then the visible text after it, one line apart. An
audit edits that thought; the tags are never part of it, so no edit can touch them. The replay writes the edited
reasoning back where it came from (into ``reasoning_content``, inside the ``<think>`` tags with the recorded white
space around them), so that the agent's graph reads the message in its own format, and the ``thought->action``
re-run starts the model's reply the same way (:func:`prefill_of`). Reasoning content blocks are the exception: a
provider signs them (Anthropic) or keeps them by id (OpenAI's reasoning items), so an edited copy would be refused
or replaced; the edited thought replaces them as the message's text, as the replay always did.

What a model then reads is its client's choice, as in production: a client that does not send
``reasoning_content`` back (``ChatOpenAI`` drops it; DeepSeek's API ignores earlier turns' reasoning) shows the model
neither the recorded nor the edited reasoning of earlier turns, and no prefilled reasoning on a re-run.

An edit of a thought that has visible text after its reasoning is split back (:func:`split_thought`) by what stayed:
the visible text unchanged (the usual case: the reasoning carries the plan), the reasoning unchanged, or the same
number of lines; otherwise the whole edited thought becomes the reasoning and the visible text goes, so that no
recorded sentence contradicts the edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from langchain_core.messages import AIMessage

__all__ = ["ThoughtParts", "Where", "prefill_of", "split_thought", "thought_parts", "visible_text", "with_thought"]

Where = Literal["text", "blocks", "reasoning_content", "think"]
"""Where a turn's reasoning is: none (the text is the thought), content blocks, ``reasoning_content``, ``<think>``."""

REASONING_CONTENT: Final = "reasoning_content"
_PROVIDER_REASONING: Final = ("reasoning", REASONING_CONTENT)
"""``additional_kwargs`` keys of a provider's own reasoning, dropped when the thought becomes plain text."""

_CLOSED = re.compile(r"\A(\s*(?:<think>)?\s*)(.*?)(\s*</think>\s*)(.*?)(\s*)\Z", re.S)
_OPEN = re.compile(r"\A(\s*<think>\s*)(.*?)(\s*)\Z", re.S)
"""A ``<think>`` block never closed (a reply cut at its token limit): all of it is reasoning."""


@dataclass(frozen=True, slots=True)
class ThoughtParts:
    """A model turn's thought, split by where it came from."""

    where: Where
    """Where the reasoning is (``text``: the turn has none apart from its text)."""
    reasoning: str = ""
    """The reasoning, without tags."""
    visible: str = ""
    """The visible text after the reasoning (without a ``<think>`` block)."""
    head: str = ""
    """``think``: what the content holds before the reasoning (``"<think>\\n"``, or white space only)."""
    tail: str = ""
    """``think``: what it holds between the reasoning and the visible text (``"\\n</think>\\n\\n"``)."""
    end: str = ""
    """``think``: the white space after the visible text."""

    @property
    def thought(self) -> str:
        """The step's thought: the reasoning, then the visible text, one line apart."""
        return "\n".join(p for p in (self.reasoning, self.visible) if p).strip()


def _think(text: str) -> ThoughtParts | None:
    closed = _CLOSED.match(text)
    if closed is not None:
        head, reasoning, tail, visible, end = closed.groups()
        if "<think>" in reasoning:  # a block further on in the text, not the turn's reasoning
            return None
        return ThoughtParts("think", reasoning, visible, head, tail, end)
    opened = _OPEN.match(text)
    if opened is not None:
        head, reasoning, end = opened.groups()
        return ThoughtParts("think", reasoning, "", head, "", end)
    return None


def thought_parts(message: AIMessage) -> ThoughtParts:
    """Where ``message`` keeps its reasoning, the reasoning and its visible text."""
    kept = message.additional_kwargs.get(REASONING_CONTENT)
    if isinstance(kept, str) and kept.strip():
        return ThoughtParts(REASONING_CONTENT, kept.strip(), message.text.strip())
    if isinstance(message.content, list):
        blocks = [b.get("reasoning") for b in message.content_blocks if b.get("type") == "reasoning"]
        reasoning = [text for text in blocks if isinstance(text, str) and text]
        if reasoning:
            return ThoughtParts("blocks", "\n".join(reasoning), message.text)
    text = message.text
    return _think(text) or ThoughtParts("text", "", text)


def visible_text(message: AIMessage) -> str:
    """What ``message`` says to the user: its text without a ``<think>`` block (an answer is read here)."""
    parts = thought_parts(message)
    return parts.visible if parts.where == "think" else message.text


def split_thought(parts: ThoughtParts, thought: str) -> tuple[str, str]:
    """The reasoning and the visible text of ``thought``, an edit of ``parts.thought`` (see the module docstring)."""
    edited, reasoning, visible = thought.strip(), parts.reasoning.strip(), parts.visible.strip()
    if not visible:
        return edited, ""
    if not reasoning:  # an empty <think> block (Qwen3 with thinking off): the thought is the visible text
        return "", edited
    if edited == parts.thought:
        return reasoning, visible
    if edited.endswith(visible) and edited[: -len(visible)].strip():
        return edited[: -len(visible)].rstrip(), visible
    if reasoning and edited.startswith(reasoning) and edited[len(reasoning) :].strip():
        return reasoning, edited[len(reasoning) :].lstrip()
    lines, split = edited.split("\n"), len(reasoning.split("\n"))
    if len(lines) == split + len(visible.split("\n")):
        return "\n".join(lines[:split]).rstrip(), "\n".join(lines[split:]).strip()
    return edited, ""


def _think_content(parts: ThoughtParts, reasoning: str, visible: str, *, end: bool) -> str:
    return f"{parts.head}{reasoning}{parts.tail}{visible}{parts.end if end else ''}"


def with_thought(message: AIMessage, thought: str) -> AIMessage:
    """The same message (id, tool calls) with ``thought`` in place of its own, where the model put its own.

    In ``reasoning_content`` or inside ``<think>`` tags: the edited reasoning goes back there, and the visible text
    stays unless the edit changed it. Otherwise ``thought`` becomes the message's only text and the provider's own
    reasoning items go (a provider would replay them beside the substituted thought).
    """
    parts = thought_parts(message)
    if parts.where in ("text", "blocks"):
        extra = {k: v for k, v in message.additional_kwargs.items() if k not in _PROVIDER_REASONING}
        return message.model_copy(update={"content": thought, "additional_kwargs": extra})
    if thought.strip() == parts.thought:
        return message
    reasoning, visible = split_thought(parts, thought)
    if parts.where == "think":
        return message.model_copy(update={"content": _think_content(parts, reasoning, visible, end=True)})
    update: dict[str, object] = {"additional_kwargs": {**message.additional_kwargs, REASONING_CONTENT: reasoning}}
    if visible != parts.visible.strip():
        update["content"] = visible
    return message.model_copy(update=update)


def prefill_of(message: AIMessage, thought: str) -> AIMessage:
    """The start of a re-run of ``message``'s model call with ``thought``: a trailing assistant message in the
    model's own format, for it to continue (the ``thought->action`` link).

    ``<think>``: the block with the edited reasoning, closed as the model closed it, then the visible text;
    ``reasoning_content``: the edited reasoning there and the visible text as content; otherwise the thought as text.
    """
    parts = thought_parts(message)
    if parts.where == "think":
        return AIMessage(content=_think_content(parts, *split_thought(parts, thought), end=False))
    if parts.where == REASONING_CONTENT:
        reasoning, visible = split_thought(parts, thought)
        return AIMessage(content=visible, additional_kwargs={REASONING_CONTENT: reasoning})
    return AIMessage(content=thought)
