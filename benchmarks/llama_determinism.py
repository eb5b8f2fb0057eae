"""Replay determinism and its price: how often an identical request gets a different reply from the local llama.cpp
server depending on the request before it, with and without llama.cpp's prompt-prefix reuse, and how long a call
takes either way.

Starts one server per mode of ``ARIADNE_LLAMA_PREFIX_CACHE`` (``whole``: ``0``, every prompt evaluated from an empty
cache; ``prefix``: ``1``, llama.cpp's reuse of the previous request's prefix; ``aligned``: the default, reuse of
whole chunks of earlier prompts only, so that every prompt is evaluated in the same chunks whatever came before),
sends each the ground-truth agents' requests (a thought, a bare answer; ``ariadne_lc.calibration.prompts``) for a
few benchmark questions in several orders (every request follows a different request each time, and once itself),
the servers' calls alternating so that all see the same load, and prints per mode: requests whose replies
differ across orders, repeats that differ from the request's first reply, replies that differ from the first mode's
first reply to the same request, seconds per call, and the time ratio to the first mode.

Run: ``python benchmarks/llama_determinism.py [--queries 4] [--modes whole,prefix,aligned] [--local-model smollm2]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from typing import Any

from langchain_core.messages import BaseMessage

from ariadne_lc.calibration.agents import ANSWER_MAX_TOKENS, THOUGHT_MAX_TOKENS
from ariadne_lc.calibration.prompts import answer_prompt, thought_prompt
from ariadne_lc.demo import load_demo_queries
from ariadne_lc.local import LOCAL_MODELS, LocalModelServer, local_model_path

MODE_ENV = {"whole": "0", "prefix": "1", "aligned": "aligned"}


def requests(n_queries: int) -> list[tuple[list[BaseMessage], dict[str, Any]]]:
    out = []
    for q in load_demo_queries(max(2, n_queries), seed=0)[:n_queries]:
        out.append((thought_prompt(q.question), {"stop": ["\n"], "max_tokens": THOUGHT_MAX_TOKENS}))
        out.append((answer_prompt(q.question), {"stop": ["\n"], "max_tokens": ANSWER_MAX_TOKENS}))
    return out


def orders(n: int) -> list[list[int]]:
    forward = list(range(n))
    return [forward, forward[::-1], forward[::2] + forward[1::2], [i for i in forward for _ in range(2)]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--modes", default="whole,prefix,aligned")
    parser.add_argument("--local-model", default="smollm2", choices=sorted(LOCAL_MODELS))
    args = parser.parse_args()
    spec = LOCAL_MODELS[args.local_model]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    reqs = requests(args.queries)
    servers: dict[str, LocalModelServer] = {}
    load: list[float] = []
    try:
        for mode in modes:
            env = {k: v for k, v in os.environ.items() if k != "ARIADNE_LLAMA_PREFIX_CACHE"}
            env.setdefault("OMP_WAIT_POLICY", "passive")
            env["ARIADNE_LLAMA_PREFIX_CACHE"] = MODE_ENV[mode]
            servers[mode] = LocalModelServer(local_model_path(args.local_model), model_alias=spec.alias, env=env)
            servers[mode].start()
        models = {
            mode: (s.completion_model if spec.base_model else s.chat_model)(timeout=600.0)
            for mode, s in servers.items()
        }
        replies: dict[str, dict[int, list[str]]] = {m: defaultdict(list) for m in modes}
        seconds: dict[str, list[float]] = {m: [] for m in modes}
        turn = 0
        for order in orders(len(reqs)):
            for i in order:
                messages, kwargs = reqs[i]
                turn += 1
                rotation = modes[turn % len(modes) :] + modes[: turn % len(modes)]
                for mode in rotation:
                    load.append(os.getloadavg()[0])
                    began = time.perf_counter()
                    reply = models[mode].invoke(messages, **kwargs)
                    seconds[mode].append(time.perf_counter() - began)
                    replies[mode][i].append(reply.text)
    finally:
        for s in servers.values():
            s.stop()
    print(
        f"replay determinism on {spec.label}: {len(reqs)} requests x {len(orders(len(reqs)))} orders, "
        f"load average {statistics.mean(load):.1f} (min {min(load):.1f}, max {max(load):.1f})"
    )
    print(
        f"{'mode':<9}{'requests differing':>20}{'repeats differing':>19}{'vs ' + modes[0]:>12}{'s/call':>9}{'ratio':>7}"
    )
    base = statistics.mean(seconds[modes[0]])
    first = {i: texts[0] for i, texts in replies[modes[0]].items()}
    for mode in modes:
        by_request = replies[mode]
        differing = sum(len(set(texts)) > 1 for texts in by_request.values())
        repeats = sum(len(texts) - 1 for texts in by_request.values())
        changed = sum(t != texts[0] for texts in by_request.values() for t in texts[1:])
        apart = sum(t != first[i] for i, texts in by_request.items() for t in texts)
        total = sum(len(texts) for texts in by_request.values())
        mean = statistics.mean(seconds[mode])
        print(
            f"{mode:<9}{differing:>13}/{len(by_request):<6}{changed:>12}/{repeats:<6}{apart:>6}/{total:<5}"
            f"{mean:>9.2f}{mean / base:>7.2f}"
        )
    for mode in modes:
        for i, texts in replies[mode].items():
            if len(set(texts)) > 1:
                print(f"  {mode} request {i}: " + " | ".join(repr(t[:40]) for t in dict.fromkeys(texts)))


if __name__ == "__main__":
    main()
