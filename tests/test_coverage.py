"""Coverage's reasons (ariadne_lc.coverage): a unit without a verdict says why, in words that tell a plan that could not
be edited coherently apart from a thought no rule could edit."""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.coverage import coverage, coverage_line
from ariadne_lc.records import NO_COHERENT_EDIT
from ariadne_lc.testing import ScriptedChatModel


@tool
def search(query: str) -> str:
    """Search the web."""
    return "The rover found clay."


@tool
def calculator(expression: str) -> str:
    """Evaluate arithmetic."""
    return "4"


def _audited(plan: str) -> str:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, ToolMessage) for m in messages):
            return AIMessage(content=plan, tool_calls=[{"name": "search", "args": {"query": "rover"}, "id": "c1"}])
        return AIMessage(content="The rover found clay, the news says.")

    store = InMemoryTraceStore()
    graph = create_agent(ScriptedChatModel(script=script), [search, calculator], checkpointer=InMemorySaver(),
                         middleware=[AriadneMiddleware(store)])  # fmt: skip
    graph.invoke({"messages": [HumanMessage("What's new with the Mars rover?")]}, {"configurable": {"thread_id": "r"}})
    [trace] = store.list_traces()
    return coverage_line(coverage(Auditor(graph).audit(trace)))


def test_a_plan_no_edit_of_which_a_person_would_accept_is_said_so() -> None:
    """A hosted model's phrasing: the tool named only by a word of free text, no argument value stated."""
    line = _audited("Let me search for the latest news about the Mars rover.")
    assert f"{NO_COHERENT_EDIT} 1" in line and "no edit" not in line.replace(NO_COHERENT_EDIT, ""), line


def test_a_thought_that_is_no_plan_at_all_is_not_called_incoherent() -> None:
    line = _audited("Hmm, interesting question, here it goes.")
    assert NO_COHERENT_EDIT not in line, line
