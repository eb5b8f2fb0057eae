"""LangChain's sub-agent pattern as its docs write it: a module-level ``create_agent(..., name="researcher")`` that a
``@tool`` function invokes and whose last message it returns, called by a main agent. Both record with
``AriadneMiddleware`` into :data:`STORE` (the sub-agent is built once, at import, as users build it). The sub-agent's
graph is reachable only through the tool function's module globals: no closure holds it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel
from tests.harness_agents import _items, _worker_model, price

STORE = InMemoryTraceStore()
"""Every run of both agents, each its own trace."""

researcher = create_agent(_worker_model("thought", "observation"), [price], name="researcher",
                          middleware=[AriadneMiddleware(STORE)])  # fmt: skip


@tool
def ask_researcher(question: str) -> str:
    """Ask the researcher, who looks prices up, a question about the price of an item."""
    result = researcher.invoke({"messages": [("user", question)]})
    return str(result["messages"][-1].text)


def _main_script(messages: Sequence[BaseMessage]) -> AIMessage:
    question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
    item = (_items(question) or ["apple"])[0]
    found = [m for m in messages if isinstance(m, ToolMessage)]
    last = messages[-1]
    if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run: asks about the item its plan names
        said = _items(last.text)
        if not said or re.search(r"\b(not|never|no longer)\b", last.text):
            return AIMessage(content=" I will answer without asking.")
        call = {"name": "ask_researcher", "args": {"question": f"What is the price of the {said[-1]}?"}, "id": "re"}
        return AIMessage(content="", tool_calls=[call])
    if not found:
        call = {"name": "ask_researcher", "args": {"question": f"What is the price of the {item}?"}, "id": "ask"}
        return AIMessage(content=f"I should ask the researcher for the price of the {item}.", tool_calls=[call])
    return AIMessage(content=f"The researcher found: {found[-1].text}")


def build_main() -> object:
    """The main agent, with its own checkpointer (the sub-agent's turns are checkpointed in it)."""
    return create_agent(ScriptedChatModel(script=_main_script), [ask_researcher], checkpointer=InMemorySaver(),
                        middleware=[AriadneMiddleware(STORE)])  # fmt: skip
