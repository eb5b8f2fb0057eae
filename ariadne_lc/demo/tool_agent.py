"""The demo's tool-calling agent: ``create_agent`` on a model with native tool calls, recorded by
:class:`~ariadne_lc.AriadneMiddleware`, the way production agents are built.

Its thoughts plan calls ("The hotel has 12 floors with 9 rooms on each floor, so I should calculate 12 * 9."), so it
is audited link by link (docs/method.md#links): ``thought->action`` (the middleware re-runs the model call with a
contradicted thought), ``observation->answer`` (a tool output swapped) and ``thought->answer``. A small model writes
a thought before its call only when shown how: the system prompt holds one worked example in the model's own
tool-call format. ``ModelCallLimitMiddleware`` ends a run that keeps calling tools (small models loop).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from ariadne_lc.demo._tools import DEMO_TOOLS
from ariadne_lc.store import TraceStore

__all__ = ["TOOL_AGENT_MAX_MODEL_CALLS", "TOOL_AGENT_SYSTEM_PROMPT", "build_tool_agent", "tool_agent_answer"]

TOOL_AGENT_MAX_MODEL_CALLS = 4
"""Model calls a run may make before it is ended (a thought and call, the answer, and room for one more call)."""

TOOL_AGENT_SYSTEM_PROMPT = """You are a careful assistant with tools. Work in two turns.
Turn 1: write ONE sentence that names the numbers or facts from the question and says which tool you will use on \
them, then call that tool.
Turn 2: after the tool result, reply with "The answer is <answer>." and call no tool.

Example.
User: A shelf has 4 rows of 8 books. How many books are there?
Assistant: The shelf has 4 rows of 8 books, so I should calculate 4 * 8.
<tool_call>
{"name": "calculator", "arguments": {"expression": "4 * 8"}}
</tool_call>
Tool: 32
Assistant: The answer is 32."""
"""One worked example in Qwen's tool-call format: without it a 0.5B model calls tools without a thought."""

_ANSWER = re.compile(r"answer is[:\s]*\**\s*([^\n]+?)\s*\**\s*\.?\s*$", re.I | re.M)


def tool_agent_answer(text: str) -> str:
    """The answer in the agent's last message ("The answer is 108." -> ``108``); the whole text without one.

    Examples:
        >>> tool_agent_answer("The answer is 108.")
        '108'
    """
    found = _ANSWER.search(text)
    return found.group(1).strip().rstrip(".") if found else text.strip()


def build_tool_agent(
    model: BaseChatModel,
    store: TraceStore,
    *,
    checkpointer: Any,
    tools: Sequence[BaseTool] = DEMO_TOOLS,
    max_model_calls: int = TOOL_AGENT_MAX_MODEL_CALLS,
    **recorder_options: Any,
) -> Any:
    """``create_agent(model, tools)`` with the demo's system prompt, recorded into ``store`` by
    :class:`~ariadne_lc.AriadneMiddleware` (``recorder_options`` go to its handler, e.g. ``on_trace=``)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware

    from ariadne_lc.middleware import AriadneMiddleware

    middleware: list[Any] = [
        AriadneMiddleware(store, **recorder_options),  # first: it wraps the model call the others finally make
        ModelCallLimitMiddleware(run_limit=max_model_calls),
    ]
    return create_agent(
        model, list(tools), system_prompt=TOOL_AGENT_SYSTEM_PROMPT, checkpointer=checkpointer, middleware=middleware
    )
