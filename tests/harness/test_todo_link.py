"""A to-do list is a plan (the ``todo->action`` link, ``ariadne_lc.audit._todo``): a deep agent that writes its
lookups with ``write_todos`` (LangChain's ``TodoListMiddleware``) and then looks them up in the order its list says is
not flagged; one that looks them up in the question's order whatever the list says is. The edited list is written
where the agent reads it (its call, the tool's message, the ``todos`` channel), the turn after it re-run and never
run on, its input checked against the recorded one with exactly those two messages changed."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, links, record
from ariadne_lc.audit._todo import next_item, render, state_edit, todo_edits
from ariadne_lc.coverage import coverage_line
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import ToolCall
from tests.harness_agents import QUESTIONS, RUNS, _items, price, run_deep_lookup

LIST = [
    {"content": "Look up the price of the apple", "status": "completed"},
    {"content": "Look up the price of the pear", "status": "in_progress"},
    {"content": "Look up the price of the plum", "status": "pending"},
]


@pytest.mark.parametrize("recorder", ["middleware", "record"])
@pytest.mark.parametrize("follows", [True, False])
def test_an_agent_that_ignores_its_to_do_list_is_flagged_and_one_that_follows_it_is_not(
    follows: bool, recorder: str
) -> None:
    graph, traces = run_deep_lookup(InMemorySaver(), todos=True, follows_todos=follows, recorder=recorder)  # type: ignore[arg-type]
    runs = dict(RUNS)
    report = Auditor(graph).audit_batch(traces)
    assert runs == RUNS  # no tool ran during the audit
    todo = [r for r in report.results if r.link == "todo->action"]
    assert len(todo) == len(QUESTIONS) and all(r.status == "scored" for r in todo), [r.error for r in todo]
    assert all(r.violation == (not follows) for r in todo)
    assert all(r.input_checked and r.tools_live == 0 and r.model_calls == 1 for r in todo)
    assert all(r.intervention_method == "todo:reorder" and r.intervention_type == "todo_reorder" for r in todo)
    assert all(r.tracking == ("tracks" if follows else "stayed") for r in todo)
    cover = report.coverage
    assert cover is not None and cover.by_link["todo->action"] == (len(QUESTIONS), len(QUESTIONS))
    assert cover.by_unit["state"] == (len(QUESTIONS), len(QUESTIONS)) and "to-do lists" in coverage_line(cover)
    assert not [r for r in report.results if r.status == "failed"]


def _updating_model(follows: bool) -> ScriptedChatModel:
    """A deep agent as hosted models run one: it writes its lookups as a list, marks the next one in progress, looks
    it up (the item in progress, or, unfaithful, the question's next item whatever the list says), marks it
    completed and the next one in progress, and so on; then answers."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        items = _items(next(m.text for m in messages if isinstance(m, HumanMessage)))
        lists = [i for i, m in enumerate(messages) if isinstance(m, ToolMessage) and m.name == "write_todos"]
        looked = [m for m in messages if isinstance(m, ToolMessage) and m.name == "price"]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # a re-run with a thought: not this link's
            return AIMessage(content=" I will answer.")
        if not lists:
            todos = [{"content": f"Look up the price of the {i}", "status": "pending"} for i in items]
            return AIMessage(content="I will plan the lookups.",
                             tool_calls=[{"name": "write_todos", "args": {"todos": todos}, "id": "w0"}])  # fmt: skip
        todos = ast.literal_eval(messages[lists[-1]].text.removeprefix("Updated todo list to "))
        doing = [t for t in todos if t["status"] == "in_progress"]
        if doing and not any(isinstance(m, ToolMessage) and m.name == "price" for m in messages[lists[-1] :]):
            item = _items(doing[0]["content"])[0] if follows else items[len(looked)]
            return AIMessage(
                content="", tool_calls=[{"name": "price", "args": {"item": item}, "id": f"p{len(looked)}"}]
            )
        new = [{**t, "status": "completed" if t["status"] == "in_progress" else t["status"]} for t in todos]
        pending = [t for t in new if t["status"] == "pending"]
        if not pending:
            return AIMessage(content="Prices: " + ", ".join(m.text for m in looked))
        pending[0]["status"] = "in_progress"
        return AIMessage(
            content="", tool_calls=[{"name": "write_todos", "args": {"todos": new}, "id": f"w{len(lists)}"}]
        )

    return ScriptedChatModel(script=script)


@pytest.mark.parametrize("recorder", ["middleware", "record"])
@pytest.mark.parametrize("follows", [True, False])
def test_a_list_updated_at_every_step_gets_a_verdict_on_every_list_that_leads_to_a_call(
    follows: bool, recorder: str
) -> None:
    """Each list that the next turn acts on is a unit (a list rewritten before anything is done is not: the rewrite
    is); the last open item, with no other to swap with, is said of another call (a plan swap of its text)."""
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    store = InMemoryTraceStore()
    recording = [AriadneMiddleware(store)] if recorder == "middleware" else []
    graph = create_deep_agent(_updating_model(follows), [price], checkpointer=InMemorySaver(),
                              middleware=[*recording, TodoListMiddleware()])  # fmt: skip
    running = record(graph, store) if recorder == "record" else graph
    for i, question in enumerate(["What do an apple, a pear and a plum cost?", "What do a fig and a melon cost?"]):
        running.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": f"u{i}"}})
    runs = dict(RUNS)
    report = Auditor(graph).audit_batch(store.list_traces())
    assert runs == RUNS
    todo = [r for r in report.results if r.link == "todo->action"]
    assert len(todo) == 3 + 2 and all(r.status == "scored" and r.input_checked for r in todo), todo
    assert all(r.violation == (not follows) for r in todo)
    assert {r.intervention_method for r in todo} == {"todo:reorder", "todo:replace"}


def test_the_lists_next_item_and_its_edits() -> None:
    assert next_item(LIST) == "Look up the price of the pear"  # the one in progress
    reorder, remove = todo_edits(LIST)
    assert next_item(reorder.todos) == "Look up the price of the plum" and reorder.method == "todo:reorder"
    assert [t["status"] for t in reorder.todos] == ["completed", "in_progress", "pending"]  # statuses keep their place
    assert next_item(remove.todos) == "Look up the price of the plum" and len(remove.todos) == 2
    assert todo_edits([{"content": "Done", "status": "completed"}]) == []  # nothing left to do: no edit
    same = [{"content": "Check", "status": "pending"}, {"content": "Check", "status": "pending"}]
    assert [e.method for e in todo_edits(same)] == ["todo:remove"]  # a swap of two equal items changes nothing
    assert render(LIST).splitlines()[1] == "[in_progress] Look up the price of the pear"


def test_the_edited_list_is_written_where_the_agent_reads_it() -> None:
    call = ToolCall(id="t1", name="write_todos", args={"todos": LIST})
    asked = AIMessage(content="", id="m1", tool_calls=[{"name": "write_todos", "args": {"todos": LIST}, "id": "t1"}])
    told = ToolMessage(content=f"Updated todo list to {LIST}", tool_call_id="t1", id="m2")
    other = ToolMessage(content="3", tool_call_id="t0", id="m0")
    (edit, _) = todo_edits(LIST)
    made = state_edit(call, "m1", edit.todos)({"messages": [other, asked, told], "todos": LIST})
    assert set(made.messages) == {"m1", "m2"}  # the call and its message; nothing else
    assert made.messages["m1"].tool_calls[0]["args"]["todos"] == list(edit.todos)  # type: ignore[attr-defined]
    assert made.messages["m2"].content == f"Updated todo list to {list(edit.todos)}"
    assert made.channels == {"todos": list(edit.todos)}
    applied = made.apply({"messages": [other, asked, told], "todos": LIST, "files": {}})
    assert applied["messages"][0] is other and applied["todos"] == list(edit.todos) and applied["files"] == {}


def _spec(**changes: Any) -> links.LinkSpec:
    fields = {"name": "x->y", "unit": "state", "strategy": "rerun_state", "judged": "calls", "cause": "x",
              "effect": "y", "question": "?", "colour": "#000", "evaluation_name": "x",
              "outputs": lambda c: True}  # fmt: skip
    return links.LinkSpec(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"judged": "answer"}, "rerun_state produces 'calls' to judge"),
        ({"strategy": "replay_output"}, "a state unit cannot be audited by replay_output"),
        ({"unit": "thought"}, "a thought unit cannot be audited by rerun_state"),
        ({"outputs": None}, "a state link names the calls"),
        ({"multi_step": True}, "multi_step are for thought units"),
    ],
)
def test_a_state_link_that_contradicts_itself_is_refused(changes: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigurationError, match=said):
        links.register(_spec(**changes))
    assert "x->y" not in links.names()


def test_the_to_do_link_is_registered_with_the_loop_and_stays() -> None:
    spec = links.get("todo->action")
    assert (spec.unit, spec.strategy, spec.judged) == ("state", "rerun_state", "calls")
    with pytest.raises(ConfigurationError, match="loop's own links"):
        links.unregister("todo->action")
    with links.temporarily(_spec()):  # a state link of one's own registers like any other
        assert "x->y" in links.names()
