"""LangChain's sub-agent pattern with nothing on the sub-agents: module-level ``create_agent`` agents invoked by
``@tool`` functions, no ``AriadneMiddleware`` of their own, so that one recorder on the top agent must record them
all. Two levels (``ask_manager`` -> manager -> ``ask_clerk`` -> clerk) and one (``ask_researcher`` -> researcher).

Every agent plans "I should ask ... for the price of the <item>." (or looks it up with ``price``) before each call;
whether the top agent follows its plan and reads its tool's result is set per run (:func:`main_model`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore, record
from ariadne_lc.testing import ScriptedChatModel
from tests.harness_agents import _worker_model, price

_ITEM = re.compile(r"\b(apple|pear|plum|melon|fig)\b")

researcher = create_agent(_worker_model("thought", "observation"), [price], name="researcher")
clerk = create_agent(_worker_model("thought", "observation"), [price], name="clerk")


@tool
def ask_researcher(question: str) -> str:
    """Ask the researcher, who looks prices up, a question about the price of an item."""
    return str(researcher.invoke({"messages": [("user", question)]})["messages"][-1].text)


@tool
def ask_clerk(question: str) -> str:
    """Ask the clerk, who looks prices up, a question about the price of an item."""
    return str(clerk.invoke({"messages": [("user", question)]})["messages"][-1].text)


Follows = Literal["thought", "question"]
"""``thought``: a re-run asks about the item the (contradicted) plan names; ``question``: the question's item always."""
Reads = Literal["observation", "belief"]
"""``observation``: the answer repeats what the tool returned; ``belief``: a fixed belief, whatever it returned."""


def main_model(tool_name: str, who: str, *, follows: Follows = "thought", reads: Reads = "observation",
               items: int = 1) -> ScriptedChatModel:  # fmt: skip
    """An agent that asks ``who`` (through ``tool_name``) for the price of the question's first ``items`` items."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
        asked = _ITEM.findall(question)[:items] or ["apple"]
        found = [m for m in messages if isinstance(m, ToolMessage)]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the thought->action re-run
            said = _ITEM.findall(last.text) if follows == "thought" else asked
            if not said or re.search(r"\b(not|never|no longer)\b", last.text):
                return AIMessage(content=" I will answer without asking.")
            args = {"question": f"What is the price of the {said[-1]}?"}
            return AIMessage(content="", tool_calls=[{"name": tool_name, "args": args, "id": "re"}])
        if not found:
            calls = [{"name": tool_name, "args": {"question": f"What is the price of the {item}?"}, "id": f"ask-{item}"}
                     for item in asked]  # fmt: skip
            plan = " and ".join(f"the {item}" for item in asked)
            return AIMessage(content=f"I should ask the {who} for the price of {plan}.", tool_calls=calls)
        if reads == "belief":
            return AIMessage(content=f"The {asked[0]} is cheap.")
        return AIMessage(content=" ".join(f"The {who} says: {m.text}" for m in found))

    script.__name__ = f"main_{follows}_{reads}"
    return ScriptedChatModel(script=script)


manager = create_agent(main_model("ask_clerk", "clerk"), [ask_clerk], name="manager")


@tool
def ask_manager(question: str) -> str:
    """Ask the manager, who asks the clerk, a question about the price of an item."""
    return str(manager.invoke({"messages": [("user", question)]})["messages"][-1].text)


Recording = Literal["record", "middleware"]
"""``record(top, store)`` or ``AriadneMiddleware(store)`` on the top agent: one line on the top agent only."""


def run(model: ScriptedChatModel, tool_: Any, how: Recording, questions: Sequence[str]) -> tuple[Any, Any]:
    """The top agent built with ``model`` and ``tool_``, recorded ``how``, run once per question: (graph, store)."""
    store = InMemoryTraceStore()
    middleware = [AriadneMiddleware(store)] if how == "middleware" else []
    graph = create_agent(model, [tool_], checkpointer=InMemorySaver(), name="main", middleware=middleware)
    running = record(graph, store) if how == "record" else graph
    for i, question in enumerate(questions):
        running.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"{how}-{i}"}})
    return graph, store


def shouting_agent() -> Any:
    """An agent whose one tool runs a plain chain (no agent) inside: a tool call that starts no sub-agent run."""
    from langchain_core.runnables import RunnableLambda

    @tool
    def shout(text: str) -> str:
        """Say ``text`` louder (a chain inside the tool, no agent)."""
        return str(RunnableLambda(lambda s: s.upper()).invoke(text))

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, ToolMessage) for m in messages):
            call = {"name": "shout", "args": {"text": "hello"}, "id": "c1"}
            return AIMessage(content="I should shout hello with the shout tool.", tool_calls=[call])
        return AIMessage(content=f"It says {messages[-1].text}.")

    return create_agent(ScriptedChatModel(script=script), [shout], checkpointer=InMemorySaver(), name="main")
