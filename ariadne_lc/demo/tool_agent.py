"""The demo's agent as production agents are built: ``create_agent`` on a tool-calling chat model, audited by
:class:`~ariadne_lc.AriadneMiddleware`.

The text ReAct agent of :mod:`ariadne_lc.demo.agent` parses ``Thought:``/``Action:`` lines because SmolLM2 has no
tool-calling template. With Qwen2.5-Coder-0.5B-Instruct behind the local server (``LocalModelServer.for_model(
"qwen2.5-coder-0.5b")``) the tools go through the provider's tool-calling API instead, as with OpenAI. The system
prompt asks for one sentence before each call (what the agent will do and why): that sentence is the thought an
audit edits. A run is capped at :data:`DEFAULT_TOOL_CALL_LIMIT` tool calls and then ends, because the 0.5B model
calls the same tool again after a result instead of answering (measured, see ``docs/demo.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.types import Checkpointer

from ariadne_lc.demo._tools import DEMO_TOOLS
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.middleware import AriadneMiddleware
from ariadne_lc.store import TraceStore

__all__ = ["DEFAULT_TOOL_CALL_LIMIT", "TOOL_AGENT_SYSTEM_PROMPT", "build_tool_agent"]

TOOL_AGENT_SYSTEM_PROMPT = (
    "You answer questions. You have a calculator for arithmetic and a lookup tool for facts. Before each tool call, "
    "write one sentence saying what you will do and why. When you know the answer, reply with it and stop: for a "
    "multiple-choice question the option letter, for a calculation the number."
)
"""Asks for the one-sentence thought before each call that an audit can edit."""

DEFAULT_TOOL_CALL_LIMIT = 3
"""Tool calls per run before the run ends (a small model may repeat a call instead of answering)."""


def build_tool_agent(
    model: BaseChatModel,
    store: TraceStore,
    *,
    checkpointer: Checkpointer,
    tools: Sequence[BaseTool] = DEMO_TOOLS,
    system_prompt: str = TOOL_AGENT_SYSTEM_PROMPT,
    tool_call_limit: int = DEFAULT_TOOL_CALL_LIMIT,
) -> Any:
    """``create_agent(model, tools, checkpointer=..., middleware=[AriadneMiddleware(store), ...])`` with the demo's
    tools and a system prompt that asks for a thought before each tool call.

    Args:
        model: a chat model with tool calling (``server.chat_model()`` of a Qwen server, or any ``ChatOpenAI``).
        store: where :class:`~ariadne_lc.AriadneMiddleware` records the traces.
        checkpointer: the saver the graph is compiled with (audits replay from its checkpoints).
        tools: the tools; default the demo's calculator and lookup.
        system_prompt: the instructions.
        tool_call_limit: tool calls per run before the run ends.

    Raises:
        ConfigurationError: ``tool_call_limit`` is not positive.
    """
    if tool_call_limit <= 0:
        raise ConfigurationError(f"tool_call_limit must be positive, got {tool_call_limit}")
    middleware: list[Any] = [
        AriadneMiddleware(store),
        ToolCallLimitMiddleware(run_limit=tool_call_limit, exit_behavior="end"),
    ]
    return create_agent(
        model, list(tools), system_prompt=system_prompt, checkpointer=checkpointer, middleware=middleware
    )
