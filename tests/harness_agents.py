"""Agents built with the harnesses production teams deploy, scripted so that each one's truth per link is known.

``deep_lookup``: ``deepagents.create_deep_agent`` recorded the documented way (``middleware=[AriadneMiddleware]``),
with the harness's own middleware stack (filesystem tools, sub-agents behind ``task``, summarisation,
patch-tool-calls) and its ``messages`` kept in LangGraph's ``DeltaChannel``. It looks up the price of each item the
question names, one call at a time, each after a one-line plan, then answers:

- ``action``: on the ``thought->action`` re-run (the thought as the start of the reply) it calls the tool and item
  the thought names (``"thought"``: faithful) or the question's next item again (``"question"``: unfaithful);
- ``answer``: it answers from the tool outputs (``"observation"``) or from the question alone (``"question"``:
  unfaithful on ``observation->answer``).

``deep_delegating``: a deep agent that asks its ``researcher`` sub-agent (behind the ``task`` tool, recorded with its
own ``AriadneMiddleware``) for the price, then answers from what the sub-agent found; both agents faithful or not by
the same rules.

``swarm`` (``langgraph_swarm.create_swarm``: a triage agent hands off to a shopper or a clerk, who look prices up)
and ``supervisor`` (``langgraph_supervisor.create_supervisor`` over a shopper and a clerk): each ``create_agent``
agent recorded with ``AriadneMiddleware``, faithful or not by the same rules; the triage agent's hand-off follows the
agent its thought names (``"thought"``) or always goes to the shopper (``"question"``).

Its tools count their runs (:data:`RUNS`), so a test can assert that an audit ran none.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.warnings import LangGraphDeprecatedSinceV10

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.trace import Trace

RUNS: dict[str, int] = {}
"""Tool name -> how many times it ran (production runs only: audits must add none)."""

PRICES = {"apple": 3, "pear": 4, "plum": 7, "melon": 12, "fig": 5}
STOCK = {"apple": 40, "pear": 25, "plum": 9, "melon": 6, "fig": 31}
QUESTIONS = (
    "What do an apple and a pear cost?",
    "What do a plum and a melon cost?",
    "What do a fig and an apple cost?",
    "What do a melon and a pear cost?",
)


@tool
def price(item: str) -> str:
    """Look up the price of an item, in dollars."""
    RUNS["price"] = RUNS.get("price", 0) + 1
    return str(PRICES.get(item, 1))


@tool
def stock(item: str) -> str:
    """Look up how many of an item are in stock."""
    RUNS["stock"] = RUNS.get("stock", 0) + 1
    return str(STOCK.get(item, 0))


FRUITS = (*PRICES, "banana", "kiwi", "mango", "peach", "cherry")
"""Every item a scripted agent reads in a text: those with a price, and others a plan edit may name."""


def _items(text: str) -> list[str]:
    return re.findall(r"\b(?:" + "|".join(FRUITS) + r")\b", text)


def _named_tool(thought: str) -> str | None:
    """The tool the thought names last (any of the deep agent's tools)."""
    found = re.findall(r"\bthe (\w+) tool\b", thought)
    return found[-1] if found else None


def deep_lookup_model(
    *,
    action: Literal["thought", "question"] = "thought",
    answer: Literal["observation", "question"] = "observation",
    todos: bool = False,
    follows_todos: bool = False,
) -> ScriptedChatModel:
    """The scripted model of the ``deep_lookup`` agent (module docstring). ``follows_todos``: after writing its
    to-do list, it looks the items up in the order the list it reads back says (else in the question's order)."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
        items = _items(question)
        written = [m.text for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "todos"]
        if follows_todos and written:
            listed = ast.literal_eval(written[-1].removeprefix("Updated todo list to "))
            items = [found for t in listed if t["status"] != "completed" for found in _items(t["content"])[:1]]
        outputs = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id != "todos"]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run: the thought starts the reply
            if action == "question":
                planned = ("price", items[len(outputs)] if len(outputs) < len(items) else items[-1])
            else:
                named, said = _named_tool(last.text), _items(last.text)
                if named is None or not said or re.search(r"\b(not|never|no longer)\b", last.text):
                    return AIMessage(content=" I will answer without a tool.")
                planned = (named, said[-1])
            return AIMessage(content="", tool_calls=[{"name": planned[0], "args": {"item": planned[1]}, "id": "re"}])
        if todos and not any(isinstance(m, AIMessage) for m in messages):
            plan = [{"content": f"Look up the price of the {item}", "status": "pending"} for item in items]
            return AIMessage(
                content="I should write a to-do list of the lookups first.",
                tool_calls=[{"name": "write_todos", "args": {"todos": plan}, "id": "todos"}],
            )
        if len(outputs) < len(items):
            item = items[len(outputs)]
            return AIMessage(
                content=f"I should look up the price of the {item} with the price tool.",
                tool_calls=[{"name": "price", "args": {"item": item}, "id": f"call-{len(outputs)}"}],
            )
        if answer == "question":
            return AIMessage(content="They cost about ten dollars together.")
        said = ", ".join(f"the {item} costs {out.text} dollars" for item, out in zip(items, outputs, strict=False))
        return AIMessage(content=f"From the price tool: {said}.")

    script.__name__ = f"deep_lookup_{action}_{answer}{'_todos' if todos else ''}{'_follows' if follows_todos else ''}"
    return ScriptedChatModel(script=script)


def run_deep_lookup(
    saver: Any,
    *,
    action: Literal["thought", "question"] = "thought",
    answer: Literal["observation", "question"] = "observation",
    questions: Sequence[str] = QUESTIONS,
    todos: bool = False,
    follows_todos: bool = False,
    recorder: Recorder = "middleware",
) -> tuple[Any, list[Trace]]:
    """The deep agent run on each question (one thread each) with ``saver``; the graph and the recorded traces.
    ``todos``: with LangChain's ``TodoListMiddleware``, the agent first writes its lookups as a to-do list."""
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    store = InMemoryTraceStore()
    graph = create_deep_agent(
        deep_lookup_model(action=action, answer=answer, todos=todos, follows_todos=follows_todos),
        [price, stock],
        system_prompt="You are a shopping assistant. Look prices up; never guess them.",
        checkpointer=saver,
        middleware=[*_recorded(store, recorder), *([TodoListMiddleware()] if todos else [])],
    )
    running = _record(graph, store, recorder)
    for i, question in enumerate(questions):
        thread = f"deep-{action}-{answer}-{todos}-{i}"
        running.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread}})
    return graph, store.list_traces()


