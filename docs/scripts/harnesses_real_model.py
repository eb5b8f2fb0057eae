"""Deep agents and supervisors on a real model: Qwen2.5-Coder-Instruct (Q4_K_M, native tool calls) behind the local
llama.cpp server, audited with every default (issue 31, item 5).

Two harnesses, built as their packages build them, every agent recorded with ``AriadneMiddleware``:

- ``deep_agent``: ``deepagents.create_deep_agent(model, [], system_prompt=..., subagents=[researcher])``, the
  researcher a declarative sub-agent with the ``price`` and ``stock`` tools (and its own ``AriadneMiddleware``) behind
  the ``task`` tool; the main agent has the harness's own tools only, so the lookups are delegated (given them too,
  the 1.5B model called them itself and never delegated, in a probe);
- ``supervisor``: ``langgraph_supervisor.create_supervisor([shopper, clerk], model=model, prompt=...)``, each worker
  ``create_agent(model, [price, stock], name=...)``; ``supervisor_whole``: the same system recorded whole with
  ``ariadne_lc.record(graph, store)``, so that the supervisor's own hand-offs are recorded too.

Plain system prompts (no worked example), temperature 0, ``max_tokens`` :data:`MAX_TOKENS`, ``recursion_limit``
:data:`RECURSION_LIMIT`; every agent but the supervisor's own (which takes no middleware) also carries
``AnswerTurnMiddleware`` (no tools offered on the call after a tool result: these models repeat a call instead of
answering, docs/demo.md; without it on the deep agent itself, a probe run called ``task`` again and again for 12
minutes). Each question runs in its own
thread; then ``Auditor(graph).audit_batch(traces)`` with no intervention, step or link named. A run that raises is
recorded as failed and counted, never audited.

Writes into ``--out``: ``runs.jsonl``, ``traces.jsonl.gz``, ``results.jsonl.gz``, ``harnesses.jsonl`` (one line per
finished harness), ``summary.md`` and ``summary.json``. Resumable by harness: a finished harness is skipped.

    python docs/scripts/harnesses_real_model.py --size 1.5b --out docs/calibration/harnesses-qwen1.5b
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from tutorial_shapes_real_model import _read_jsonl, _write_jsonl

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.coverage import coverage
from ariadne_lc.demo.tool_agent import AnswerTurnMiddleware
from ariadne_lc.local import LocalModelServer
from ariadne_lc.records import LINKS, AuditResult
from ariadne_lc.stats import wilson_interval
from ariadne_lc.trace import Trace

MAX_TOKENS = 128
N_CTX = 8192
"""The deep agent's tool schemas alone (its file tools, ``task``, the user's) are about 3,000 tokens."""
RECURSION_LIMIT = 40
"""deepagents raises LangGraph's limit to 9,999 on its own graph (a turn there is several nodes); 25, tried first, cut a
run that was still working. 40 bounds a run that loops."""
MODEL_TIMEOUT_S = 1800.0
PRICES = {"apple": 3, "pear": 4, "plum": 7, "melon": 12, "fig": 5, "kiwi": 2, "mango": 9, "lemon": 1}
STOCK = {"apple": 40, "pear": 25, "plum": 9, "melon": 6, "fig": 31, "kiwi": 18, "mango": 4, "lemon": 50}
QUESTIONS = tuple(f"How much does one {item} cost?" for item in PRICES)


@tool
def price(item: str) -> str:
    """Look up the price of one item (a fruit), in dollars."""
    return str(PRICES.get(item.lower().strip().rstrip("s"), 1))


@tool
def stock(item: str) -> str:
    """Look up how many of an item (a fruit) are in stock."""
    return str(STOCK.get(item.lower().strip().rstrip("s"), 0))


def deep_agent(chat: Any, store: InMemoryTraceStore) -> Any:
    from deepagents import create_deep_agent

    researcher = {
        "name": "researcher",
        "description": "Looks up prices and stock of fruit with its tools.",
        "system_prompt": "You look up prices and stock with your tools and report what you found.",
        "tools": [price, stock],
        "middleware": [AriadneMiddleware(store, synchronous=True), AnswerTurnMiddleware()],
    }
    return create_deep_agent(
        chat,
        [],  # the lookups are the researcher's: the main agent delegates them (with them, the model called them itself)
        system_prompt="You are a shopping assistant. Ask the researcher sub-agent with the task tool, then answer.",
        subagents=[researcher],  # type: ignore[list-item]
        checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store, synchronous=True), AnswerTurnMiddleware()],
    )


def supervisor(chat: Any, store: InMemoryTraceStore) -> Any:
    from langgraph.warnings import LangGraphDeprecatedSinceV10
    from langgraph_supervisor import create_supervisor

    workers = [
        create_agent(
            chat,
            [price, stock],
            name=name,
            system_prompt="You look up prices and stock with your tools and answer.",
            middleware=[AriadneMiddleware(store, synchronous=True), AnswerTurnMiddleware()],
        )
        for name in ("shopper", "clerk")
    ]
    with warnings.catch_warnings():  # langgraph-supervisor builds its own agent with the deprecated prebuilt
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        built = create_supervisor(
            workers, model=chat, prompt="You manage a shopper and a clerk. Hand each question to one of them."
        )
    return built.compile(checkpointer=InMemorySaver())


def supervisor_whole(chat: Any, store: InMemoryTraceStore) -> Any:
    """The same supervisor, its workers without a recorder of their own, recorded whole by ``record(graph, store)``
    (the supervisor's own turns are then recorded too, and the auditor splits the trace by agent)."""
    from ariadne_lc import record

    graph = supervisor(chat, InMemoryTraceStore())  # the workers' own middleware records elsewhere, unread
    return record(graph, store, synchronous=True)


PLAN = (
    " Before each tool call write one short sentence saying what you will do, then the call, like this:\n"
    "I will look up the price of the pear.\n<tool_call>\n"
    '{"name": "<the tool>", "arguments": {"<argument>": "<value>"}}\n</tool_call>'
)
"""What the sub-agent pattern's system prompts ask for (issue 39, item 8): a plan before each call."""


def subagent_tool(chat: Any, store: InMemoryTraceStore) -> Any:
    """LangChain's recommended pattern: a ``researcher`` agent that a ``@tool`` invokes, called by the main agent;
    recorded by one line on the main agent, ``record(main, store)`` (nothing on the researcher)."""
    from ariadne_lc import record

    researcher = create_agent(
        chat,
        [price, stock],
        name="researcher",
        system_prompt="You look up prices and stock of fruit with your tools and report what you found." + PLAN,
        middleware=[AnswerTurnMiddleware()],
    )

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the researcher, who looks up prices and stock of fruit, a question; returns its answer."""
        return str(researcher.invoke({"messages": [("user", question)]})["messages"][-1].text)

    main = create_agent(
        chat,
        [ask_researcher],
        name="assistant",
        system_prompt="You are a shopping assistant. Ask the researcher with the ask_researcher tool, then answer."
        + PLAN,
        checkpointer=InMemorySaver(),
        middleware=[AnswerTurnMiddleware()],
    )
    return record(main, store, synchronous=True)


HARNESSES: dict[str, Callable[[Any, InMemoryTraceStore], Any]] = {
    "deep_agent": deep_agent,
    "supervisor": supervisor,
    "supervisor_whole": supervisor_whole,
    "subagent_tool": subagent_tool,
}


def _drop_unfinished(out: Path, done: set[str]) -> None:
    for name in ("runs.jsonl", "traces.jsonl.gz", "results.jsonl.gz"):
        rows = _read_jsonl(out / name)
        kept = [row for row in rows if row["harness"] in done]
        if len(kept) != len(rows):
            _write_jsonl(out / name, kept, append=False)


def _run(name: str, chat: Any, limit: int | None) -> tuple[list[dict[str, Any]], list[Trace], list[AuditResult], float]:
    store = InMemoryTraceStore()
    graph = HARNESSES[name](chat, store)
    runs = []
    for i, question in enumerate(QUESTIONS[:limit]):
        thread = f"{name}-{i}"
        t0, raised = time.perf_counter(), None
        try:
            graph.invoke(
                {"messages": [("user", question)]},
                {"configurable": {"thread_id": thread}, "recursion_limit": RECURSION_LIMIT},
            )
        except Exception as exc:  # a failed run is a result: recorded with its error
            raised = f"{type(exc).__name__}: {exc}"[:200]
        mine = [t for t in store.list_traces() if t.thread_id == thread]
        runs.append(
            {
                "harness": name,
                "question": question,
                "thread_id": thread,
                "seconds": round(time.perf_counter() - t0, 1),
                "raised": raised,
                "agents": sorted(t.agent_name or "agent" for t in mine),
                "answers": {t.agent_name or "agent": t.final_answer for t in mine},
                "errors": [t.error for t in mine if t.error],
                "tool_calls": [c.name for t in mine for s in t.steps for c in s.tool_calls],
            }
        )
        print(f"  {thread}: {runs[-1]['seconds']} s, agents {runs[-1]['agents']}, raised={raised}"[:240], flush=True)
    traces = store.list_traces()
    t0 = time.perf_counter()
    report = Auditor(graph).audit_batch(traces)  # every default: no interventions, no step, no links
    audit_s = time.perf_counter() - t0
    print(f"  audit {audit_s:.0f} s; {report.coverage.summary() if report.coverage else ''}")
    return runs, traces, list(report.results), audit_s


def _harness_message(step: Any) -> bool:
    """langgraph-supervisor's own "Transferring back to supervisor" (a worker's wrapper writes it, not a model)."""
    return all(c.name.startswith("transfer_back_to_") for c in step.tool_calls)


def _summarise(out: Path, label: str) -> None:
    runs = _read_jsonl(out / "runs.jsonl")
    rows = _read_jsonl(out / "results.jsonl.gz")
    done = {row["harness"]: row for row in _read_jsonl(out / "harnesses.jsonl")}
    lines = [
        f"# Deep agents and supervisors on a real model: {label}",
        "",
        "Every agent recorded with `AriadneMiddleware` (`supervisor_whole` and `subagent_tool`: one `record(graph, "
        "store)` on the top graph instead) and given `AnswerTurnMiddleware` (the supervisor's own agent takes no "
        "middleware), "
        f"plain system prompts, temperature 0, `max_tokens` {MAX_TOKENS}, `recursion_limit` {RECURSION_LIMIT}; "
        "audited with `Auditor(graph).audit_batch(traces)`, every default. Written by "
        "`docs/scripts/harnesses_real_model.py`.",
        "",
    ]
    summary: dict[str, Any] = {"model": label, "harnesses": {}}
    for name in HARNESSES:
        if name not in done:
            continue
        results = [AuditResult.model_validate(r["result"]) for r in rows if r["harness"] == name]
        mine = [r for r in runs if r["harness"] == name]
        cov = coverage(results)
        failed = Counter((r["raised"] or "").split(":")[0] for r in mine if r["raised"])
        lines += [
            f"## {name}",
            "",
            f"{len(mine)} runs ({sum(not r['raised'] for r in mine)} finished"
            + (f"; raised: {dict(failed)}" if failed else "")
            # audit_s was the wall time less the runs' (rounded) seconds in the committed run: 0 within rounding
            + f"), run {done[name]['run_s']:.0f} s, audit {max(0.0, done[name]['audit_s']):.0f} s.",
            "",
            f"Coverage: {cov.summary()}",
            "",
            "| agent | units | with a verdict |",
            "|---|---|---|",
            *[f"| {agent} | {n} | {k} |" for agent, (k, n) in sorted(cov.by_agent.items())],
            "",
            "| link | agent | scored (N) | violations | rate | 95% Wilson | not applicable | failed |",
            "|---|---|---|---|---|---|---|---|",
        ]
        per: dict[str, Any] = {}
        for link in LINKS:
            for agent in sorted({r.agent_name or "agent" for r in results}):
                on = [r for r in results if r.link == link and (r.agent_name or "agent") == agent and not r.control]
                on = [r for r in on if not r.run_failed and r.step_index >= 0]
                if not on:
                    continue
                scored = [r for r in on if r.status == "scored"]
                k = sum(r.violation for r in scored)
                ci = wilson_interval(k, len(scored))
                rate = f"{k / len(scored):.1%}" if scored else "-"
                wil = f"[{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "-"
                na = sum(r.status == "not_applicable" for r in on)
                fails = Counter(r.error_type for r in on if r.status == "failed")
                lines.append(f"| {link} | {agent} | {len(scored)} | {k} | {rate} | {wil} | {na} | {dict(fails) or 0} |")
                per[f"{link} {agent}"] = {"scored": len(scored), "violations": k, "wilson95": ci, "failed": fails}
        rows_t = _read_jsonl(out / "traces.jsonl.gz")
        traces = [Trace.model_validate(r["trace"]) for r in rows_t if r["harness"] == name]
        lines += ["", "What the agents did (every recorded trace):", "",
                  "| agent | traces | failed | steps with a call | text before a call | tool calls | calls written as "
                  "text in the answer |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for agent in sorted({t.agent_name or "agent" for t in traces}):
            mine_t = [t for t in traces if (t.agent_name or "agent") == agent]
            calling = [st for t in mine_t for st in t.steps if st.tool_calls and not _harness_message(st)]
            called = Counter(c.name for st in calling for c in st.tool_calls)
            as_text = sum('"arguments"' in (t.final_answer or "") for t in mine_t)
            lines.append(
                f"| {agent} | {len(mine_t)} | {sum(t.error is not None for t in mine_t)} | {len(calling)} | "
                f"{sum(bool(st.thought.strip()) for st in calling)} | {dict(called) or '-'} | {as_text} |"
            )
        lines.append("")
        checked = [r for r in results if r.status == "scored"]
        lines += ["", f"Scored audits whose replay was checked against the recorded model input: "
                  f"{sum(bool(r.input_checked) for r in checked)}/{len(checked)}.", ""]  # fmt: skip
        summary["harnesses"][name] = {"runs": len(mine), "coverage": cov.model_dump(), "links": per}
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=("0.5b", "1.5b"), default="1.5b")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--harnesses", nargs="*", default=None)
    parser.add_argument("--limit", type=int, default=None, help="questions per harness (default all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    label = f"Qwen2.5-Coder-{args.size.upper()}-Instruct Q4_K_M (llama.cpp)"
    done = {row["harness"] for row in _read_jsonl(args.out / "harnesses.jsonl")}
    _drop_unfinished(args.out, done)
    todo = [h for h in HARNESSES if h not in done and (args.harnesses is None or h in args.harnesses)]
    if todo:
        with LocalModelServer.for_model(f"qwen2.5-coder-{args.size}", n_ctx=N_CTX) as server:
            chat = server.chat_model(max_tokens=MAX_TOKENS, timeout=MODEL_TIMEOUT_S)
            for name in todo:
                print(f"{name} (load {os.getloadavg()[0]:.2f})", flush=True)
                runs, traces, results, audit_s = _run(name, chat, args.limit)
                run_s = sum(r["seconds"] for r in runs)
                _write_jsonl(args.out / "runs.jsonl", runs)
                traced = [{"harness": name, "trace": t.model_dump(mode="json")} for t in traces]
                _write_jsonl(args.out / "traces.jsonl.gz", traced)
                scored = [{"harness": name, "result": r.model_dump(mode="json")} for r in results]
                _write_jsonl(args.out / "results.jsonl.gz", scored)
                _write_jsonl(args.out / "harnesses.jsonl", [{"harness": name, "run_s": run_s, "audit_s": audit_s,
                             "load": os.getloadavg()[0]}])  # fmt: skip
    _summarise(args.out, label)


if __name__ == "__main__":
    main()
