"""The tutorial-shaped agents of ``tests/tutorial_agents.py`` on a real model: Qwen2.5-Coder-Instruct (0.5B or 1.5B,
Q4_K_M, native tool calls) behind the local llama.cpp server, audited with every default (issue 27, done-when 2).

Each shape is ``create_agent(model, shape.tools, system_prompt=..., checkpointer=InMemorySaver(),
middleware=[AriadneMiddleware(store), AnswerTurnMiddleware()])``: a plain system prompt (:data:`PROMPTS`, ``plain`` by
default; ``plan`` also asks for a sentence before each call), no worked example, the
shape's real ``@tool`` tools. ``AnswerTurnMiddleware`` offers no tools on the call after a tool result, because these
models repeat a call instead of answering. The shape's questions and the few of :data:`EXTRA_QUESTIONS` are run one
thread each (``recursion_limit`` :data:`RECURSION_LIMIT`); then ``Auditor(graph).audit_batch(traces)``, with no
intervention, step or link named. A run that raises (the recursion limit, a model error) is recorded by the
middleware as a failed trace and counted by the auditor, never audited.

Coverage is reported twice: as the library reports it (failed runs listed, their units not counted) and over the
units of the runs that end with an answer (no error and a non-empty final answer), which is the issue's measure.

Writes into ``--out``: ``runs.jsonl`` (one line per run), ``traces.jsonl.gz`` and ``results.jsonl.gz`` (shape + the
record's JSON), ``shapes.jsonl`` (one line per finished shape: its coverage, run and audit seconds, load),
``sessions.jsonl`` (wall and load per session), ``summary.md`` and ``summary.json``. Resumable by shape: a shape in
``shapes.jsonl`` is skipped; the lines of a shape a stopped session left unfinished are dropped and it is run again
(the audit needs the graph whose checkpoints the runs wrote, which lives in memory).

    python docs/scripts/tutorial_shapes_real_model.py --size 1.5b --out docs/calibration/tutorial-shapes-qwen1.5b
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.coverage import coverage
from ariadne_lc.demo.tool_agent import AnswerTurnMiddleware
from ariadne_lc.local import LocalModelServer
from ariadne_lc.records import LINKS, AuditResult, Coverage
from ariadne_lc.stats import wilson_interval
from ariadne_lc.trace import Trace
from tests.tutorial_agents import SHAPES, Shape

PROMPTS = {
    "plain": "You are a helpful assistant. Use the tools to answer.",
    "plan": "You are a helpful assistant. Use the tools to answer. Before you call a tool, say in one short sentence "
    "what you will do.",
}
"""System prompts without a worked example: ``plain`` (the issue's measure) and ``plan`` (the issue's earlier probe)."""
RECURSION_LIMIT = 12
MAX_TOKENS = 128
MODEL_TIMEOUT_S = 900.0
"""The audit sends up to four requests at once to a server that serves one at a time: a long queue is no error."""

EXTRA_QUESTIONS: dict[str, tuple[str, ...]] = {
    "quickstart_weather": ("What's the weather like in Tokyo right now?", "Tell me the weather in Lima."),
    "sky_conditions": ("Is the sky clear in Oslo?", "Describe the sky over Tokyo."),
    "sql_agent": ("Count the projects in the company database.", "What is the number of offices of the company?"),
    "agentic_rag": (
        "Summarise Lilian Weng's blog post on prompt injection.",
        "What is hallucination according to Lilian Weng's blog?",
    ),
    "web_search": ("What is the height of Big Ben?", "How high is the Space Needle?"),
    "lookup_by_name": ("Which city is the capital of Japan?", "Tell me the capital of Peru."),
    "multi_tool_parallel": (
        "What are the sky and the population of Tokyo?",
        "Give me the sky conditions and the population of Paris.",
    ),
}
"""More questions per shape for N, about the entities the shape's tools know (so that their outputs are real)."""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict[str, Any]], *, append: bool = True) -> None:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "at" if append else "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with path.open("a" if append else "w", encoding="utf-8") as f:
            f.write(text)


