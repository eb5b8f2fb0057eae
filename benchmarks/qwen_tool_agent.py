"""The demo's tool-calling agent on Qwen2.5-Coder-0.5B: accuracy and wall time per question.

Builds :func:`ariadne_lc.demo.tool_agent.build_tool_agent` on a local Qwen server, asks the demo's benchmark
questions (``load_demo_queries(n, seed=0)``: n each from GSM8K, ARC-Challenge, CommonsenseQA) and prints, per question,
the tool calls, the final message, whether it matches the gold answer, and the wall time. Not a test.

    PYTHONPATH=. python benchmarks/qwen_tool_agent.py --per-domain 2
"""

from __future__ import annotations

import argparse
import os
import time
import uuid

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from ariadne_lc.ablation import answers_match
from ariadne_lc.demo import load_demo_queries
from ariadne_lc.demo.tool_agent import build_tool_agent
from ariadne_lc.local import LocalModelServer
from ariadne_lc.store import InMemoryTraceStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-domain", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=96)
    args = parser.parse_args()
    queries = load_demo_queries(args.per_domain, seed=0)
    store = InMemoryTraceStore()
    right = 0
    walls = []
    with LocalModelServer.for_model("qwen2.5-coder-0.5b", n_ctx=4096) as server:
        agent = build_tool_agent(server.chat_model(max_tokens=args.max_tokens), store, checkpointer=InMemorySaver())
        for query in queries:
            began = time.monotonic()
            config = {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 12}
            try:
                state = agent.invoke({"messages": [HumanMessage(query.question)]}, config)
            except GraphRecursionError:  # counted wrong; the checkpoint has the messages so far
                state = agent.get_state(config).values
                print("    (recursion limit reached)")
            wall = time.monotonic() - began
            walls.append(wall)
            final = state["messages"][-1]
            calls = [
                (c["name"], c["args"]) for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls
            ]
            thoughts = [m.text for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls and m.text]
            ok = answers_match(final.text, query.answer)
            right += ok
            print(f"{query.id} gold={query.answer!r} ok={ok} wall={wall:.1f}s calls={calls} thoughts={thoughts}")
            print(f"    final: {final.text[:160]!r}", flush=True)
    print(f"accuracy {right}/{len(queries)}; wall per question mean {sum(walls) / len(walls):.1f} s, "
          f"max {max(walls):.1f} s; load average {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
