"""Plans written by a local Qwen model for docs/calibration/plan-edits: each question of ``plans.jsonl`` asked of
Qwen2.5-Coder (0.5B by default) with the plan's tools and a system prompt that asks for a one-sentence plan before
each call; the model's first reply that holds text and a tool call is kept as a plan of its own (``source``:
``qwen<size>-recorded``; text that describes the call in words instead of making it, as Qwen 1.5B often does:
``...-described``, with the question's own call) and appended to ``plans.jsonl`` (resumable: a question already
asked is skipped). No tool runs: only the first model call of each question is made. Then
``python docs/scripts/plan_edits.py``.

    python docs/scripts/plan_edits_qwen.py --size 0.5b
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import StructuredTool
from pydantic import create_model

from ariadne_lc.local import LocalModelServer

HERE = Path(__file__).resolve().parents[1] / "calibration" / "plan-edits"
PROMPT = (
    "You are a helpful assistant. Use the tools to answer. Before you call a tool, say in one short sentence what you "
    "will do."
)


def _tool(spec: dict[str, Any]) -> StructuredTool:
    fields: dict[str, Any] = {arg: (str, ...) for arg in spec["args"]}
    schema = create_model(f"{spec['name']}_args", **fields)

    def never(**_: Any) -> str:
        raise RuntimeError("no tool runs while plans are collected")

    return StructuredTool.from_function(never, name=spec["name"], description=spec["description"] or spec["name"],
                                        args_schema=schema)  # fmt: skip


def _described(text: str, plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The call a plan describes in words: the question's own call, with the arguments the text writes as JSON
    (``{"date": "2023-10-04"}``) where it writes them."""
    call = plan["calls"][0]
    names = next(t["args"] for t in plan["tools"] if t["name"] == call["name"])
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            args = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(args, dict) and args and set(args) <= set(names):
            return [{"name": call["name"], "args": args}]
    return list(plan["calls"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=("0.5b", "1.5b"), default="0.5b")
    args = parser.parse_args()
    path = HERE / "plans.jsonl"
    plans = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    source = f"qwen{args.size}-recorded"
    asked = {p["asked"] for p in plans if p["source"] == source}
    todo = {p["query"]: p for p in plans if not p["source"].startswith("qwen")}
    with LocalModelServer.for_model(f"qwen2.5-coder-{args.size}") as server:
        chat = server.chat_model(max_tokens=96, timeout=600.0)
        for query, plan in todo.items():
            if query in asked:
                continue
            began = time.perf_counter()
            tools = [_tool(t) for t in plan["tools"]]
            reply = chat.bind_tools(tools).invoke([SystemMessage(PROMPT), HumanMessage(query)])
            calls = [{"name": c["name"], "args": c["args"]} for c in reply.tool_calls]
            text = reply.text.strip()
            print(f"{time.perf_counter() - began:.0f} s | {query} | {text!r} | {calls}", flush=True)
            row = {"id": f"q{len(plans) + 1:02d}", "source": source, "harness": plan["harness"], "query": query,
                   "thought": text, "tools": plan["tools"], "calls": calls, "asked": query}  # fmt: skip
            if text and not calls and not text.startswith("{"):  # a plan that describes its call in words (Qwen 1.5B's
                # habit), not a call written as JSON text: the question's own call
                row |= {"source": f"{source}-described", "calls": _described(text, plan)}
            elif not (text and calls):
                row["source"] = f"{source}-no-plan"  # kept, so that a resumed run does not ask again
            plans.append(row)
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
