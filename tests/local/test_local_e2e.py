"""End to end on the real offline model: llama.cpp serving SmolLM2-135M, the demo agent, real tools.

The 135M model's answers are not checked for correctness, only the protocol: every run ends in a final
``AIMessage`` and every tool call is answered by a ``ToolMessage``.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.demo import DEMO_QUESTIONS, REACT_METADATA_KEY, build_react_agent, extract_final_answer
from ariadne_lc.local import DEFAULT_MODEL_ALIAS, LocalModelServer


def test_server_answers_the_openai_api(local_server: LocalModelServer) -> None:
    assert local_server.is_running and local_server.base_url.startswith("http://127.0.0.1:")
    assert local_server.startup_seconds is not None and local_server.startup_seconds > 0
    with urllib.request.urlopen(f"{local_server.base_url}/models", timeout=10) as response:
        models = json.loads(response.read())
    assert [m["id"] for m in models["data"]] == [DEFAULT_MODEL_ALIAS]
    reply = local_server.chat_model(max_tokens=8).invoke("Say hello.")
    assert isinstance(reply, AIMessage) and reply.text


@pytest.mark.parametrize("constrained", [True, False], ids=["grammar", "free-text"])
def test_agent_runs_end_to_end(local_server: LocalModelServer, constrained: bool) -> None:
    agent = build_react_agent(
        local_server.chat_model(max_tokens=96), checkpointer=InMemorySaver(), constrained=constrained, max_turns=3
    )
    for number, question in enumerate(DEMO_QUESTIONS[:2]):
        config: RunnableConfig = {"configurable": {"thread_id": f"e2e-{constrained}-{number}"}}
        messages = agent.invoke({"messages": [HumanMessage(question)]}, config)["messages"]
        final = messages[-1]
        assert isinstance(final, AIMessage) and not final.tool_calls
        assert extract_final_answer(final) is not None
        calls = [call["id"] for m in messages if isinstance(m, AIMessage) for call in m.tool_calls]
        answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
        assert answered == calls
        if constrained:
            statuses = {m.response_metadata[REACT_METADATA_KEY]["status"] for m in messages if isinstance(m, AIMessage)}
            assert "unparsed" not in statuses


async def test_agent_runs_async(local_server: LocalModelServer) -> None:
    agent = build_react_agent(local_server.chat_model(max_tokens=96), checkpointer=InMemorySaver(), constrained=True)
    config: RunnableConfig = {"configurable": {"thread_id": "async"}}
    out = await agent.ainvoke({"messages": [HumanMessage(DEMO_QUESTIONS[0])]}, config)
    assert extract_final_answer(out["messages"][-1]) is not None
