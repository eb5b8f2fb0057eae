"""``ariadne-lc demo`` on a tool-calling agent: Qwen2.5-Coder-0.5B-Instruct behind ``create_agent`` with the demo's
tools and :class:`~ariadne_lc.AriadneMiddleware`, audited with every default on every link (docs/method.md#links).

The questions are one-operation word problems (a 0.5B model answers GSM8K's multi-step questions at once, without
a tool): they need the calculator, so every run leaves a thought that plans a call. The demo's tools are pure, so
the ``thought->answer`` replays may run a call the contradicted thought leads to (``safe_tools``); with
side-effecting tools they would say "not testable" instead.
"""

from __future__ import annotations

import queue
import sqlite3
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ariadne_lc.audit import Auditor
from ariadne_lc.cli._common import console
from ariadne_lc.cli._pipeline import CallBudget, audit_traces
from ariadne_lc.records import AuditReport
from ariadne_lc.slots import pinned
from ariadne_lc.store import SQLiteResultStore, SQLiteTraceStore
from ariadne_lc.trace import Trace

__all__ = ["QWEN_DEMO_MODEL", "ToolDemo", "qwen_available", "run_tool_demo"]

QWEN_DEMO_MODEL = "qwen2.5-coder-0.5b"
"""The local model of the tool-calling demo (``LocalModelServer.for_model``)."""

TOOL_DEMO_INTERVENTIONS = (
    "logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "conclusion_swap", "observation_swap",
    "rerun", "paraphrase",
)  # fmt: skip
"""Every contradiction, the observation swap, and both controls."""

DEMO_SLOTS = 2
"""Local servers the demo runs, each a slot (:class:`~ariadne_lc.local.LocalServerSlots`): the runs are recorded and
audited two at a time, each pinned to one server's prompt cache. On 2 cores, 16% more verdicts per minute than one
server and one run at a time, the same verdicts (``benchmarks/slots.py``; 4 slots: 7%)."""

DEMO_OBSERVATION_SWAPS = 3
"""Other values per tool output (``Auditor(observation_swaps=...)``): a step has one call but about three decisive
contradictions, so three false results give the ``observation->answer`` link as many scored audits as the others."""


def qwen_available() -> str | None:
    """``None`` when the Qwen model can be served here, else why not (the extra is missing: which part, how to
    install it)."""
    try:
        from ariadne_lc.local import qwen_model_path

        qwen_model_path()
    except Exception as exc:  # a missing part, a missing llama-cpp-python: the demo falls back and says why
        return f"{type(exc).__name__}: {exc}"
    return None


@dataclass(frozen=True, slots=True)
class ToolDemo:
    """What the tool-calling demo ran and found."""

    report: AuditReport
    traces: list[Trace]
    name: str


def run_tool_demo(
    questions: list[Any], *, output: Path, kinds: list[str], step: Any, budget: CallBudget, tau: float, lam: int,
    tracer_provider: Any,
) -> ToolDemo:  # fmt: skip
    """Serve Qwen, run the agent on ``questions`` (recorded by the middleware), audit every trace on every link."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from ariadne_lc.demo import DEMO_TOOLS
    from ariadne_lc.demo.tool_agent import build_tool_agent, tool_agent_answer
    from ariadne_lc.local import LocalServerSlots

    state = output / "state"
    traces: list[Trace] = []
    name = "Qwen2.5-Coder-0.5B-Instruct (llama.cpp, local, native tool calls)"
    with LocalServerSlots(DEMO_SLOTS, QWEN_DEMO_MODEL) as servers:
        conn = sqlite3.connect(state / "checkpoints.db", check_same_thread=False)
        agent = build_tool_agent(
            servers.chat_model(max_tokens=128),  # a thought that runs long must still reach its call
            SQLiteTraceStore(state / "traces.db"),
            checkpointer=SqliteSaver(conn),
            synchronous=True,
            on_trace=traces.append,
        )
        prefix = f"demo-{uuid.uuid4().hex[:6]}"
        free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(DEMO_SLOTS):
            free.put(slot)

        def record(q: Any) -> None:
            if budget.exhausted():
                return
            config = {
                "configurable": {"thread_id": f"{prefix}-{q.id.replace('/', '-')}"},
                "metadata": {"query_id": q.id.replace("/", "-"), "domain": q.domain},
                "tags": [f"domain:{q.domain}", f"license:{q.license}"],
            }
            slot = free.get()
            try:
                with pinned(slot):  # each run on one server, as its audit will be
                    agent.invoke({"messages": [("user", q.question)]}, config)
            except Exception as exc:  # the trace records the error; the demo goes on
                console.print(f"[yellow]query {q.id} failed: {type(exc).__name__}: {exc}[/yellow]")
            finally:
                free.put(slot)

        with ThreadPoolExecutor(DEMO_SLOTS, thread_name_prefix="ariadne-demo") as pool:
            list(pool.map(record, questions))
        order = {f"{prefix}-{q.id.replace('/', '-')}": i for i, q in enumerate(questions)}
        traces.sort(key=lambda t: order.get(t.thread_id or "", len(order)))  # the questions' order, as recorded
        auditable = [t for t in traces if t.final_answer is not None]
        console.print(f"recorded {len(traces)} runs ({len(auditable)} with an answer); auditing every link with "
                      f"{', '.join(kinds)}")  # fmt: skip
        auditor = Auditor(
            agent,
            tracer_provider=tracer_provider,
            answer_extractor=tool_agent_answer,
            tau=tau,
            lam=lam,
            safe_tools=[t.name for t in DEMO_TOOLS],
            observation_swaps=DEMO_OBSERVATION_SWAPS,
        )
        report = audit_traces(
            auditor, auditable, interventions=kinds, step=step, results=SQLiteResultStore(state / "results.db"),
            budget=budget, concurrency=DEMO_SLOTS,
        )  # fmt: skip
        conn.close()
    return ToolDemo(report=report, traces=traces, name=name)
