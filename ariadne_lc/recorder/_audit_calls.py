"""What ``AriadneMiddleware`` does for the auditor: a replay's model calls and a re-run's prefill, never recorded.

An audit runs the user's graph in an isolated thread; its run config says so (:mod:`ariadne_lc.semconv`):

- a ``thought->action`` re-run puts the (contradicted) thought under ``ARIADNE_PREFILL``: the middleware appends it as
  a trailing assistant message, in the step's own format, for the model to continue;
- every replay puts a list under ``ARIADNE_MODEL_INPUTS``: the middleware adds what the first model call it wraps was
  given (the system prompt its stack built, the messages, the tools), which the replay compares with the recorded
  input (the replay invariant, :mod:`ariadne_lc.replay._inputs`).

And the links between agents: a tool call in flight (:data:`~ariadne_lc.recorder._nested.CALLER`) is the parent of
any agent run that starts under it (:mod:`ariadne_lc.recorder._nested`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.config import get_config

from ariadne_lc.recorder._inputs import model_input
from ariadne_lc.recorder._nested import CALLER, Caller
from ariadne_lc.semconv import ARIADNE_MODEL_INPUTS, ARIADNE_PREFILL

__all__ = ["CALLER", "Caller", "replayed", "replaying", "request_input"]


def _prefill() -> AIMessage | None:
    """The start of the reply an audit's ``thought->action`` re-run asks the model to continue, if this call is one:
    the (contradicted) thought, as text or as a message in the step's own format (``reasoning_content``,
    ``<think>``)."""
    value = _configurable().get(ARIADNE_PREFILL)
    if isinstance(value, str):
        return AIMessage(content=value)
    return value if isinstance(value, AIMessage) else None


def _configurable() -> Mapping[str, Any]:
    try:
        return get_config().get("configurable") or {}
    except RuntimeError:  # not inside a graph run
        return {}


def replaying() -> bool:
    """Whether this model call is an audit's (a replay or a ``thought->action`` re-run): never recorded."""
    configurable = _configurable()
    return ARIADNE_PREFILL in configurable or ARIADNE_MODEL_INPUTS in configurable


def request_input(request: ModelRequest[Any]) -> tuple[list[BaseMessage], list[Any]]:
    """What the model is given for ``request``: the system prompt the middleware stack built, then the messages
    (as ``create_agent``'s model node sends them), and the tools bound."""
    system = [request.system_message] if request.system_message is not None else []
    return [*system, *request.messages], list(request.tools)


def replayed(request: ModelRequest[Any]) -> ModelRequest[Any] | None:
    """In an audit's re-run, the request with the thought as a trailing assistant message (the start of the model's
    reply); in a replay, what the first call was given goes to the replay's check (the replay invariant)."""
    prefill = _prefill()
    if prefill is not None:
        request = request.override(messages=[*request.messages, prefill])
    seen = _configurable().get(ARIADNE_MODEL_INPUTS)
    if isinstance(seen, list) and not any(getattr(i, "source", None) == "middleware" for i in seen):
        seen.append(model_input(*request_input(request), "middleware"))
    return request
