"""One recorder on the top agent records every agent beneath it (ariadne_lc.recorder._nested): LangChain's sub-agent
pattern with nothing on the sub-agents, recorded by ``record(top, store)`` or ``AriadneMiddleware`` on the top agent
alone, at one and two levels, a sub-agent asked twice in one turn, a sub-agent that records itself too (once, not
twice), a deep agent's general-purpose sub-agent; and every unit of every agent gets its verdict.

Was (main 44fb613): ``record(top)`` recorded no sub-agent step; the middleware on the top agent alone neither."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, record
from ariadne_lc.coverage import coverage, coverage_line
from ariadne_lc.records import AuditResult
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import Trace
from tests.harness_agents import _items, price
from tests.subagent_plain import Recording, ask_manager, ask_researcher, main_model, run

HOW: list[Recording] = ["record", "middleware"]


def _by_agent(store: Any) -> dict[str, list[Trace]]:
    out: dict[str, list[Trace]] = {}
    for t in store.list_traces():
        out.setdefault(t.agent_name or "agent", []).append(t)
    return out


def _linked(child: Trace, parents: Sequence[Trace]) -> Trace:
    """The parent ``child`` is linked to, checked both ways: its ``parent`` names the call, the call names it."""
    assert child.parent is not None, child
    [parent] = [p for p in parents if p.trace_id == child.parent.trace_id]
    calls = [c for s in parent.steps for c in s.tool_calls if c.id == child.parent.call_id]
    assert len(calls) == 1 and child.trace_id in calls[0].agents, (calls, child.trace_id)
    assert child.parent.agent_name == parent.agent_name
    return parent


def _verdicts(results: Sequence[AuditResult]) -> list[AuditResult]:
    return [r for r in results if r.status == "scored" and not r.control]


@pytest.mark.parametrize("how", HOW)
def test_one_line_on_the_top_agent_records_the_sub_agent_as_its_own_linked_run(how: Recording) -> None:
    questions = ["What is the price of the apple?", "What is the price of the pear?"]
    graph, store = run(main_model("ask_researcher", "researcher"), ask_researcher, how, questions)
    agents = _by_agent(store)
    assert sorted(agents) == ["main", "researcher"] and len(agents["researcher"]) == 2
    for child in agents["researcher"]:
        parent = _linked(child, agents["main"])
        [call] = [c for s in parent.steps for c in s.tool_calls if c.id == child.parent.call_id]  # type: ignore[union-attr]
        assert child.query == call.args["question"] == parent.query  # its own input, as the tool gave it
        assert [c.name for s in child.steps for c in s.tool_calls] == ["price"]
    report = Auditor(graph).audit_batch(store.list_traces())
    cover = coverage(report.results)
    assert cover.with_verdict == cover.units == 8, coverage_line(cover)  # 2 runs x 2 agents x (plan, output)
    assert cover.by_agent == {"main": (4, 4), "researcher": (4, 4)}
    assert not [r for r in report.results if r.status == "failed"]
    assert not [r for r in _verdicts(report.results) if r.violation]  # every agent is faithful on every link
    assert all(r.input_checked for r in _verdicts(report.results))
    assert all(r.tools_live == 0 for r in report.results)


@pytest.mark.parametrize("how", HOW)
def test_a_top_agent_that_ignores_its_sub_agents_result_is_flagged_and_the_sub_agent_is_not(how: Recording) -> None:
    model = main_model("ask_researcher", "researcher", follows="question", reads="belief")
    graph, store = run(model, ask_researcher, how, ["What is the price of the plum?"])
    results = _verdicts(Auditor(graph).audit_batch(store.list_traces()).results)
    flagged = {(r.agent_name, r.link) for r in results if r.violation}
    assert flagged == {("main", "thought->action"), ("main", "observation->answer")}, results
    assert {(r.agent_name, r.link) for r in results} >= {("researcher", "thought->action"),
                                                          ("researcher", "observation->answer")}  # fmt: skip


@pytest.mark.parametrize("how", HOW)
def test_two_levels_of_sub_agents_are_recorded_from_the_top_and_audited(how: Recording) -> None:
    graph, store = run(main_model("ask_manager", "manager"), ask_manager, how, ["What is the price of the fig?"])
    agents = _by_agent(store)
    assert sorted(agents) == ["clerk", "main", "manager"], agents
    [manager], [clerk] = agents["manager"], agents["clerk"]
    assert _linked(manager, agents["main"]).agent_name == "main"
    assert _linked(clerk, [manager]).agent_name == "manager"
    report = Auditor(graph).audit_batch(store.list_traces())
    cover = coverage(report.results)
    assert cover.with_verdict == cover.units == 6, coverage_line(cover)
    assert not [r for r in _verdicts(report.results) if r.violation]


@pytest.mark.parametrize("how", HOW)
def test_a_sub_agent_asked_twice_in_one_turn_is_two_runs_each_linked_to_its_call(how: Recording) -> None:
    model = main_model("ask_researcher", "researcher", items=2)
    graph, store = run(model, ask_researcher, how, ["What are the prices of the apple and the melon?"])
    agents = _by_agent(store)
    [main] = agents["main"]
    assert len(agents["researcher"]) == 2
    asked = {c.id: c for s in main.steps for c in s.tool_calls}
    for child in agents["researcher"]:
        _linked(child, [main])
        assert asked[child.parent.call_id].args["question"] == child.query  # type: ignore[union-attr]
    cover = coverage(Auditor(graph).audit_batch(store.list_traces()).results)
    assert cover.with_verdict == cover.units, coverage_line(cover)


@pytest.mark.parametrize("how", HOW)
def test_a_sub_agent_that_records_itself_too_is_recorded_once(how: Recording) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from tests.harness_agents import _worker_model

    store = InMemoryTraceStore()
    own = create_agent(_worker_model("thought", "observation"), [price], name="researcher",
                       middleware=[AriadneMiddleware(store)])  # fmt: skip

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str(own.invoke({"messages": [("user", question)]})["messages"][-1].text)

    middleware = [AriadneMiddleware(store)] if how == "middleware" else []
    graph = create_agent(main_model("ask_researcher", "researcher"), [ask_researcher], checkpointer=InMemorySaver(),
                         name="main", middleware=middleware)  # fmt: skip
    running = record(graph, store) if how == "record" else graph
    running.invoke({"messages": [("user", "What is the price of the pear?")]}, {"configurable": {"thread_id": "o"}})
    agents = _by_agent(store)
    assert sorted(agents) == ["main", "researcher"] and len(agents["researcher"]) == 1, agents
    _linked(agents["researcher"][0], agents["main"])


def _general_script(messages: Sequence[BaseMessage]) -> AIMessage:
    """One model for the deep agent and its general-purpose sub-agent (deepagents gives the sub-agent the main
    agent's model): asked "Find the price of the <item>." it looks the price up; asked a question, it delegates."""
    question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
    item = (_items(question) or ["apple"])[0]
    found = [m for m in messages if isinstance(m, ToolMessage) and m.name in ("price", "task")]
    last = messages[-1]
    sub = question.startswith("Find the price")
    if isinstance(last, AIMessage) and not last.tool_calls:  # the thought->action re-run follows the plan
        said = _items(last.text) or [item]
        if re.search(r"\b(not|never)\b", last.text):
            return AIMessage(content=" I will answer myself.")
        if sub:
            return AIMessage(content="", tool_calls=[{"name": "price", "args": {"item": said[-1]}, "id": "re"}])
        args = {"description": f"Find the price of the {said[-1]}.", "subagent_type": "general-purpose"}
        return AIMessage(content="", tool_calls=[{"name": "task", "args": args, "id": "re"}])
    if not found and sub:
        call = {"name": "price", "args": {"item": item}, "id": "call-price"}
        return AIMessage(content=f"I should look up the price of the {item} with the price tool.", tool_calls=[call])
    if not found:
        args = {"description": f"Find the price of the {item}.", "subagent_type": "general-purpose"}
        call = {"name": "task", "args": args, "id": "call-task"}
        return AIMessage(content=f"I should delegate the price of the {item} to a sub-agent.", tool_calls=[call])
    if sub:
        return AIMessage(content=f"The {item} costs {found[-1].text} dollars.")
    return AIMessage(content=f"The sub-agent found: {found[-1].text}")


@pytest.mark.parametrize("how", HOW)
def test_a_deep_agents_general_purpose_sub_agent_is_recorded_and_audited(how: Recording) -> None:
    from deepagents import create_deep_agent

    store = InMemoryTraceStore()
    middleware = [AriadneMiddleware(store)] if how == "middleware" else []
    graph = create_deep_agent(ScriptedChatModel(script=_general_script), [price], middleware=middleware,
                              checkpointer=InMemorySaver())  # fmt: skip
    running = record(graph, store) if how == "record" else graph
    running.invoke({"messages": [("user", "What is the price of the plum?")]}, {"configurable": {"thread_id": "d"}})
    traces = store.list_traces()
    [top] = [t for t in traces if t.parent is None]
    [sub] = [t for t in traces if t.parent is not None]
    _linked(sub, [top])
    assert sub.query == "Find the price of the plum." and [c.name for s in sub.steps for c in s.tool_calls] == ["price"]
    report = Auditor(graph).audit_batch(traces)
    cover = coverage(report.results)
    # recorded by a handler, the deep agent's plan is re-run with the prompt its middleware builds (captured from its
    # node, checked against the recorded input)
    assert cover.with_verdict == cover.units == 4, coverage_line(cover)
    assert all(r.input_checked for r in report.results if r.status == "scored")
    assert not [r for r in _verdicts(report.results) if r.violation]
    assert all(r.tools_live == 0 for r in report.results)


def test_a_tool_that_runs_no_agent_adds_no_run() -> None:
    from tests.subagent_plain import shouting_agent

    store = InMemoryTraceStore()
    graph = record(shouting_agent(), store)
    handler = graph.config["callbacks"][0]
    graph.invoke({"messages": [("user", "Shout hello.")]}, {"configurable": {"thread_id": "s"}})
    assert len(store.list_traces()) == 1 and handler.stats.errors == 0 and handler.stats.recorded == 1
    assert not handler._tool_calls and not handler._runs  # nothing left behind


@pytest.mark.parametrize("how", HOW)
def test_sub_agents_invoked_as_users_write_it_are_recorded_under_their_own_name(how: Recording) -> None:
    """Async tools awaiting ``ainvoke``, a streamed sub-agent, and a tool that passes its ``config`` on (which carries
    the caller's metadata, its agent name included): each sub-agent run is the researcher's, linked."""
    import asyncio

    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from tests.harness_agents import _worker_model
    from tests.subagent_plain import main_model

    sub = create_agent(_worker_model("thought", "observation"), [price], name="researcher")

    @tool
    async def ask_async(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str((await sub.ainvoke({"messages": [("user", question)]}))["messages"][-1].text)

    @tool
    def ask_streamed(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        *_, last = sub.stream({"messages": [("user", question)]}, stream_mode="values")
        return str(last["messages"][-1].text)

    @tool
    def ask_with_config(question: str, config: RunnableConfig) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str(sub.invoke({"messages": [("user", question)]}, config)["messages"][-1].text)

    for asker in (ask_async, ask_streamed, ask_with_config):
        store = InMemoryTraceStore()
        middleware = [AriadneMiddleware(store)] if how == "middleware" else []
        graph = create_agent(main_model(asker.name, "researcher"), [asker], checkpointer=InMemorySaver(), name="main",
                             middleware=middleware)  # fmt: skip
        running = record(graph, store) if how == "record" else graph
        asked = {"messages": [("user", "What is the price of the fig?")]}
        asyncio.run(running.ainvoke(asked, {"configurable": {"thread_id": "u"}}))
        agents = _by_agent(store)
        assert sorted(agents) == ["main", "researcher"], (asker.name, agents)
        _linked(agents["researcher"][0], agents["main"])
        cover = coverage(asyncio.run(Auditor(graph).aaudit_batch(store.list_traces())).results)
        assert cover.with_verdict == cover.units == 4, (asker.name, coverage_line(cover))


def test_a_sub_agent_that_stops_at_an_interrupt_leaves_its_callers_turn_whole() -> None:
    """Human in the loop inside a sub-agent: the caller's turn pauses with it, on the same thread. The caller's two
    halves are joined into one trace (the sub-agent's paused half is not kept: its run after the resume is recorded
    then). Was: the sub-agent's newer trace on the thread hid the paused turn, and the resume was stored alone."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langgraph.types import Command, interrupt

    from tests.subagent_plain import main_model

    @tool
    def approved_price(item: str) -> str:
        """Ask a person to approve looking up the price of an item, then give the price, in dollars."""
        return "3" if interrupt(f"look up the {item}?") == "yes" else "refused"

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        found = [m.text for m in messages if isinstance(m, ToolMessage)]
        if not found:
            call = {"name": "approved_price", "args": {"item": "apple"}, "id": "ap"}
            return AIMessage("I should look up the price of the apple with the approved_price tool.", tool_calls=[call])
        return AIMessage(f"The apple costs {found[-1]} dollars.")

    sub = create_agent(ScriptedChatModel(script=script), [approved_price], name="researcher")

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher, who looks prices up, a question about the price of an item."""
        return str(sub.invoke({"messages": [("user", question)]})["messages"][-1].text)

    store = InMemoryTraceStore()
    graph = create_agent(main_model("ask_researcher", "researcher"), [ask_researcher], checkpointer=InMemorySaver(),
                         name="main")  # fmt: skip
    running, config = record(graph, store), {"configurable": {"thread_id": "hitl"}}
    assert "__interrupt__" in running.invoke({"messages": [("user", "What is the price of the apple?")]}, config)
    running.invoke(Command(resume="yes"), config)
    agents = _by_agent(store)
    [main] = agents["main"]
    assert main.error is None and not main.interrupted and len(main.steps) == 2 and main.interrupts
    assert main.final_answer == "The researcher says: The apple costs 3 dollars."
    [after] = agents["researcher"]
    _linked(after, [main])


@pytest.mark.parametrize("how", HOW)
def test_a_tool_that_runs_its_sub_agent_twice_gets_both_runs_audited(how: Recording) -> None:
    """``researcher.batch([...])`` in one tool call: LangGraph puts the second run under the call's namespace with a
    counter (``tools:<task>|1``), which is the same level as the first's, not a level of its own.

    Was: the second run of each pair failed every replay (``NotReplayableError: no task id``), coverage 7/11."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from tests.harness_agents import _worker_model

    researcher = create_agent(_worker_model("thought", "observation"), [price], name="researcher")

    @tool
    def ask_twice(question: str) -> str:
        """Ask the researcher the same question twice, at once, about the price of an item."""
        runs = researcher.batch([{"messages": [("user", question)]}, {"messages": [("user", question)]}])
        return " / ".join(str(r["messages"][-1].text) for r in runs)

    graph, store = run(main_model("ask_twice", "researcher"), ask_twice, how, ["What is the price of the melon?"])
    agents = _by_agent(store)
    assert len(agents["researcher"]) == 2 and all(_linked(c, agents["main"]) for c in agents["researcher"])
    report = Auditor(graph).audit_batch(store.list_traces())
    cover = coverage(report.results)
    assert cover.with_verdict == cover.units == 2 + 2 * 2, coverage_line(cover)
    assert not [r for r in report.results if r.status == "failed"]
