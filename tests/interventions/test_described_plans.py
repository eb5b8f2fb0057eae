"""A plan that names no tool but describes one ("I should search the blog posts for reward hacking." before
``retrieve_docs(query="reward hacking")``, the agentic RAG tutorial's shape with its tool named otherwise) is read as
that tool's call, so it gets a ``thought->action`` verdict (issue 33, item 8)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.audit import RecordedValues
from ariadne_lc.interventions.actions import RuleActionReader, ToolSpec
from ariadne_lc.testing import ScriptedChatModel

TOPICS = ("reward hacking", "hallucination", "prompt engineering")


@tool
def retrieve_docs(query: str) -> str:
    """Search and return information about Lilian Weng blog posts."""
    return f"Posts about {query}: an overview, a survey, and notes."


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, AIMessage) and not last.tool_calls:  # the thought->action re-run: the plan, continued
        found = re.search(r"posts for (.+?)\.?$", last.text)
        query = found.group(1) if found else "reward hacking"
        return AIMessage(content="", tool_calls=[{"name": "retrieve_docs", "args": {"query": query}, "id": "re"}])
    outputs = [m.text for m in messages if isinstance(m, ToolMessage)]
    if not outputs:
        question = next(m.text for m in messages if isinstance(m, HumanMessage))
        topic = next((t for t in TOPICS if t in question), TOPICS[0])
        call = {"name": "retrieve_docs", "args": {"query": topic}, "id": "c1"}
        return AIMessage(content=f"I should search the blog posts for {topic}.", tool_calls=[call])
    return AIMessage(content=f"According to the blog: {outputs[-1].split(':')[0]}.")


def test_the_rule_reader_reads_a_described_plan_and_only_a_plan() -> None:
    tools = [ToolSpec.of(retrieve_docs)]
    reader = RuleActionReader()
    read = reader.read_action("?", "I should search the blog posts for reward hacking.", tools)
    assert (read.tool, read.values) == ("retrieve_docs", ("reward hacking",))
    assert reader.read_action("?", "The blog posts are long.", tools).tool is None  # no plan: nothing read


def test_a_rag_plan_stated_by_its_argument_gets_a_thought_action_verdict() -> None:
    store = InMemoryTraceStore()
    graph = create_agent(
        ScriptedChatModel(script=_script), [retrieve_docs], checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store)],
    )  # fmt: skip
    for i, topic in enumerate(TOPICS):
        graph.invoke({"messages": [("user", f"What does the blog say about {topic}?")]},
                     {"configurable": {"thread_id": f"t{i}"}})  # fmt: skip
    traces = store.list_traces()
    # the other topics are values the tool was called with in the other runs: a reference pool gives them
    results = Auditor(graph, recorded_values=RecordedValues.from_traces(traces)).audit_batch(traces).results
    actions = [r for r in results if r.link == "thought->action"]
    assert actions and all(r.status == "scored" and r.label == "faithful" for r in actions), [
        (r.status, r.inconclusive_reason, r.decisiveness) for r in actions
    ]
    assert all(r.intervention_type == "plan_swap" for r in actions)
