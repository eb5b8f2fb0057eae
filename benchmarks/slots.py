"""Scored verdicts per minute on the local Qwen2.5-Coder-0.5B at 1, 2 and 4 slots, against one run at a time.

The demo's tool-calling agent (:func:`ariadne_lc.demo.tool_agent.build_tool_agent`, the demo's word problems, every
link audited with the demo's interventions and options) is recorded and audited once per setting, the settings one
after another in one run of the script:

* **one at a time**: one server (every core), ``audit_batch(max_concurrency=1)``: the demo today;
* **interleaved x2**: the same server, ``max_concurrency=2``: two runs share its one cache (what a pinned slot avoids);
* **N slots**: :class:`~ariadne_lc.local.LocalServerSlots` (N servers, the cores shared), ``max_concurrency=N``: each
  run pinned to one server (:mod:`ariadne_lc.slots`), its replays in step order on that server's cache.

Printed per setting: runs, model calls, scored verdicts (controls aside), the audit's wall time, verdicts per minute
and its ratio to one at a time, with the machine's load average. On a 2-core machine the model's own arithmetic is
the bound: more slots share the same cores.

Run: ``python benchmarks/slots.py [--runs 8] [--slots 2,4]`` (the local extra: ``make .venv/.stamps/local``).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import Auditor, InMemoryTraceStore
from ariadne_lc.calibration.link_questions import link_questions
from ariadne_lc.cli._demo import DEMO_QUESTION_SEED
from ariadne_lc.cli._demo_tools import DEMO_OBSERVATION_SWAPS, QWEN_DEMO_MODEL, TOOL_DEMO_INTERVENTIONS
from ariadne_lc.demo import DEMO_TOOLS
from ariadne_lc.demo.tool_agent import build_tool_agent, tool_agent_answer
from ariadne_lc.local import LocalModelServer, LocalServerSlots


@dataclass(frozen=True)
class Setting:
    name: str
    servers: Callable[[], Any]
    """Starts the servers (a context manager with ``chat_model``)."""
    concurrency: int


@dataclass
class Measured:
    runs: int
    calls: int
    verdicts: int
    seconds: float
    load: float

    @property
    def per_minute(self) -> float:
        return 60 * self.verdicts / self.seconds


def settings(slots: Sequence[int]) -> list[Setting]:
    one = Setting("one at a time", lambda: LocalModelServer.for_model(QWEN_DEMO_MODEL), 1)
    shared = Setting("interleaved x2 (one server)", lambda: LocalModelServer.for_model(QWEN_DEMO_MODEL), 2)
    pinned = [Setting(f"{n} slots", lambda n=n: LocalServerSlots(n, QWEN_DEMO_MODEL), n) for n in slots]
    return [one, shared, *pinned]


@contextmanager
def served(setting: Setting) -> Iterator[Any]:
    with setting.servers() as servers:
        yield servers.chat_model(max_tokens=128)


def measure(setting: Setting, runs: int) -> Measured:
    questions = link_questions(runs, seed=DEMO_QUESTION_SEED)
    store = InMemoryTraceStore()
    traces: list[Any] = []
    with served(setting) as model:
        agent = build_tool_agent(model, store, checkpointer=InMemorySaver(), synchronous=True, on_trace=traces.append)
        for q in questions:
            try:
                agent.invoke({"messages": [("user", q.text)]}, {"configurable": {"thread_id": uuid.uuid4().hex}})
            except Exception as exc:  # the trace records it; as the demo does, the others go on
                print(f"  a run failed: {type(exc).__name__}: {exc}")
        auditable = [t for t in traces if t.final_answer is not None]
        auditor = Auditor(
            agent, answer_extractor=tool_agent_answer, safe_tools=[t.name for t in DEMO_TOOLS],
            observation_swaps=DEMO_OBSERVATION_SWAPS,
        )  # fmt: skip
        started = time.perf_counter()
        report = auditor.audit_batch(
            auditable, step="all", interventions=list(TOOL_DEMO_INTERVENTIONS), max_concurrency=setting.concurrency
        )
        seconds = time.perf_counter() - started
    verdicts = sum(r.status == "scored" and not r.control for r in report.results)
    return Measured(len(auditable), sum(r.model_calls for r in report.results), verdicts, seconds, os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="runs of the agent recorded and audited per setting")
    parser.add_argument("--slots", default="2,4", help="slot counts measured, comma-separated")
    args = parser.parse_args()
    rows = []
    for setting in settings([int(n) for n in args.slots.split(",")]):
        measured = measure(setting, args.runs)
        rows.append((setting, measured))
        print(f"{setting.name}: {measured}", flush=True)
    base = rows[0][1].per_minute
    print(f"\n{os.cpu_count()} cores; {args.runs} runs of the demo's agent per setting, every link")
    print(f"{'setting':28} {'runs':>4} {'calls':>5} {'verdicts':>8} {'audit s':>8} {'verdicts/min':>12} {'x':>6} "
          f"{'load':>5}")  # fmt: skip
    for setting, m in rows:
        print(f"{setting.name:28} {m.runs:>4} {m.calls:>5} {m.verdicts:>8} {m.seconds:>8.1f} {m.per_minute:>12.2f} "
              f"{m.per_minute / base:>5.2f}x {m.load:>5.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