def _drop_unfinished(out: Path, done: set[str]) -> None:
    """Keep only the lines of finished shapes (a stopped session may have left part of one)."""
    for name in ("runs.jsonl", "traces.jsonl.gz", "results.jsonl.gz"):
        rows = _read_jsonl(out / name)
        kept = [row for row in rows if row["shape"] in done]
        if len(kept) != len(rows):
            _write_jsonl(out / name, kept, append=False)


def _run_record(
    shape: Shape, question: str, thread: str, seconds: float, raised: str | None, trace: Trace | None
) -> dict[str, Any]:
    calls = [c for s in (trace.steps if trace else ()) for c in s.tool_calls]
    signatures = Counter((c.name, json.dumps(c.args, sort_keys=True)) for c in calls)
    return {
        "shape": shape.name,
        "question": question,
        "thread_id": thread,
        "seconds": round(seconds, 1),
        "raised": raised,
        "recorded": trace is not None,
        "error": trace.error if trace else None,
        "answered": bool(trace and trace.error is None and (trace.final_answer or "").strip()),
        "final_answer": trace.final_answer if trace else None,
        "steps_with_calls": sum(bool(s.tool_calls) for s in (trace.steps if trace else ())),
        "steps_with_text_before_call": sum(
            bool(s.tool_calls and s.thought.strip()) for s in (trace.steps if trace else ())
        ),
        "tool_calls": len(calls),
        "repeated_calls": sum(n - 1 for n in signatures.values()),
    }


def _run_shape(
    shape: Shape, chat: Any, prompt: str, limit: int | None
) -> tuple[list[dict[str, Any]], list[Trace], list[AuditResult], float, float]:
    store = InMemoryTraceStore()
    graph: Any = create_agent(
        chat,
        list(shape.tools),
        system_prompt=prompt,
        checkpointer=InMemorySaver(),
        middleware=[AriadneMiddleware(store, synchronous=True), AnswerTurnMiddleware()],
    )
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    for i, question in enumerate((*shape.questions, *EXTRA_QUESTIONS[shape.name])[:limit]):
        thread = f"{shape.name}-{i}"
        before = {t.trace_id for t in store.list_traces()}
        t0, raised = time.perf_counter(), None
        try:
            graph.invoke(
                {"messages": [("user", question)]},
                {"configurable": {"thread_id": thread}, "recursion_limit": RECURSION_LIMIT},
            )
        except Exception as exc:  # a failed run is a result: the middleware records it with its error
            raised = type(exc).__name__
        new = [t for t in store.list_traces() if t.trace_id not in before]
        runs.append(_run_record(shape, question, thread, time.perf_counter() - t0, raised, new[-1] if new else None))
        print(
            f"  {thread}: {runs[-1]['seconds']} s, raised={raised}, answer={runs[-1]['final_answer']!r}"[:240],
            flush=True,
        )
    ran = time.perf_counter() - started
    traces = store.list_traces()
    started = time.perf_counter()
    report = Auditor(graph).audit_batch(traces)  # every default: no interventions, no step, no links
    return runs, traces, list(report.results), ran, time.perf_counter() - started


def _answered_coverage(
    results: list[AuditResult], runs: list[dict[str, Any]], traces: list[dict[str, Any]]
) -> Coverage:
    answered_threads = {r["thread_id"] for r in runs if r["answered"]}
    ids = {t["trace_id"] for t in traces if t["thread_id"] in answered_threads}
    return coverage(r for r in results if r.trace_id in ids)


def _per_link(results: list[AuditResult]) -> str:
    parts = []
    for link in LINKS:
        scored = [r for r in results if r.link == link and not r.control and r.status == "scored"]
        if scored:
            parts.append(f"{link} {sum(r.violation for r in scored)}/{len(scored)}")
    return ", ".join(parts) or "-"


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.1%})" if n else "0/0"


