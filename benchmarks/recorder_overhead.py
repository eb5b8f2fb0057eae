"""What the recorder costs an agent run, measured side by side with LangChain's own callback floor.

Four ways, interleaved run by run in one process (rotating which goes first) so that machine noise
hits all alike: a bare run, a run with a handler that does nothing (the cost of LangChain's callback
machinery), a run with :class:`~ariadne_lc.AriadneCallbackHandler` recording into memory (its
default: traces built and stored on its builder thread), and one with the recorder as it was before it
followed tool calls into sub-agents (tool callbacks off): what recording sub-agents costs a single-agent run.

Time is the CPU time of the agent's thread (the request path), which other processes on a shared
machine do not inflate. Prints per way the median, what the handlers add over the bare run, and the
ratio recorder-added / do-nothing-added with a 95% paired-bootstrap interval over runs (target: at
most 1.2). The builder thread's work cannot be attributed by timing the process around each run
(it lands in whichever run is going on), so it is measured directly on the builder thread, per
trace, and added to the recorder's cost in a second, total ratio. Last, the time spent inside the
recorder's own callbacks on the agent's thread, measured directly, and how many traces were stored on
the agent's thread (must be none: reads of the store wait for the builder, the run never does).

Run: ``python benchmarks/recorder_overhead.py [--runs 300] [--rounds 9]``.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import threading
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
WAYS = ("bare", "do-nothing handler", "ariadne recorder", "recorder, no sub-agents")
"""The last: the recorder as it was before it followed tool calls into sub-agents (tool callbacks off), so that what
following them costs a single-agent run is measured side by side in the same run."""


def three_step_script(messages: Sequence[BaseMessage]) -> AIMessage:
    turns = sum(isinstance(m, AIMessage) for m in messages)
    if turns < 2:
        return AIMessage(
            content=f"Step {turns}: I need the calculator for this part.",
            tool_calls=[{"name": "calculator", "args": {"expression": f"{turns + 2} * 7"}, "id": f"c{turns}"}],
        )
    return AIMessage(content="The total is 42.")


class NotingStore(InMemoryTraceStore):
    """Counts the traces put on the thread that runs the agents."""

    def __init__(self, agent_thread: int) -> None:
        super().__init__()
        self.agent_thread = agent_thread
        self.on_agent_thread = 0

    def put(self, trace: Any) -> None:
        self.on_agent_thread += threading.get_ident() == self.agent_thread
        super().put(trace)


class NoOpHandler(BaseCallbackHandler):
    """Receives every callback and does nothing: LangChain's floor."""


class NoSubAgents(AriadneCallbackHandler):
    """The recorder with LangChain's tool callbacks switched off, as before it recorded sub-agents."""

    @property
    def ignore_agent(self) -> bool:
        return True


class TimedRecorder(AriadneCallbackHandler):
    """The recorder with stopwatches around its own hooks (its cost beyond LangChain's dispatch) and
    around the builder thread's work (CPU time of that thread)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inside_ns = 0
        self.builder_cpu: list[float] = []

    def _deliver(self, finished: Any) -> None:
        start = time.thread_time()
        super()._deliver(finished)
        self.builder_cpu.append(time.thread_time() - start)

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        start = time.thread_time_ns()
        super().on_chain_start(*args, **kwargs)
        self.inside_ns += time.thread_time_ns() - start

    def on_chain_end(self, *args: Any, **kwargs: Any) -> None:
        start = time.thread_time_ns()
        super().on_chain_end(*args, **kwargs)
        self.inside_ns += time.thread_time_ns() - start


def make_graph() -> Any:
    return create_agent(ScriptedChatModel(script=three_step_script), [calculator], checkpointer=InMemorySaver())


def run_once(graph: Any, thread: str, handlers: list[Any]) -> float:
    """Agent-thread CPU seconds of one run (a new LangGraph thread each time: the same work)."""
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if handlers:
        config["callbacks"] = handlers
    own = time.thread_time()
    graph.invoke({"messages": [("user", "What is 6 times 7?")]}, config)
    return time.thread_time() - own


def ratio(
    samples: dict[str, list[float]],
    idx: Sequence[int],
    extra: float = 0.0,
    way: str = "ariadne recorder",
    floor_way: str = "do-nothing handler",
) -> float:
    """What ``way`` adds over the bare run (plus ``extra``), relative to what ``floor_way`` adds."""
    med = {name: statistics.median(samples[name][i] for i in idx) for name in WAYS}
    floor = med[floor_way] - med["bare"]
    return (med[way] - med["bare"] + extra) / floor if floor > 0 else float("inf")


def paired_interval(
    samples: dict[str, list[float]],
    extra: Sequence[float] = (),
    draws: int = 1000,
    seed: int = 7,
    floor_way: str = "do-nothing handler",
) -> tuple[float, float]:
    """95% percentile interval of the ratio, resampling whole interleaved runs of every way (paired) and,
    for the total, the builder's per-trace costs."""
    rng = random.Random(seed)
    n = len(samples["bare"])
    stats = []
    for _ in range(draws):
        more = statistics.median(rng.choices(extra, k=len(extra))) if extra else 0.0
        stats.append(ratio(samples, [rng.randrange(n) for _ in range(n)], more, floor_way=floor_way))
    stats.sort()
    return stats[int(0.025 * draws)], stats[int(0.975 * draws) - 1]


