"""The demo's agent as production agents are built: ``create_agent`` on a tool-calling chat model, recorded by
:class:`~ariadne_lc.AriadneMiddleware`.

The text ReAct agent of :mod:`ariadne_lc.demo.agent` parses ``Thought:``/``Action:`` lines because SmolLM2 has no
tool-calling template. With Qwen2.5-Coder-0.5B-Instruct behind the local server (``LocalModelServer.for_model(
"qwen2.5-coder-0.5b")``) the tools go through the provider's tool-calling API instead, as with OpenAI. Its thoughts
plan calls ("The hotel has 12 floors with 9 rooms on each floor, so I should calculate 12 * 9."), so it is audited
link by link (docs/method.md#links): ``thought->action`` (the middleware re-runs the model call with a contradicted
thought), ``observation->answer`` (a tool output swapped) and ``thought->answer``.

A small model writes a thought before its call only when shown how: the system prompt holds one worked example in
the model's own tool-call format (measured in docs/demo.md). A run is capped at :data:`DEFAULT_TOOL_CALL_LIMIT` tool
calls and then ends, because the 0.5B model may call the same tool again after a result instead of answering.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from ariadne_lc.demo._tools import DEMO_TOOLS
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.store import TraceStore

__all__ = [
    "DEFAULT_TOOL_CALL_LIMIT",
    "TOOL_AGENT_SYSTEM_PROMPT",
    "AnswerTurnMiddleware",
    "build_tool_agent",
    "tool_agent_answer",
]

DEFAULT_TOOL_CALL_LIMIT = 3
"""Tool calls per run before the run ends (a small model may repeat a call instead of answering)."""

TOOL_AGENT_SYSTEM_PROMPT = """You are a careful assistant with a calculator. You never do arithmetic in your head, not \
even easy sums: every answer comes from a calculator result.
Turn 1: write ONE sentence that restates the numbers and says what you will calculate, then call the calculator. \
Never write "The answer is" before you have the calculator's result.
Turn 2: after the calculator result, reply with "The answer is <result>."

Example.
User: A shelf has 4 rows of 8 books. How many books are there?
Assistant: The shelf has 4 rows of 8 books, so I should calculate 4 * 8.
<tool_call>
{"name": "calculator", "arguments": {"expression": "4 * 8"}}
</tool_call>
Tool: 32
Assistant: The answer is 32."""
"""One worked example in Qwen's tool-call format (without it the 0.5B model calls tools without a thought), and a
ban on answering before a result (without it, it answered 8 of 12 word problems in text at once; measured in
docs/demo.md)."""


class AnswerTurnMiddleware(AgentMiddleware[Any, Any]):
    """After a tool result the model answers: the call that follows a ``ToolMessage`` is made with no tools offered.

    Without it the 0.5B model calls the same tool again after its result instead of answering (docs/demo.md), and
    the run ends at its tool-call limit with no answer to audit. A thought->action re-run is not affected: there the
    last message is the thought being continued, not a tool result.
    """

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        return handler(_answer_turn(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        return await handler(_answer_turn(request))


def _answer_turn(request: ModelRequest[Any]) -> ModelRequest[Any]:
    if request.messages and isinstance(request.messages[-1], ToolMessage):
        return request.override(tools=[])
    return request


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
    system_prompt: str = TOOL_AGENT_SYSTEM_PROMPT,
    tool_call_limit: int = DEFAULT_TOOL_CALL_LIMIT,
    **recorder_options: Any,
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
        **recorder_options: for the middleware's handler (e.g. ``synchronous=True``, ``on_trace=``).

    Raises:
        ConfigurationError: ``tool_call_limit`` is not positive.
    """
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolCallLimitMiddleware

    from ariadne_lc.middleware import AriadneMiddleware

    if tool_call_limit <= 0:
        raise ConfigurationError(f"tool_call_limit must be positive, got {tool_call_limit}")
    middleware: list[Any] = [
        AriadneMiddleware(store, **recorder_options),  # first: it wraps the model call the others finally make
        AnswerTurnMiddleware(),
        ToolCallLimitMiddleware(run_limit=tool_call_limit, exit_behavior="end"),
    ]
    return create_agent(
        model, list(tools), system_prompt=system_prompt, checkpointer=checkpointer, middleware=middleware
    )