def _summarise(out: Path, label: str, prompt: str) -> None:
    runs = _read_jsonl(out / "runs.jsonl")
    traces = _read_jsonl(out / "traces.jsonl.gz")
    rows = _read_jsonl(out / "results.jsonl.gz")
    shapes = {row["shape"]: row for row in _read_jsonl(out / "shapes.jsonl")}
    sessions = _read_jsonl(out / "sessions.jsonl")
    results = [AuditResult.model_validate(row["result"]) for row in rows]
    by_shape: dict[str, dict[str, Any]] = {}
    lines = [
        f"# Tutorial shapes on a real model: {label}",
        "",
        f"`create_agent` + `AriadneMiddleware` + `AnswerTurnMiddleware`, system prompt {prompt!r} (no worked "
        f"example), `recursion_limit` {RECURSION_LIMIT}, temperature 0, `max_tokens` {MAX_TOKENS}; the shapes and "
        "tools of `tests/tutorial_agents.py` with the model's own calls; audited with "
        "`Auditor(graph).audit_batch(traces)`, every default. Written by `docs/scripts/tutorial_shapes_real_model.py`.",
        "",
        "## Coverage per shape (units of the runs that end with an answer)",
        "",
        "| shape | runs | failed or empty runs (why) | answered | text before a call (steps) | tool calls "
        "| repeated calls | units | with a verdict | thought units | output units | no verdict, why "
        "| violations / scored, per link |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    total = [0, 0]
    for shape in SHAPES:
        if shape.name not in shapes:
            continue
        mine = [r for r in runs if r["shape"] == shape.name]
        mine_results = [r for r, row in zip(results, rows, strict=True) if row["shape"] == shape.name]
        cov = _answered_coverage(
            mine_results,
            mine,
            [t["trace"] for t in traces if t["shape"] == shape.name],
        )
        failed = Counter(r["error"] or r["raised"] or "no trace" for r in mine if not r["answered"])
        steps = sum(r["steps_with_calls"] for r in mine)
        text = sum(r["steps_with_text_before_call"] for r in mine)
        kinds = {k: _pct(*cov.by_unit[k]) if k in cov.by_unit else "0/0" for k in ("thought", "output")}
        why = ", ".join(f"{k} {n}" for k, n in sorted(cov.no_verdict.items(), key=lambda x: -x[1])) or "-"
        total[0] += cov.with_verdict
        total[1] += cov.units
        unanswered = f"{sum(failed.values())}" + (f" {dict(failed)}" if failed else "")
        lines.append(
            f"| {shape.name} | {len(mine)} | {unanswered} | {sum(r['answered'] for r in mine)} | {text}/{steps} | "
            f"{sum(r['tool_calls'] for r in mine)} | {sum(r['repeated_calls'] for r in mine)} | {cov.units} | "
            f"{_pct(cov.with_verdict, cov.units)} | {kinds['thought']} | {kinds['output']} | {why} | "
            f"{_per_link(mine_results)} |"
        )
        by_shape[shape.name] = {
            "runs": len(mine),
            "failed": dict(failed),
            "answered_coverage": cov.model_dump(),
            "library_coverage": shapes[shape.name]["coverage"],
            "run_s": shapes[shape.name]["run_s"],
            "audit_s": shapes[shape.name]["audit_s"],
        }
    lines += ["", f"All shapes: {_pct(*total)} units with a verdict.", ""]
    lines += [
        "## Per link, across shapes (contradictions and swaps, controls apart)",
        "",
        "| link | audits | scored (N) | violations | rate | 95% Wilson | tracks | elsewhere | stayed | not applicable "
        "| failed |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_link: dict[str, dict[str, Any]] = {}
    for link in LINKS:
        on = [r for r in results if r.link == link and not r.control and not r.run_failed and r.step_index >= 0]
        if not on:
            continue
        scored = [r for r in on if r.status == "scored"]
        violations = sum(r.violation for r in scored)
        ci = wilson_interval(violations, len(scored))
        tracking = Counter(r.tracking for r in scored if r.tracking)
        rate = f"{violations / len(scored):.1%}" if scored else "-"
        wil = f"[{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "-"
        lines.append(
            f"| {link} | {len(on)} | {len(scored)} | {violations} | {rate} | {wil} | {tracking['tracks']} | "
            f"{tracking['elsewhere']} | {tracking['stayed']} | {sum(r.status == 'not_applicable' for r in on)} | "
            f"{sum(r.status == 'failed' for r in on)} |"
        )
        by_link[link] = {"audits": len(on), "scored": len(scored), "violations": violations, "wilson95": ci,
                         "tracking": dict(tracking)}  # fmt: skip
    lines += ["", "## Sessions", "", "| session | shapes | wall (s) | load at start | load at end | mean load |"]
    lines.append("|---|---|---|---|---|---|")
    for i, s in enumerate(sessions, 1):
        mean = sum(s["load_samples"]) / len(s["load_samples"]) if s["load_samples"] else 0.0
        lines.append(
            f"| {i} | {', '.join(s['shapes']) or '-'} | {s['wall_s']:.0f} | {s['load_start']:.2f} | "
            f"{s['load_end']:.2f} | {mean:.2f} |"
        )
    lines += ["", "Run and audit seconds per shape: " + ", ".join(
        f"{n} {v['run_s']:.0f} + {v['audit_s']:.0f}" for n, v in by_shape.items())]  # fmt: skip
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = {"model": label, "system_prompt": prompt, "recursion_limit": RECURSION_LIMIT,
               "max_tokens": MAX_TOKENS, "shapes": by_shape, "links": by_link, "sessions": sessions}  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=("0.5b", "1.5b"), default="1.5b")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shapes", nargs="*", default=None, help="shape names (default: all)")
    parser.add_argument("--prompt", choices=tuple(PROMPTS), default="plain")
    parser.add_argument("--limit", type=int, default=None, help="questions per shape (a speed probe; default all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    label = f"Qwen2.5-Coder-{args.size.upper()}-Instruct Q4_K_M (llama.cpp)"
    done = {row["shape"] for row in _read_jsonl(args.out / "shapes.jsonl")}
    _drop_unfinished(args.out, done)
    todo = [s for s in SHAPES if s.name not in done and (args.shapes is None or s.name in args.shapes)]
    session: dict[str, Any] = {"shapes": [], "load_start": os.getloadavg()[0], "load_samples": []}
    started = time.perf_counter()
    if todo:
        with LocalModelServer.for_model(f"qwen2.5-coder-{args.size}") as server:
            chat = server.chat_model(max_tokens=MAX_TOKENS, timeout=MODEL_TIMEOUT_S)
            for shape in todo:
                print(
                    f"{shape.name} ({time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.2f})", flush=True
                )
                runs, traces, results, ran, audited = _run_shape(shape, chat, PROMPTS[args.prompt], args.limit)
                session["load_samples"].append(os.getloadavg()[0])
                _write_jsonl(args.out / "runs.jsonl", runs)
                _write_jsonl(
                    args.out / "traces.jsonl.gz",
                    [{"shape": shape.name, "trace": t.model_dump(mode="json")} for t in traces],
                )
                _write_jsonl(
                    args.out / "results.jsonl.gz",
                    [{"shape": shape.name, "result": r.model_dump(mode="json")} for r in results],
                )
                cov = coverage(results)
                _write_jsonl(args.out / "shapes.jsonl", [{"shape": shape.name, "run_s": ran, "audit_s": audited,
                             "load": os.getloadavg()[0], "coverage": cov.model_dump()}])  # fmt: skip
                session["shapes"].append(shape.name)
                print(f"  run {ran:.0f} s, audit {audited:.0f} s; {cov.summary()}", flush=True)
    session |= {"wall_s": time.perf_counter() - started, "load_end": os.getloadavg()[0]}
    if session["shapes"]:
        _write_jsonl(args.out / "sessions.jsonl", [session])
    _summarise(args.out, label, PROMPTS[args.prompt])


if __name__ == "__main__":
    main()
