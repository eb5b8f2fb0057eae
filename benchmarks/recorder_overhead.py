"""What the recorder costs an agent run, measured side by side with LangChain's own callback floor.

Three ways, interleaved run by run in one process (rotating which goes first) so that machine noise
hits all alike: a bare run, a run with a handler that does nothing (the cost of LangChain's callback
machinery), and a run with :class:`~ariadne_lc.AriadneCallbackHandler` recording into memory (its
default: traces built and stored on its builder thread).

Time is CPU time, which other processes on a shared machine do not inflate: of the agent's thread
(the request path, what a user of the agent waits for; the headline) and of the whole process (which
adds the builder thread's work). Prints per way the median, what the handlers add over the bare run,
and the ratio recorder-added / do-nothing-added with a 95% paired-bootstrap interval over runs
(target: at most 1.2). Then the time spent inside the recorder's own callbacks, measured directly.

Run: ``python benchmarks/recorder_overhead.py [--runs 300] [--rounds 9]``.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel, calculator

TARGET = 1.2
WAYS = ("bare", "do-nothing handler", "ariadne recorder")


def three_step_script(messages: Sequence[BaseMessage]) -> AIMessage:
    turns = sum(isinstance(m, AIMessage) for m in messages)
    if turns < 2:
        return AIMessage(
            content=f"Step {turns}: I need the calculator for this part.",
            tool_calls=[{"name": "calculator", "args": {"expression": f"{turns + 2} * 7"}, "id": f"c{turns}"}],
        )
    return AIMessage(content="The total is 42.")


class NoOpHandler(BaseCallbackHandler):
    """Receives every callback and does nothing: LangChain's floor."""


class TimedRecorder(AriadneCallbackHandler):
    """The recorder with a stopwatch around its own hooks: its cost beyond LangChain's dispatch."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inside_ns = 0

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        start = time.perf_counter_ns()
        super().on_chain_start(*args, **kwargs)
        self.inside_ns += time.perf_counter_ns() - start

    def on_chain_end(self, *args: Any, **kwargs: Any) -> None:
        start = time.perf_counter_ns()
        super().on_chain_end(*args, **kwargs)
        self.inside_ns += time.perf_counter_ns() - start


def make_graph() -> Any:
    return create_agent(ScriptedChatModel(script=three_step_script), [calculator], checkpointer=InMemorySaver())


def run_once(graph: Any, thread: str, handlers: list[Any]) -> tuple[float, float]:
    """(agent-thread CPU, process CPU) seconds of one run (a new thread each time: the same work)."""
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if handlers:
        config["callbacks"] = handlers
    own, cpu = time.thread_time(), time.process_time()
    graph.invoke({"messages": [("user", "What is 6 times 7?")]}, config)
    return time.thread_time() - own, time.process_time() - cpu


def ratio(samples: dict[str, list[float]], idx: Sequence[int]) -> float:
    med = {name: statistics.median(samples[name][i] for i in idx) for name in WAYS}
    floor = med["do-nothing handler"] - med["bare"]
    return (med["ariadne recorder"] - med["bare"]) / floor if floor > 0 else float("inf")


def paired_interval(samples: dict[str, list[float]], draws: int = 1000, seed: int = 7) -> tuple[float, float]:
    """95% percentile interval of the ratio, resampling whole interleaved triplets (paired)."""
    rng = random.Random(seed)
    n = len(samples["bare"])
    stats = sorted(ratio(samples, [rng.randrange(n) for _ in range(n)]) for _ in range(draws))
    return stats[int(0.025 * draws)], stats[int(0.975 * draws) - 1]


def report(title: str, samples: dict[str, list[float]]) -> None:
    med = {name: statistics.median(values) for name, values in samples.items()}
    bare = med["bare"]
    print(f"\n{title}: median per run")
    for name in WAYS:
        print(f"  {name:<20} {med[name] * 1e3:8.3f} ms   ({med[name] - bare:+.4f} s = {med[name] / bare - 1:+.1%})")
    floor, added = med["do-nothing handler"] - bare, med["ariadne recorder"] - bare
    print(f"  added: do-nothing handler {floor * 1e3:+.3f} ms, recorder {added * 1e3:+.3f} ms")
    if floor <= 0:
        print("  the do-nothing handler's cost is not resolved here (noise); no ratio")
        return
    low, high = paired_interval(samples)
    value = ratio(samples, range(len(samples["bare"])))
    verdict = "within" if high <= TARGET else ("OVER" if low > TARGET else "not resolved against")
    print(f"  recorder / do-nothing = {value:.2f}  (95% CI {low:.2f} to {high:.2f}; {verdict} the {TARGET} target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="agent runs per way and round")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds")
    args = parser.parse_args()

    noop = NoOpHandler()
    recorder = AriadneCallbackHandler(store=InMemoryTraceStore())
    handlers: dict[str, Callable[[], list[Any]]] = {
        "bare": lambda: [],
        "do-nothing handler": lambda: [noop],
        "ariadne recorder": lambda: [recorder],
    }
    graphs = {name: make_graph() for name in WAYS}
    for name in WAYS:  # warm-up
        for i in range(20):
            run_once(graphs[name], f"warm-{i}", handlers[name]())
    recorder.flush()
    thread_cpu: dict[str, list[float]] = {name: [] for name in WAYS}
    process_cpu: dict[str, list[float]] = {name: [] for name in WAYS}
    for round_ in range(args.rounds):
        gc.collect()
        for i in range(args.runs):
            k = (i + round_) % 3
            for name in WAYS[k:] + WAYS[:k]:
                own, cpu = run_once(graphs[name], f"r{round_}-{i}", handlers[name]())
                thread_cpu[name].append(own)
                process_cpu[name].append(cpu)
    recorder.flush()
    print(f"3-step create_agent run, {args.runs} runs x {args.rounds} rounds, interleaved run by run")
    report("CPU time of the agent's thread (the request path)", thread_cpu)
    report("CPU time of the process (adds the recorder's builder thread)", process_cpu)

    timed = TimedRecorder(store=InMemoryTraceStore())
    graph = make_graph()
    inside: list[float] = []
    for i in range(args.runs):
        timed.inside_ns = 0
        run_once(graph, f"timed-{i}", [timed])
        inside.append(timed.inside_ns / 1e6)
    timed.flush()
    cuts = statistics.quantiles(inside, n=100)
    print(
        f"\ntime inside the recorder's callbacks per run, agent's thread: p50 {statistics.median(inside):.3f} ms, "
        f"p99 {cuts[98]:.3f} ms"
    )
    stats = recorder.stats
    print(f"traces recorded: {stats.recorded}, errors: {stats.errors}, dropped: {stats.dropped}")


if __name__ == "__main__":
    main()
