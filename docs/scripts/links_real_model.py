"""The links check on a real tool-calling model: ``create_agent`` on Qwen2.5-Coder-0.5B-Instruct (native tool calls)
with the demo's tools and ``AriadneMiddleware``, audited with every default (``Auditor(agent)``), on every thought
step, with every contradiction, the observation swap and both controls.

Writes ``results.jsonl.gz`` (every AuditResult) and ``summary.md`` (coverage, per-link rates with Wilson intervals,
per type, load and wall time) into the output folder. Resumable: questions already in ``results.jsonl.gz`` are
skipped.

    python docs/scripts/links_real_model.py --questions 24 --out docs/calibration/links-qwen0.5b
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from ariadne_lc import Auditor, InMemoryTraceStore
from ariadne_lc.calibration.link_questions import link_questions
from ariadne_lc.demo.tool_agent import build_tool_agent, tool_agent_answer
from ariadne_lc.local import LocalModelServer
from ariadne_lc.records import LINKS, AuditResult
from ariadne_lc.stats import aggregate, build_report

INTERVENTIONS = [
    "logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "conclusion_swap", "observation_swap",
    "rerun", "paraphrase",
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    raw = args.out / "results.jsonl.gz"
    done: list[AuditResult] = []
    if raw.exists():
        with gzip.open(raw, "rt", encoding="utf-8") as f:
            done = [AuditResult.model_validate_json(line) for line in f if line.strip()]
    seen = {r.query for r in done}
    questions = [q.text for q in link_questions(args.questions, seed=args.seed)]
    load_start, started = os.getloadavg()[0], time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, LocalModelServer.for_model("qwen2.5-coder-0.5b") as server:
        conn = sqlite3.connect(Path(tmp) / "checkpoints.db", check_same_thread=False)
        store = InMemoryTraceStore()
        agent = build_tool_agent(server.chat_model(max_tokens=96), store, checkpointer=SqliteSaver(conn))
        auditor = Auditor(agent, answer_extractor=tool_agent_answer, lam=0)  # every default of the links
        for i, q in enumerate(questions):
            if q in seen:
                continue
            agent.invoke({"messages": [("user", q)]}, {"configurable": {"thread_id": f"q{args.seed}-{i}"}})
            trace = store.list_traces()[-1]
            results = auditor.audit_batch([trace], step="all", interventions=INTERVENTIONS).results
            with gzip.open(raw, "at", encoding="utf-8") as f:
                f.writelines(r.model_dump_json() + "\n" for r in results)
            done.extend(results)
            print(f"{i + 1}/{len(questions)} {len(results)} audits ({time.perf_counter() - started:.0f} s)", flush=True)
    wall, load_end = time.perf_counter() - started, os.getloadavg()[0]
    report = build_report(done)
    lines = [
        "# Links on a real tool-calling model (Qwen2.5-Coder-0.5B-Instruct, create_agent + AriadneMiddleware)",
        "",
        f"{len({r.trace_id for r in done})} traces, {len(done)} audits; `Auditor(agent)` with every default (rule "
        "critic, rule readers, recorded tool policy), step='all'. This run: wall "
        f"{wall:.0f} s, load average {load_start:.1f} at start and {load_end:.1f} at end (2 cores).",
        "",
        report.coverage.summary() if report.coverage else "no coverage",
        "",
        "| link | type | scored | violations | violation rate | 95% CI | tracks | not decisive | no commitment | n/a |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for link in LINKS:
        on = [r for r in done if r.link == link]
        for kind in sorted({r.intervention_type for r in on}):
            a = aggregate(r for r in on if r.intervention_type == kind)
            ci = f"[{a.violation_rate_ci[0]:.0%}, {a.violation_rate_ci[1]:.0%}]" if a.violation_rate_ci else "-"
            rate = "-" if a.violation_rate is None else f"{a.violation_rate:.0%}"
            lines.append(
                f"| {link} | {kind} | {a.scored} | {a.violations} | {rate} | {ci} | {a.tracks}/{a.tracked} | "
                f"{a.not_decisive} | {a.no_commitment} | {a.not_applicable} |"
            )
    (args.out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out / "summary.json").write_text(
        json.dumps(
            {
                "coverage": report.coverage.model_dump() if report.coverage else None,
                "wall_s": wall,
                "load": [load_start, load_end],
            },
            indent=2,
        ),  # fmt: skip
        encoding="utf-8",
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