def verdict(low: float, high: float) -> str:
    return "within" if high <= TARGET else ("OVER" if low > TARGET else "not resolved against")


def report(samples: dict[str, list[float]], builder: Sequence[float]) -> None:
    med = {name: statistics.median(values) for name, values in samples.items()}
    bare = med["bare"]
    print("\nCPU time of the agent's thread (the request path): median per run")
    for name in WAYS:
        print(f"  {name:<24} {med[name] * 1e3:8.3f} ms   ({med[name] / bare - 1:+.1%} vs bare)")
    floor, added = med["do-nothing handler"] - bare, med["ariadne recorder"] - bare
    built = statistics.median(builder)
    print(f"  added: do-nothing handler {floor * 1e3:+.3f} ms, recorder {added * 1e3:+.3f} ms")
    print(f"  builder thread, per trace (measured on it): {built * 1e3:.3f} ms")
    if floor <= 0:
        print("  the do-nothing handler's cost is not resolved here (noise); no ratio")
        return
    n = range(len(samples["bare"]))
    low, high = paired_interval(samples)
    print(
        f"  recorder / do-nothing, agent's thread = {ratio(samples, n):.2f}  "
        f"(95% CI {low:.2f} to {high:.2f}; {verdict(low, high)} the {TARGET} target)"
    )
    low, high = paired_interval(samples, builder)
    print(
        f"  recorder incl. its builder thread / do-nothing = {ratio(samples, n, built):.2f}  "
        f"(95% CI {low:.2f} to {high:.2f}; {verdict(low, high)} the {TARGET} target)"
    )
    before = "recorder, no sub-agents"
    if med[before] - bare > 0:
        low, high = paired_interval(samples, floor_way=before)
        print(
            f"  recorder / recorder before it followed tool calls into sub-agents, agent's thread = "
            f"{ratio(samples, n, floor_way=before):.2f}  (95% CI {low:.2f} to {high:.2f}; 1.00: unchanged)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="agent runs per way and round")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds")
    args = parser.parse_args()

    noop = NoOpHandler()
    store = NotingStore(threading.get_ident())
    recorder = AriadneCallbackHandler(store=store)  # as shipped: no stopwatch in the compared runs
    before = NoSubAgents(store=InMemoryTraceStore())
    handlers: dict[str, Callable[[], list[Any]]] = {
        "bare": lambda: [],
        "do-nothing handler": lambda: [noop],
        "ariadne recorder": lambda: [recorder],
        "recorder, no sub-agents": lambda: [before],
    }
    graphs = {name: make_graph() for name in WAYS}
    for name in WAYS:  # warm-up
        for i in range(20):
            run_once(graphs[name], f"warm-{i}", handlers[name]())
    recorder.flush()
    thread_cpu: dict[str, list[float]] = {name: [] for name in WAYS}
    for round_ in range(args.rounds):
        gc.collect()
        for i in range(args.runs):
            k = (i + round_) % len(WAYS)
            for name in WAYS[k:] + WAYS[:k]:
                thread_cpu[name].append(run_once(graphs[name], f"r{round_}-{i}", handlers[name]()))
    recorder.flush()
    before.flush()
    # A separate pass with stopwatches (they cost time themselves, so they stay out of the comparison).
    timed = TimedRecorder(store=InMemoryTraceStore())
    graph = make_graph()
    inside: list[float] = []
    for i in range(args.runs):
        timed.inside_ns = 0
        run_once(graph, f"timed-{i}", [timed])
        inside.append(timed.inside_ns / 1e6)
    timed.flush()
    print(f"3-step create_agent run, {args.runs} runs x {args.rounds} rounds, interleaved run by run")
    report(thread_cpu, timed.builder_cpu)
    cuts = statistics.quantiles(inside, n=100)
    print(
        f"\ntime inside the recorder's callbacks per run, agent's thread: p50 {statistics.median(inside):.3f} ms, "
        f"p99 {cuts[98]:.3f} ms"
    )
    stats = recorder.stats
    print(f"traces recorded: {stats.recorded}, errors: {stats.errors}, dropped: {stats.dropped}")
    print(f"traces stored on the agent's thread: {store.on_agent_thread} of {len(store.list_traces())}")


if __name__ == "__main__":
    main()
