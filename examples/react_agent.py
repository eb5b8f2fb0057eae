"""Run the demo ReAct agent on SmolLM2-135M served locally by llama.cpp, and print what it did.

Needs the offline model (see ``ariadne_lc.local.INSTALL_HINT``). Takes a few seconds:

    python examples/react_agent.py
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.demo import DEMO_QUESTIONS, build_react_agent, extract_final_answer
from ariadne_lc.local import LocalModelServer


def main() -> None:
    with LocalModelServer() as server:
        print(f"llama.cpp server at {server.base_url} (started in {server.startup_seconds:.1f} s)")
        # constrained=True sends a grammar that only the llama.cpp server understands: every reply then parses.
        agent = build_react_agent(server.chat_model(), checkpointer=InMemorySaver(), constrained=True)
        for number, question in enumerate(DEMO_QUESTIONS[:2], start=1):
            config: RunnableConfig = {"configurable": {"thread_id": f"demo-{number}"}}
            result = agent.invoke({"messages": [HumanMessage(question)]}, config)
            print(f"\n=== {question}")
            for message in result["messages"]:
                message.pretty_print()
            print(f"--> answer: {extract_final_answer(result['messages'][-1])}")


if __name__ == "__main__":
    main()
