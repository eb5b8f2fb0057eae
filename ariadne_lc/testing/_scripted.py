"""The scripted chat model of :mod:`ariadne_lc.testing`: a reply computed by a Python function of the conversation.

In a module of its own, beside the reference agents built on it (:mod:`._weather`, the reasoning models of
:mod:`._thoughts`); :mod:`ariadne_lc.testing` re-exports them all.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, PrivateAttr

__all__ = ["Reply", "ScriptedChatModel"]

Reply = Callable[[Sequence[BaseMessage]], AIMessage]
"""A script: the whole conversation in, the model's next message out."""


def _script_name(script: Any, depth: int = 0) -> str:
    """A script's qualified name, with the functions its closure holds: ``wrap.<locals>.reply`` wrapping a
    faithful script is not the same one wrapping an unfaithful one. Without the module: a deployment that loads
    the graph's file by path (``langgraph dev``) names the module otherwise than the auditor's import does, and
    the same script must fingerprint the same in both."""
    name = str(getattr(script, "__qualname__", type(script).__qualname__))
    inner = [
        _script_name(cell.cell_contents, depth + 1)
        for cell in getattr(script, "__closure__", None) or ()
        if depth < 4 and callable(_cell_contents(cell))
    ]
    return f"{name}({', '.join(inner)})" if inner else name


def _cell_contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


class ScriptedChatModel(BaseChatModel):
    """A chat model whose reply is computed by a Python function of the conversation.

    ``bind_tools`` returns the model itself (the script decides which tools to call), so it can drive
    ``langchain.agents.create_agent`` as well as hand-built graphs. Each reply gets a fresh message id,
    as real providers give, and the number of calls is counted (thread-safe) for tests that check
    how often a replay asked the model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Reply
    """The function that produces the next message."""

    _calls: itertools.count[int] = PrivateAttr(default_factory=itertools.count)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _n: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "ariadne-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        """The script is what tells one scripted model from another (a graph's fingerprint reads this)."""
        return {"script": _script_name(self.script)}

    @property
    def calls(self) -> int:
        """How many times the model has been asked for a reply."""
        return self._n

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._n += 1
            n = next(self._calls)
        reply = self.script(messages)
        if reply.id is None:
            reply = reply.model_copy(update={"id": f"scripted-{id(self):x}-{n}"})
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self
