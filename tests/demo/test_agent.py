"""The demo ReAct agent's graph, driven by a scripted chat model (no server)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from ariadne_lc.demo import MODEL_NODE, REACT_METADATA_KEY, TOOLS_NODE, build_react_agent, extract_final_answer
from ariadne_lc.demo._react import FIRST_TURN_INSTRUCTION, FORCE_FINAL_INSTRUCTION


class ScriptedReActModel(BaseChatModel):
    """Replies from a script in order and records every prompt and keyword it was called with."""

    script: list[str]
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-react"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        self.calls.append({"stop": stop, **kwargs})
        reply = self.script[min(len(self.prompts) - 1, len(self.script) - 1)]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _kinds(messages: Sequence[BaseMessage]) -> list[str]:
    return [type(m).__name__ for m in messages]


def test_graph_has_model_and_tools_nodes() -> None:
    agent = build_react_agent(ScriptedReActModel(script=["Final Answer: x"]), checkpointer=InMemorySaver())
    assert {MODEL_NODE, TOOLS_NODE} <= set(agent.get_graph().nodes)


def test_tool_call_then_final_answer() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]",
            "Thought: It is 42.\nFinal Answer: 42",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [HumanMessage("6 boxes of 7 muffins?")]}, _config("t1"))
    messages = out["messages"]
    assert _kinds(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    step, observation, final = messages[1], messages[2], messages[3]
    assert step.content == "6 boxes of 7 muffins is 6 times 7."
    assert step.tool_calls[0]["name"] == "calculator" and step.tool_calls[0]["args"] == {"expression": "6 * 7"}
    assert observation.tool_call_id == step.tool_calls[0]["id"] and observation.content == "42"
    assert final.content == "It is 42.\nFinal Answer: 42" and not final.tool_calls
    assert extract_final_answer(final) == "42"
    assert final.response_metadata[REACT_METADATA_KEY]["status"] == "final"
    assert model.prompts[1][-1].text == "Observation: 42"
    assert model.calls[0]["stop"] == ["\nObservation:", "\nQuestion:"]


def test_unparseable_reply_becomes_final_answer_with_raw_text() -> None:
    agent = build_react_agent(ScriptedReActModel(script=["I   like\nturtles"]), checkpointer=InMemorySaver())
    final = agent.invoke({"messages": [HumanMessage("q")]}, _config("t2"))["messages"][-1]
    assert final.content == "Final Answer: I like turtles" and not final.tool_calls
    # a first reply that does not think and act is asked for again once; a second one that does not either is kept
    assert final.response_metadata[REACT_METADATA_KEY] == {
        "status": "unparsed",
        "raw": "I   like\nturtles",
        "first_turn_retried": True,
    }


def test_turn_cap_forces_an_answer() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: first I add one and one together.\nAction: calculator[1 + 1]",
            "Thought: two\nAction: calculator[2 + 2]",
            "Thought: three\nAction: calculator[3 + 3]",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver(), max_turns=2, constrained=True)
    messages = agent.invoke({"messages": [HumanMessage("loop?")]}, _config("t3"))["messages"]
    assert _kinds(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[-1].response_metadata[REACT_METADATA_KEY]["status"] == "forced"
    assert not messages[-1].tool_calls and extract_final_answer(messages[-1]) is not None
    grammars = [call["extra_body"]["grammar"] for call in model.calls]
    assert "(action)\n" in grammars[0] and "{32,240}" in grammars[0]  # the first turn: a thought, then an action
    assert "action | final" in grammars[1] and "action" not in grammars[-1]


def test_edited_thought_reaches_the_model_on_resume() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]",
            "Thought: ok\nFinal Answer: 42",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver())
    cfg = _config("t4")
    agent.invoke({"messages": [HumanMessage("6 boxes of 7?")]}, cfg)
    fork = next(s for s in agent.get_state_history(cfg) if s.next == (TOOLS_NODE,))
    original = fork.values["messages"][-1]
    edited = original.model_copy(update={"content": "6 times 7 is surely 13."})
    resumed_cfg = agent.update_state(fork.config, {"messages": [edited]}, as_node=MODEL_NODE)
    agent.invoke(None, resumed_cfg)
    resumed_prompt = model.prompts[-1]
    assert resumed_prompt[-2].text == "Thought: 6 times 7 is surely 13.\nAction: calculator[6 * 7]"
    assert isinstance(resumed_prompt[-1], HumanMessage) and resumed_prompt[-1].text == "Observation: 42"
    ai_ids = [m.id for m in agent.get_state(resumed_cfg).values["messages"] if isinstance(m, AIMessage)]
    assert ai_ids[0] == original.id


def test_repeated_action_forces_an_answer() -> None:
    model = ScriptedReActModel(script=["Thought: I look up the sun once more.\nAction: lookup[sun]"])
    agent = build_react_agent(model, checkpointer=InMemorySaver(), max_turns=10)
    messages = agent.invoke({"messages": [HumanMessage("loop?")]}, _config("t6"))["messages"]
    assert _kinds(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[-1].response_metadata[REACT_METADATA_KEY]["status"] == "forced"
    assert messages[-1].content == "Final Answer: Thought: I look up the sun once more. Action: lookup[sun]"
    assert model.prompts[-1][-1].text == FORCE_FINAL_INSTRUCTION


async def test_async_invocation() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: I should look up the capital of France.\nAction: lookup[capital of France]",
            "Final Answer: Paris",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver())
    out = await agent.ainvoke({"messages": [HumanMessage("Capital of France?")]}, _config("t5"))
    assert isinstance(out["messages"][2], ToolMessage) and "Paris" in out["messages"][2].content
    assert extract_final_answer(out["messages"][-1]) == "Paris"


@pytest.mark.parametrize("kwargs", [{"max_turns": 0}, {"tools": []}])
def test_invalid_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        build_react_agent(ScriptedReActModel(script=["x"]), checkpointer=InMemorySaver(), **kwargs)


def test_a_first_answer_at_once_is_asked_again_and_leaves_a_step_to_audit() -> None:
    from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore
    from ariadne_lc.audit import select_steps

    model = ScriptedReActModel(
        script=[
            "Thought: easy.\nFinal Answer: 42",  # answers at once: nothing would be left to audit
            "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]",
            "Thought: The calculator says 42.\nFinal Answer: 42",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver())
    store = InMemoryTraceStore()
    handler = AriadneCallbackHandler(store=store, synchronous=True)
    config: RunnableConfig = {**_config("t7"), "callbacks": [handler]}
    messages = agent.invoke({"messages": [HumanMessage("6 boxes of 7 muffins?")]}, config)["messages"]
    assert _kinds(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[1].response_metadata[REACT_METADATA_KEY]["first_turn_retried"] is True
    assert messages[3].response_metadata[REACT_METADATA_KEY]["first_turn_retried"] is False  # only the first turn
    assert model.prompts[1][-1].text == FIRST_TURN_INSTRUCTION and model.prompts[0][-1].text.startswith("Question:")
    (trace,) = store.list_traces()
    assert select_steps(trace, "auto") == [0] and trace.steps[0].thought == "6 boxes of 7 muffins is 6 times 7."


def test_a_too_short_first_thought_is_asked_again() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: multiply.\nAction: calculator[6 * 7]",
            "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]",
            "Thought: It is 42.\nFinal Answer: 42",
        ]
    )
    messages = build_react_agent(model, checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage("6 boxes of 7 muffins?")]}, _config("t8")
    )["messages"]
    assert messages[1].content == "6 boxes of 7 muffins is 6 times 7." and len(model.prompts) == 3


def test_every_question_of_a_thread_starts_with_the_first_turn_grammar() -> None:
    model = ScriptedReActModel(
        script=[
            "Thought: 6 boxes of 7 muffins is 6 times 7.\nAction: calculator[6 * 7]",
            "Thought: It is 42.\nFinal Answer: 42",
            "Thought: 2 boxes of 3 pens is 2 times 3 pens.\nAction: calculator[2 * 3]",
            "Thought: It is 6.\nFinal Answer: 6",
        ]
    )
    agent = build_react_agent(model, checkpointer=InMemorySaver(), constrained=True)
    for question in ("6 boxes of 7 muffins?", "2 boxes of 3 pens?"):
        agent.invoke({"messages": [HumanMessage(question)]}, _config("t9"))
    grammars = [call["extra_body"]["grammar"] for call in model.calls]
    assert ["(action)\n" in g for g in grammars] == [True, False, True, False]
