"""The ``create_agent`` quick start, scripted: a weather tool and a model that calls it with no text before the call.

How most production models call tools: the turn that calls ``get_weather`` writes nothing, so the agent's only unit of
audit is the tool's output, and its answer reads that output. Shipped in :mod:`ariadne_lc.testing` for the README's
first example and for users' own unit tests of an audit set-up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from ariadne_lc.testing._scripted import ScriptedChatModel

__all__ = ["get_weather", "weather_model"]


@tool
def get_weather(city: str) -> str:
    """Get the weather for a given city."""
    return f"It's always sunny in {city}!"


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
    city = (re.findall(r"\b[A-Z][a-z]+\b", question) or ["Paris"])[-1]
    output = next((m.text for m in reversed(messages) if m.type == "tool"), None)
    if output is None:  # the call, with no text before it
        return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": city}, "id": "call-1"}])
    return AIMessage(content=f"The forecast for {city}: {output}")


def weather_model() -> ScriptedChatModel:
    """A scripted model for the quick start: it calls ``get_weather`` with no text, then answers from its output."""
    _script.__name__ = "weather"
    return ScriptedChatModel(script=_script)
