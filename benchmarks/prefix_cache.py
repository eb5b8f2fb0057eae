"""What a model server's prompt cache saves the replays of one run, on the local Qwen model (llama.cpp).

Every replay of a run re-sends the run's own history: the replay from step k makes the calls of steps k+1..n, each
prompt the one before it plus a turn, and every replay of the run starts with the same question and early steps.
llama.cpp keeps the last prompt's KV cache and evaluates only what follows the longest shared prefix, so replays
served in the audit's own order (one replay after another, each replay's calls in order) reuse most of each prompt;
served interleaved (round-robin over the replays, as concurrent audits of several runs sharing one server would be),
each call shares little with the call before it.

The same prompts are sent both ways, one token asked each (prompt processing is what the cache saves), and the wall
time of each way is printed side by side, with their ratio.

Run: ``PYTHONPATH=. python benchmarks/prefix_cache.py [--steps 10] [--model qwen2.5-coder-0.5b]`` (the qwen extra).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from ariadne_lc.local import LocalModelServer
from ariadne_lc.testing import lookup_question, stored_value


def run_history(steps: int) -> list[BaseMessage]:
    """A recorded run of ``steps`` lookups, as text turns (thought, then the tool's output as the next turn)."""
    messages: list[BaseMessage] = [
        SystemMessage("You add up stored values. Think one line, then look up the next key, then answer the sum."),
        HumanMessage(lookup_question(steps, 1)),
    ]
    total = 0
    for k in range(steps):
        messages.append(AIMessage(f"So far the total is {total}. Next I look up key {k} in the store."))
        value = stored_value(k, 1)
        total += value
        messages.append(HumanMessage(f"lookup(key={k}) returned {value}."))
    return messages


def replay_prompts(history: Sequence[BaseMessage], steps: int) -> list[list[list[BaseMessage]]]:
    """Per replay (from step k, its thought edited), the prompts of the calls after the edit, in order."""
    replays = []
    for k in range(steps):
        edited = list(history)
        at = 2 + 2 * k
        edited[at] = AIMessage(f"So far the total is {1000 + k}. Next I look up key {k} in the store.")
        replays.append([edited[: 2 + 2 * j] for j in range(k + 1, steps + 1)])
    return replays


def timed(model: object, prompts: Sequence[list[BaseMessage]]) -> float:
    started = time.perf_counter()
    for prompt in prompts:
        model.invoke(prompt)  # type: ignore[attr-defined]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    replays = replay_prompts(run_history(args.steps), args.steps)
    in_order = [p for replay in replays for p in replay]
    interleaved = [replay[i] for i in range(args.steps) for replay in replays if i < len(replay)]
    assert sorted(map(len, in_order)) == sorted(map(len, interleaved))
    with LocalModelServer.for_model(args.model, n_ctx=4096) as server:
        model = server.chat_model(max_tokens=1, temperature=0.0)
        model.invoke(in_order[0])  # load and warm up
        times: dict[str, list[float]] = {"audit order": [], "interleaved": []}
        for _ in range(args.rounds):  # alternated, so that drift on a shared machine hits both alike
            for name, prompts in (("audit order", in_order), ("interleaved", interleaved)):
                model.invoke([HumanMessage("Reset the cache with an unrelated prompt.")])
                times[name].append(timed(model, prompts))
    calls = len(in_order)
    print(f"{args.model}: {args.steps} steps, {len(replays)} replays, {calls} replayed calls, {args.rounds} rounds")
    for name, seconds in times.items():
        best = min(seconds)
        print(f"  {name:12} best {best:7.1f} s  {1000 * best / calls:6.0f} ms per call  (rounds: "
              f"{', '.join(f'{s:.1f}' for s in seconds)} s)")  # fmt: skip
    ratio = min(times["interleaved"]) / min(times["audit order"])
    print(f"  interleaved / audit order: {ratio:.2f}x (what the prefix cache saves the audit's own order)")


if __name__ == "__main__":
    main()
