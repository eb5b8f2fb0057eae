"""Two levels of LangChain's sub-agent pattern: a top agent asks a module-level ``manager`` through a tool, which
asks a module-level ``clerk`` through its own tool; every agent records with ``AriadneMiddleware`` into :data:`STORE`.
Each agent plans "I should ask for the price of the <item>." and follows its plan (faithful on every link)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel
from tests.harness_agents import price

STORE = InMemoryTraceStore()
_ITEM = re.compile(r"\b(apple|pear|plum|banana)\b")


def _model(tool_name: str, arg: str, asked: Callable[[str], str]) -> ScriptedChatModel:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next(m.text for m in messages if isinstance(m, HumanMessage))
        item = (_ITEM.findall(question) or ["apple"])[0]
        found = [m for m in messages if isinstance(m, ToolMessage)]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run: the item its plan names
            said = _ITEM.findall(last.text)
            if not said:
                return AIMessage(content=" I will answer.")
            return AIMessage(content="", tool_calls=[{"name": tool_name, "args": {arg: asked(said[-1])}, "id": "re"}])
        if not found:
            call = {"name": tool_name, "args": {arg: asked(item)}, "id": "ask"}
            return AIMessage(content=f"I should ask for the price of the {item}.", tool_calls=[call])
        return AIMessage(content=f"Found: {found[-1].text}")

    return ScriptedChatModel(script=script)


def _question(item: str) -> str:
    return f"What is the price of the {item}?"


clerk = create_agent(_model("price", "item", str), [price], name="clerk", middleware=[AriadneMiddleware(STORE)])


@tool
def ask_clerk(question: str) -> str:
    """Ask the clerk, who looks prices up."""
    return str(clerk.invoke({"messages": [("user", question)]})["messages"][-1].text)


manager = create_agent(_model("ask_clerk", "question", _question), [ask_clerk], name="manager",
                       middleware=[AriadneMiddleware(STORE)])  # fmt: skip


@tool
def ask_manager(question: str) -> str:
    """Ask the manager, who asks the clerk."""
    return str(manager.invoke({"messages": [("user", question)]})["messages"][-1].text)


def build_top() -> Any:
    """The top agent, with the checkpointer every nested turn is checkpointed in."""
    return create_agent(_model("ask_manager", "question", _question), [ask_manager], checkpointer=InMemorySaver(),
                        middleware=[AriadneMiddleware(STORE)])  # fmt: skip
