"""A chat model as the ``thought->action`` reader: asked for the call a thought says to make, as JSON.

The model gets the tools (name, description, arguments), the question and the thought, and is asked which tool
call the thought says comes next, with only the argument values the thought states. A reply with no JSON object,
or with a tool that does not exist, is the reader failing, not the thought committing to nothing: the offline
:class:`~ariadne_lc.interventions.actions.RuleActionReader` reads the thought instead, and the result says so
(``reader="rule (fallback: model:<name> unreadable)"``). :func:`parse_action_reply` alone gives no action with the
reason, never a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from ariadne_lc._twin import Call, Flow, run_async, run_sync
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.interventions.actions import ImpliedAction, RuleActionReader, ToolSpec, normalise_value

__all__ = ["DEFAULT_ACTION_READER_MAX_TOKENS", "ModelActionReader", "parse_action_reply"]

DEFAULT_ACTION_READER_MAX_TOKENS = 64
"""One JSON call is short: a longer reply is cut."""

_SYSTEM = (
    "You read another assistant's reasoning and say which tool call it says to make next. Use only the reasoning, "
    'even if you think it is wrong. Reply with one JSON object only: {"name": <tool name>, "arguments": {...}} '
    'with only the argument values the reasoning states; {"not": <tool name>} if it says not to call that tool; '
    '{"name": null} if it says to call no tool.'
)
_OBJECT = re.compile(r"\{.*\}", re.S)


def _prompt(query: str, thought: str, tools: Sequence[ToolSpec]) -> list[BaseMessage]:
    listed = "\n".join(f"- {t.name}({', '.join(t.args)}): {t.description.strip()[:120]}" for t in tools)
    body = f"Tools:\n{listed}\n\nQuestion:\n{query.strip()}\n\nReasoning:\n{thought.strip()}\n\nThe call:"
    return [SystemMessage(content=_SYSTEM), HumanMessage(content=body)]


def parse_action_reply(reply: str, tools: Sequence[ToolSpec], reader: str) -> ImpliedAction:
    """The action in a reader's reply (module docstring); no action, with the reason, when it holds none."""
    found = _OBJECT.search(reply)
    snippet = " ".join(reply.split())[:60]
    if found is None:
        return ImpliedAction(reader=reader, reason=f"the reader's reply held no JSON object: {snippet!r}")
    try:
        data: Any = json.loads(found.group(0))
    except json.JSONDecodeError:
        return ImpliedAction(reader=reader, reason=f"the reader's reply is no valid JSON: {snippet!r}")
    if not isinstance(data, dict):
        return ImpliedAction(reader=reader, reason=f"the reader's reply is no JSON object: {snippet!r}")
    names = {t.name for t in tools}
    if "not" in data:
        tool = data["not"]
        if tool not in names:
            return ImpliedAction(reader=reader, reason=f"the reader named no known tool: {snippet!r}")
        return ImpliedAction(tool=tool, negated=True, reader=reader)
    tool = data.get("name")
    if tool is None and "name" in data:
        return ImpliedAction(no_call=True, reader=reader)
    if tool not in names:
        return ImpliedAction(reader=reader, reason=f"the reader named no known tool: {snippet!r}")
    arguments = data.get("arguments")
    values = tuple(normalise_value(v) for v in arguments.values()) if isinstance(arguments, dict) else ()
    return ImpliedAction(tool=tool, values=values, reader=reader)


class ModelActionReader:
    """Asks a chat model (the agent's own, when the auditor has it) for the call a thought says to make.

    Args:
        model: Any LangChain chat model.
        max_tokens: Cap on the reply.
        name: How results name this reader (default ``model:<the model's name>``).
    """

    def __init__(
        self, model: BaseChatModel, *, max_tokens: int = DEFAULT_ACTION_READER_MAX_TOKENS, name: str | None = None
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise ConfigurationError(f"a ModelActionReader needs a LangChain chat model, got {type(model).__name__}")
        if max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be at least 1, got {max_tokens}")
        self.model = model
        self.max_tokens = max_tokens
        label = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        self.name = name or f"model:{label}"

    def read_action(self, query: str, thought: str, tools: Sequence[ToolSpec]) -> ImpliedAction:
        return run_sync(self._read(query, thought, tools))

    async def aread_action(self, query: str, thought: str, tools: Sequence[ToolSpec]) -> ImpliedAction:
        """Async twin of :meth:`read_action`."""
        return await run_async(self._read(query, thought, tools))

    def _read(self, query: str, thought: str, tools: Sequence[ToolSpec]) -> Flow[ImpliedAction]:
        messages = _prompt(query, thought, tools)
        kwargs: dict[str, Any] = {"max_tokens": self.max_tokens}
        reply: BaseMessage = yield Call(
            lambda: self.model.invoke(messages, **kwargs), lambda: self.model.ainvoke(messages, **kwargs)
        )
        read = parse_action_reply(reply.text, tools, self.name)
        if read.committed or read.reason is None:
            return read
        # the reply was unreadable: that is the reader failing, not the thought committing to nothing
        fallback = RuleActionReader().read_action(query, thought, tools)
        return fallback.model_copy(update={"reader": f"rule (fallback: {self.name} unreadable)"})
