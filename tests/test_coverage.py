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


class _Registry:
    """Where an application keeps its agents: an object's attribute, which no replay looks into."""

    agent: object = None


_REGISTRY = _Registry()


def _hidden_sub_agent() -> tuple[object, InMemoryTraceStore]:
    """The top agent's tool invokes a sub-agent the auditor cannot find (kept on an object's attribute)."""
    from langchain.agents import create_agent

    from ariadne_lc import record
    from tests.harness_agents import _worker_model, price
    from tests.subagent_plain import main_model

    _REGISTRY.agent = create_agent(_worker_model("thought", "observation"), [price], name="researcher")

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str(_REGISTRY.agent.invoke({"messages": [("user", question)]})["messages"][-1].text)  # type: ignore[attr-defined]

    store = InMemoryTraceStore()
    graph = create_agent(main_model("ask_researcher", "researcher"), [ask_researcher], checkpointer=InMemorySaver(),
                         name="main")  # fmt: skip
    record(graph, store).invoke({"messages": [("user", "What is the price of the fig?")]},
                                {"configurable": {"thread_id": "h"}})  # fmt: skip
    return graph, store


def test_a_sub_agent_whose_audit_fails_keeps_its_units_in_the_denominator() -> None:
    """Was: the sub-agent runs' audits all failed while the line said 4/4 (100%): their units were in no count."""
    graph, store = _hidden_sub_agent()
    traces = store.list_traces()
    assert len(traces) == 2
    cover = coverage(Auditor(graph).audit_batch(traces).results)
    line = coverage_line(cover)
    assert cover.units == 4 and cover.by_agent["researcher"] == (0, 2), line
    assert "failed (SubgraphNotReplayableError)" in line and "100%" not in line
    researcher = _REGISTRY.agent
    given = coverage(Auditor(graph, agents={"researcher": researcher}).audit_batch(traces).results)
    assert given.units == given.with_verdict == 4, coverage_line(given)


def test_sub_agent_runs_left_out_of_an_audit_are_said_so() -> None:
    graph, store = _hidden_sub_agent()
    [top] = [t for t in store.list_traces() if t.parent is None]
    cover = coverage(Auditor(graph).audit_batch([top]).results)
    assert cover.runs_not_audited == 1 and "1 sub-agent run(s)" in coverage_line(cover)
    assert coverage(Auditor(graph).audit_batch(store.list_traces()).results).runs_not_audited == 0


def test_a_run_whose_audit_fails_as_a_whole_keeps_its_units_in_the_denominator() -> None:
    """A trace refused before any audit (recorded under another graph): its units count, each without a verdict."""
    from langchain.agents import create_agent

    from ariadne_lc import record
    from ariadne_lc.testing import lookup, lookup_model, lookup_question

    store = InMemoryTraceStore()
    recorded = create_agent(lookup_model(2), [lookup], checkpointer=InMemorySaver())
    record(recorded, store).invoke({"messages": [("user", lookup_question(2))]}, {"configurable": {"thread_id": "g"}})
    other = create_agent(lookup_model(2), [lookup, search], checkpointer=InMemorySaver())  # another tool
    [trace] = store.list_traces()
    cover = coverage(Auditor(other).audit_batch([trace]).results)
    thoughts = sum(1 for s in trace.steps if not s.is_final and s.thought.strip())
    outputs = sum(1 for s in trace.steps for c in s.tool_calls if c.output is not None)
    assert cover.units == thoughts + outputs > 0 and cover.with_verdict == 0, coverage_line(cover)
    assert cover.no_verdict == {"failed (GraphChangedError)": thoughts + outputs}
