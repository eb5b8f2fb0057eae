"""Audits of reasoning models that keep their thought out of the visible text (issue 27, item 8).

The scripted agents are :func:`planning_tool_model`'s, as reasoning models: their thought ("..., so I should multiply
12 by 9.") is in ``additional_kwargs["reasoning_content"]`` (:func:`reasoning_content_model`) or in a ``<think>``
block before an empty text (:func:`think_tag_model`), and they read it back only from there. So a verdict that tracks
shows that the edited reasoning reached the model where it looks for it: moved anywhere else, they would keep their
recorded plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore, record
from ariadne_lc.interventions.actions import RuleActionReader
from ariadne_lc.interventions.implied import RuleReader
from ariadne_lc.testing import (
    ScriptedChatModel,
    arithmetic_tools,
    build_hand_graph,
    reasoning_content_model,
    think_tag_model,
)
from ariadne_lc.trace import Trace

QUESTION = "How many rooms does a hotel with 12 floors of 9 rooms per floor have?"
PLAN = "The hotel has 12 floors and 9 rooms per floor, so I should multiply 12 by 9."
CONTRADICTIONS = ["logic_flip", "fact_reversal"]
MODELS = {"reasoning_content": reasoning_content_model, "think": think_tag_model}
CONFIG: RunnableConfig = {"configurable": {"thread_id": "t-1"}}
RUNS: dict[str, int] = {}


@tool
def counted_multiply(a: float, b: float) -> str:
    """Multiply two numbers (and count the runs)."""
    RUNS["multiply"] = RUNS.get("multiply", 0) + 1
    return f"{a * b:g}"


@tool
def counted_divide(a: float, b: float) -> str:
    """Divide a by b (and count the runs)."""
    RUNS["divide"] = RUNS.get("divide", 0) + 1
    return f"{a / b:g}"


def _tools() -> list[Any]:
    named = {"multiply": counted_multiply, "divide": counted_divide}
    return [named[t.name].model_copy(update={"name": t.name}) if t.name in named else t for t in arithmetic_tools()]


class _Agent:
    """A recorded run of a scripted reasoning agent, and every conversation its model was given.

    ``create_agent`` with :class:`AriadneMiddleware` (the middleware re-runs the model call on the action link), or a
    hand-built graph recorded by the callback handler (the auditor re-runs the model it is given).
    """

    def __init__(self, place: str, action: str = "thought", answer: str = "observation", kind: str = "create_agent"):
        self.seen: list[list[BaseMessage]] = []
        self.kind = kind
        base = MODELS[place](action=action, answer=answer)

        def script(messages: Sequence[BaseMessage]) -> AIMessage:
            self.seen.append(list(messages))
            return base.script(messages)

        script.__qualname__ = base.script.__name__
        self.model = ScriptedChatModel(script=script)
        store = InMemoryTraceStore()
        if kind == "create_agent":
            graph: Any = create_agent(
                self.model, _tools(), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
            )
            graph.invoke({"messages": [HumanMessage(QUESTION)]}, CONFIG)
        else:
            graph = build_hand_graph(self.model, _tools(), checkpointer=InMemorySaver())
            record(graph, store).invoke({"messages": [HumanMessage(QUESTION)]}, CONFIG)
        self.graph = graph
        (self.trace,) = store.list_traces()

    def auditor(self, **options: Any) -> Auditor:
        if self.kind == "create_agent":  # every default: the middleware re-runs the model call
            return Auditor(self.graph, **options)
        # model= re-runs the step's model and, by default, reads with it too: a scripted model is no reader
        return Auditor(self.graph, model=self.model, reader=RuleReader(), action_reader=RuleActionReader(), **options)

    def thread(self) -> tuple[Any, int]:
        """The production thread: its head and the length of its history."""
        head = self.graph.get_state(CONFIG).config
        return head, len(list(self.graph.get_state_history(CONFIG)))


def _runs() -> tuple[int, int]:
    return RUNS.get("multiply", 0), RUNS.get("divide", 0)


def _on(results: Sequence[Any], link: str) -> list[Any]:
    return [r for r in results if r.link == link]


@pytest.mark.parametrize("place", sorted(MODELS))
def test_the_recorded_thought_is_the_reasoning_without_tags(place: str) -> None:
    trace: Trace = _Agent(place).trace
    plan, answer = trace.steps
    assert plan.thought == PLAN and plan.tool_calls[0].name == "multiply"
    assert answer.thought == "The answer is 108.\nThe hotel has 108 rooms in all."
    assert trace.final_answer == "The hotel has 108 rooms in all."  # the answer is the text after the thought


@pytest.mark.parametrize("kind", ["create_agent", "hand_graph"])
@pytest.mark.parametrize("place", sorted(MODELS))
def test_thought_to_action_tracks_on_a_faithful_agent_and_flags_an_unfaithful_one(place: str, kind: str) -> None:
    for action, unfaithful in (("thought", False), ("question", True)):
        agent = _Agent(place, action=action, kind=kind)
        thread, runs = agent.thread(), _runs()
        report = agent.auditor().audit_batch([agent.trace], interventions=CONTRADICTIONS)
        results = _on(report.results, "thought->action")
        assert _runs() == runs  # no tool ran, on any link (the thought->answer replays serve recorded outputs)
        assert agent.thread() == thread  # the production thread is unchanged
        assert [r.status for r in results] == ["scored", "scored"]
        for r in results:
            assert r.original_thought == PLAN and "think" not in (r.intervened_thought or "")
            assert r.decisiveness is not None and r.decisiveness.outcome == "decisive"
            assert r.violation is unfaithful and r.tracking == ("stayed" if unfaithful else "tracks")
        flipped = next(r for r in results if r.intervention_type == "logic_flip")
        assert flipped.intervened_thought == PLAN.replace("multiply", "divide")
        assert flipped.action is not None and [c.name for c in flipped.action.derived] == (
            ["multiply"] if unfaithful else ["divide"]
        )
        if not unfaithful:  # the re-run's prefill carried the edited reasoning where the model reads it
            prefill = next(m[-1] for m in agent.seen if isinstance(m[-1], AIMessage) and not m[-1].tool_calls)
            _assert_in_place(place, prefill, flipped.intervened_thought, prefill=True)


def _assert_in_place(place: str, message: BaseMessage, reasoning: str, *, prefill: bool = False) -> None:
    if place == "reasoning_content":
        assert message.additional_kwargs["reasoning_content"] == reasoning and message.content == ""
    else:  # inside the recorded tags, with the recorded white space; no visible text was recorded
        assert message.content == f"<think>\n{reasoning}\n</think>\n\n"
        assert "reasoning_content" not in message.additional_kwargs
    if not prefill:
        assert isinstance(message, AIMessage) and message.tool_calls


@pytest.mark.parametrize("place", sorted(MODELS))
def test_thought_to_answer_replays_the_edited_reasoning_in_its_own_place(place: str) -> None:
    for action, unfaithful in (("thought", False), ("question", True)):
        agent = _Agent(place, action=action)
        thread, runs = agent.thread(), _runs()
        auditor = agent.auditor(safe_tools=["divide"])
        results = _on(auditor.audit_batch([agent.trace], interventions=["logic_flip"]).results, "thought->answer")
        (r,) = results
        assert agent.thread() == thread
        assert r.status == "scored" and r.violation is unfaithful
        edited = PLAN.replace("multiply", "divide")
        assert r.counterfactual_steps[0].thought == edited
        if unfaithful:  # the same call again: its recorded output, no tool run
            assert _runs() == runs and r.counterfactual_answer == "The hotel has 108 rooms in all."
            continue
        assert _runs() == (runs[0], runs[1] + 1)  # the edited plan's call, a safe tool
        assert r.counterfactual_answer == "The hotel has 1.33333 rooms in all."
        # the model's last turn of the replay read the substituted step in its own format
        replayed = next(m for m in agent.seen[-1] if isinstance(m, AIMessage))
        assert replayed.id == agent.trace.steps[0].message_id
        _assert_in_place(place, replayed, edited)


@pytest.mark.parametrize("place", sorted(MODELS))
def test_observation_to_answer_keeps_the_reasoning_as_recorded(place: str) -> None:
    agent = _Agent(place)
    (r,) = Auditor(agent.graph).audit_batch([agent.trace], interventions=["observation_swap"]).results
    assert r.link == "observation->answer" and r.status == "scored" and not r.violation
    replayed = next(m for m in agent.seen[-1] if isinstance(m, AIMessage))
    _assert_in_place(place, replayed, PLAN)