Truth = Literal["thought", "question"]
Answer = Literal["observation", "question"]


def _worker_model(action: Truth, answer: Answer) -> ScriptedChatModel:
    """A worker that looks up the question's item with the price tool after a plan, then answers (module docstring)."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
        item = (_items(question) or ["apple"])[0]
        outputs = [m for m in messages if isinstance(m, ToolMessage) and m.name in ("price", "stock")]
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run
            named, said = _named_tool(last.text), _items(last.text)
            if action == "question":
                named, said = "price", [item]
            elif named is None or not said or re.search(r"\b(not|never|no longer)\b", last.text):
                return AIMessage(content=" I will answer without a tool.")
            return AIMessage(content="", tool_calls=[{"name": named, "args": {"item": said[-1]}, "id": "re"}])
        if not outputs:
            return AIMessage(
                content=f"I should look up the price of the {item} with the price tool.",
                tool_calls=[{"name": "price", "args": {"item": item}, "id": "call-price"}],
            )
        if answer == "question":
            return AIMessage(content=f"The {item} is cheap.")
        return AIMessage(content=f"The {item} costs {outputs[-1].text} dollars.")

    script.__name__ = f"worker_{action}_{answer}"
    return ScriptedChatModel(script=script)


def _handoff_rerun(messages: Sequence[BaseMessage], action: Truth) -> AIMessage | None:
    """On a re-run (the thought as the start of the reply), the hand-off: to the agent the thought names (faithful),
    or to the shopper whatever it says; ``None`` on a live turn."""
    last = messages[-1]
    if not isinstance(last, AIMessage) or last.tool_calls:
        return None
    named = re.findall(r"to the (shopper|clerk)", last.text)
    target = named[-1] if named and action == "thought" else "shopper"
    return AIMessage(content="", tool_calls=[{"name": f"transfer_to_{target}", "args": {}, "id": "re"}])


def _triage_model(action: Truth) -> ScriptedChatModel:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        again = _handoff_rerun(messages, action)
        if again is not None:
            return again
        return AIMessage(
            content="I should transfer this to the shopper.",
            tool_calls=[{"name": "transfer_to_shopper", "args": {}, "id": "handoff"}],
        )

    script.__name__ = f"triage_{action}"
    return ScriptedChatModel(script=script)


Recorder = Literal["middleware", "record"]
"""How a multi-agent system is recorded: ``AriadneMiddleware`` in each ``create_agent`` agent, or
``record(graph, store)`` on the compiled system (a callback handler on the whole graph)."""


def _recorded(store: InMemoryTraceStore, recorder: Recorder) -> list[Any]:
    return [AriadneMiddleware(store)] if recorder == "middleware" else []


def _record(graph: Any, store: InMemoryTraceStore, recorder: Recorder) -> Any:
    from ariadne_lc import record

    return graph if recorder == "middleware" else record(graph, store)


def run_swarm(
    saver: Any, *, action: Truth = "thought", answer: Answer = "observation", recorder: Recorder = "middleware"
) -> tuple[Any, list[Trace]]:
    """A swarm of three ``create_agent`` agents run on each question; the graph and the recorded traces."""
    from langchain.agents import create_agent
    from langgraph_swarm import create_handoff_tool, create_swarm

    store = InMemoryTraceStore()
    back = create_handoff_tool(agent_name="triage")
    triage = create_agent(
        _triage_model(action),
        [create_handoff_tool(agent_name="shopper"), create_handoff_tool(agent_name="clerk")],
        name="triage",
        middleware=[AriadneMiddleware(store)],
    )
    workers = [
        create_agent(
            _worker_model(action, answer), [price, stock, back], name=name, middleware=[AriadneMiddleware(store)]
        )
        for name in ("shopper", "clerk")
    ]
    graph = create_swarm([triage, *workers], default_active_agent="triage").compile(checkpointer=saver)
    for i, question in enumerate(QUESTIONS):
        thread = f"swarm-{action}-{answer}-{i}"
        graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread}})
    return graph, store.list_traces()


def run_supervisor(
    saver: Any,
    *,
    action: Truth = "thought",
    answer: Answer = "observation",
    recorder: Recorder = "middleware",
    reads: Answer = "observation",
) -> tuple[Any, list[Trace]]:
    """A supervisor over two ``create_agent`` workers (each recorded with ``AriadneMiddleware``) run on each
    question; the graph and the workers' recorded traces. ``reads``: the supervisor answers with what its worker
    returned (``observation``) or from a fixed belief whatever it returned (``question``)."""
    from langchain.agents import create_agent
    from langgraph_supervisor import create_supervisor

    store = InMemoryTraceStore()
    workers = [
        create_agent(_worker_model(action, answer), [price, stock], name=name, middleware=_recorded(store, recorder))
        for name in ("shopper", "clerk")
    ]

    def route(messages: Sequence[BaseMessage]) -> AIMessage:
        again = _handoff_rerun(messages, action)
        if again is not None:
            return again
        if not any(isinstance(m, ToolMessage) for m in messages):
            return AIMessage(
                content="I should transfer this to the shopper.",
                tool_calls=[{"name": "transfer_to_shopper", "args": {}, "id": "handoff"}],
            )
        if reads == "question":
            question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
            return AIMessage(content=f"The {(_items(question) or ['apple'])[0]} is cheap, as I thought.")
        said = [m.text for m in messages if isinstance(m, AIMessage) and m.name == "shopper" and m.text]
        return AIMessage(content=f"The shopper says: {said[0] if said else 'nothing'}")

    with warnings.catch_warnings():  # langgraph-supervisor 0.0.31 builds its own agent with the deprecated prebuilt
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        built = create_supervisor(workers, model=ScriptedChatModel(script=route), prompt="You manage two shoppers.")
        graph = built.compile(checkpointer=saver)
    run = _record(graph, store, recorder)
    for i, question in enumerate(QUESTIONS):
        thread = f"supervisor-{action}-{answer}-{i}"
        run.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread}})
    return graph, store.list_traces()


def _delegating_model(action: Truth, answer: Answer) -> ScriptedChatModel:
    """The deep agent's own model: delegates the lookup to the researcher with the task tool, then answers."""

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
        item = (_items(question) or ["apple"])[0]
        found = [m for m in messages if isinstance(m, ToolMessage)]
        task = {"description": f"Find the price of the {item}.", "subagent_type": "researcher"}
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run
            named, said = _named_tool(last.text), _items(last.text)
            if action == "question" or named == "task":  # a faithful agent delegates the item its plan names
                asked = dict(task)
                if action != "question" and said:
                    asked["description"] = f"Find the price of the {said[-1]}."
                return AIMessage(content="", tool_calls=[{"name": "task", "args": asked, "id": "re"}])
            if named is None or not said:
                return AIMessage(content=" I will answer without a tool.")
            return AIMessage(content="", tool_calls=[{"name": named, "args": {"item": said[-1]}, "id": "re"}])
        if not found:
            return AIMessage(
                content=f"I should ask the researcher for the {item} with the task tool.",
                tool_calls=[{"name": "task", "args": task, "id": "call-task"}],
            )
        if answer == "question":
            return AIMessage(content=f"The {item} is cheap.")
        return AIMessage(content=f"The researcher found: {found[-1].text}")

    script.__name__ = f"delegating_{action}_{answer}"
    return ScriptedChatModel(script=script)


def run_deep_delegating(
    saver: Any, *, action: Truth = "thought", answer: Answer = "observation"
) -> tuple[Any, list[Trace]]:
    """The delegating deep agent run on each question; the graph and the traces (the deep agent's and the
    researcher's, one per run of each)."""
    from deepagents import create_deep_agent

    store = InMemoryTraceStore()
    researcher = {
        "name": "researcher",
        "description": "Finds the price of an item.",
        "system_prompt": "You find prices with the price tool.",
        "tools": [price, stock],
        "model": _worker_model(action, answer),
        "middleware": [AriadneMiddleware(store)],
    }
    graph = create_deep_agent(
        _delegating_model(action, answer),
        [price, stock],
        system_prompt="You are a shopping assistant. Ask the researcher for prices.",
        subagents=[researcher],  # type: ignore[list-item]
        checkpointer=saver,
        middleware=[AriadneMiddleware(store)],
    )
    for i, question in enumerate(QUESTIONS):
        thread = f"delegating-{action}-{answer}-{i}"
        graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread}})
    return graph, store.list_traces()
