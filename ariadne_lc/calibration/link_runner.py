"""The per-link calibration run: record each (agent, question) once, audit it on its link, keep every result.

For every question of the seeded sample (:func:`~ariadne_lc.calibration.link_questions.link_questions`) and every
agent of :data:`~ariadne_lc.calibration.link_agents.LINK_AGENTS`, one *job*:

1. record the agent's run on the question (one model call: the planning thought);
2. audit step 0 on the agent's link, gate on:

   * ``thought->action``: the five contradictions (:data:`ACTION_CONTRADICTIONS`) and the ``rerun`` and
     ``paraphrase`` controls, the step re-run by the agent's own graph code
     (:func:`~ariadne_lc.calibration.link_agents.link_deriver`), the action read by the run's action reader;
   * ``observation->answer``: ``observation_swap``; its controls (``rerun``, ``paraphrase``) are the replay baseline
     of the same graph from the same step on ``thought->answer`` (as runs measured them before the engine planned the
     link's own controls beside a swap: a resumed run measures what it started with);

3. append one JSON line holding the job and all its :class:`~ariadne_lc.records.AuditResult` s to
   ``results.jsonl``, flushed and fsynced before the next job.

Why one line per job: a run killed at any instant resumes without redoing or half-keeping a job; a torn last line
(the process died mid-write) is cut off when the run is opened again. Jobs already stored are skipped; a job whose
recording failed is kept as failed (with its error) and not retried. A committed run keeps its jobs gzipped
(``results.jsonl.gz``): they are read first, and a resumed run appends its new jobs to ``results.jsonl`` beside it.
``run.json`` fixes what the run measures (model, reader, seed, agents); resuming with another is refused, more
questions are allowed (the sample is prefix-stable). ``sessions.jsonl`` keeps each session's wall time and load
average; :mod:`.link_summary` turns the folder into ``summary.json`` and ``summary.md``.
"""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ariadne_lc.calibration.link_agents import LINK_AGENTS, LinkAgentSpec, build_link_agent, link_deriver
from ariadne_lc.calibration.link_questions import DEFAULT_QUESTION_SEED, LinkQuestion, link_questions
from ariadne_lc.calibration.records import Truth
from ariadne_lc.calibration.storage import RunMismatchError
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult, Link
from ariadne_lc.trace import Trace

__all__ = [
    "ACTION_CONTRADICTIONS",
    "CONTROLS",
    "MANIFEST_FILE",
    "RESULTS_FILE",
    "SESSIONS_FILE",
    "LinkJob",
    "LinkRunConfig",
    "LinkSession",
    "load_jobs",
    "load_sessions",
    "run_link_calibration",
]

ACTION_CONTRADICTIONS: Final = ("logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "conclusion_swap")
CONTROLS: Final = ("rerun", "paraphrase")
RESULTS_FILE: Final = "results.jsonl"
MANIFEST_FILE: Final = "run.json"
SESSIONS_FILE: Final = "sessions.jsonl"


class LinkRunConfig(BaseModel):
    """What a run measures; resuming into a folder made with another configuration is refused."""

    model_config = ConfigDict(frozen=True)

    model: str
    """The model that writes the thoughts (its label)."""
    reader: Literal["rule", "model"] = "rule"
    """The action reader of the gate: the rule reader, or the model itself (``ModelActionReader``)."""
    questions: int
    seed: int = DEFAULT_QUESTION_SEED
    agents: tuple[str, ...] = tuple(LINK_AGENTS)
    constrained: bool = False
    """Thoughts constrained by a grammar (llama.cpp)."""
    gate: bool = True

    def identity(self) -> dict[str, Any]:
        """Everything but the number of questions (a run may grow)."""
        return self.model_dump(mode="json", exclude={"questions"})


class LinkJob(BaseModel):
    """One (agent, question): the recorded run and every audit of it."""

    model_config = ConfigDict(frozen=True)

    agent: str
    link: Link
    truth: Truth
    question_id: str
    question: str
    operation: str
    """The operation the question asks for (the generated truth, not the model's plan)."""
    trace_id: str | None = None
    thought: str | None = None
    """The model's planning thought (the audited step)."""
    recorded_calls: tuple[str, ...] = ()
    """The step's calls as ``name(a, b)``."""
    answer: str | None = None
    record_s: float = 0.0
    """Seconds the agent's recorded run took (the model call)."""
    audit_s: float = 0.0
    """Seconds its audits took."""
    error: str | None = None
    """Why the job has no audits (the recording failed); its results are then empty."""
    results: tuple[AuditResult, ...] = ()
    finished_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class LinkSession(BaseModel):
    """One invocation of the runner: how long it ran and how loaded the machine was."""

    started_at: datetime
    wall_s: float
    jobs: int
    """Jobs this session added."""
    load_start: tuple[float, float, float]
    """``os.getloadavg()`` when the session started (1, 5 and 15 minutes)."""
    load_end: tuple[float, float, float]


def load_jobs(out: Path) -> list[LinkJob]:
    """The complete jobs of a run folder: those of a committed ``results.jsonl.gz`` first (read only), then those
    of ``results.jsonl``, whose torn last line is cut off the file."""
    jobs: list[LinkJob] = []
    packed = out / (RESULTS_FILE + ".gz")
    if packed.exists():
        with gzip.open(packed, "rt", encoding="utf-8") as g:
            jobs += [LinkJob.model_validate_json(line) for line in g if line.strip()]
    path = out / RESULTS_FILE
    if not path.exists():
        return jobs
    good = 0
    with path.open("rb") as f:
        for line in f:
            try:
                jobs.append(LinkJob.model_validate_json(line))
            except ValidationError:
                break
            good += len(line)
    if good != path.stat().st_size:
        with path.open("r+b") as f:
            f.truncate(good)
    return jobs


def load_sessions(out: Path) -> list[LinkSession]:
    path = out / SESSIONS_FILE
    if not path.exists():
        return []
    return [LinkSession.model_validate_json(x) for x in path.read_text().splitlines() if x.strip()]


def _open(out: Path, config: LinkRunConfig, resume: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST_FILE
    if manifest.exists():
        if not resume:
            raise ConfigurationError(f"{out} already holds a run: pass --resume to continue it, or another --out")
        old = LinkRunConfig.model_validate_json(manifest.read_text())
        if old.identity() != config.identity():
            diff = sorted(k for k, v in config.identity().items() if old.identity().get(k) != v)
            raise RunMismatchError(f"{out} holds a run with other settings ({', '.join(diff)}): use another --out")
        config = config.model_copy(update={"questions": max(old.questions, config.questions)})
    manifest.write_text(config.model_dump_json(indent=2) + "\n")


def _call_text(trace: Trace) -> tuple[str, ...]:
    if not trace.steps:
        return ()
    return tuple(f"{c.name}({', '.join(f'{v:g}' for v in c.args.values())})" for c in trace.steps[0].tool_calls)


class _Agent:
    """One agent's graph and auditors (built once per run)."""

    def __init__(self, model: BaseChatModel, spec: LinkAgentSpec, config: LinkRunConfig, action_reader: Any) -> None:
        from ariadne_lc import Auditor

        self.spec = spec
        self.graph = build_link_agent(model, spec, checkpointer=InMemorySaver(), constrained=config.constrained)
        if spec.link == "thought->action":
            self.auditors = [
                (
                    Auditor(
                        self.graph,
                        tool_calls="rederive",
                        tool_call_deriver=link_deriver(spec),
                        links=["thought->action"],
                        action_reader=action_reader,
                        decisive=config.gate,
                    ),
                    [*ACTION_CONTRADICTIONS, *CONTROLS],
                )
            ]
        else:
            self.auditors = [
                (Auditor(self.graph, links=["observation->answer"], decisive=config.gate), ["observation_swap"]),
                (Auditor(self.graph, links=["thought->answer"], decisive=config.gate), list(CONTROLS)),
            ]

    def record(self, question: LinkQuestion) -> Trace:
        from ariadne_lc import AriadneCallbackHandler

        traces: list[Trace] = []
        handler = AriadneCallbackHandler(on_trace=traces.append, synchronous=True)
        thread = f"{self.spec.name}-{question.question_id}"
        self.graph.invoke(
            {"messages": [("user", question.text)]}, {"configurable": {"thread_id": thread}, "callbacks": [handler]}
        )
        if not traces:
            raise RuntimeError(f"the run of {self.spec.name} on {question.question_id} left no trace")
        return traces[-1]

    def job(self, question: LinkQuestion) -> LinkJob:
        base = LinkJob(
            agent=self.spec.name,
            link=self.spec.link,
            truth=self.spec.truth,
            question_id=question.question_id,
            question=question.text,
            operation=question.operation,
        )
        t0 = time.perf_counter()
        try:
            trace = self.record(question)
        except Exception as exc:  # a model that errors fails this job; the run goes on
            return base.model_copy(
                update={"record_s": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"}
            )
        t1 = time.perf_counter()
        results: list[AuditResult] = []
        for auditor, interventions in self.auditors:
            results += auditor.audit(trace, step=0, interventions=interventions)
        return base.model_copy(
            update={
                "trace_id": trace.trace_id,
                "thought": trace.steps[0].thought if trace.steps else None,
                "recorded_calls": _call_text(trace),
                "answer": trace.final_answer,
                "record_s": t1 - t0,
                "audit_s": time.perf_counter() - t1,
                "results": tuple(results),
                "finished_at": datetime.now(UTC),
            }
        )


def _pending(config: LinkRunConfig, done: set[tuple[str, str]]) -> Iterator[tuple[str, LinkQuestion]]:
    for question in link_questions(config.questions, seed=config.seed):
        for agent in config.agents:
            if (agent, question.question_id) not in done:
                yield agent, question


def run_link_calibration(
    model: BaseChatModel,
    out: Path,
    config: LinkRunConfig,
    *,
    resume: bool = False,
    action_reader: Any = None,
    on_job: Callable[[LinkJob, int, int], None] | None = None,
) -> list[LinkJob]:
    """Run (or resume) a per-link calibration into ``out``; return every job of the folder.

    Args:
        model: the chat model the agents think with.
        out: the run folder (created).
        config: what the run measures (``config.reader == "model"`` needs ``action_reader``).
        resume: continue a run already in ``out`` (else an existing run there is refused).
        action_reader: the gate's action reader; ``None``: the rule reader.
        on_job: called after each job with (job, jobs done in this session, jobs pending at the start).

    Raises:
        ConfigurationError: an unknown agent; a run already in ``out`` without ``resume``.
        RunMismatchError: ``out`` holds a run with another configuration.
    """
    unknown = [a for a in config.agents if a not in LINK_AGENTS]
    if unknown:
        raise ConfigurationError(f"unknown link agents {unknown}; choose from {', '.join(LINK_AGENTS)}")
    if (config.reader == "model") != (action_reader is not None):
        raise ConfigurationError("reader='model' needs an action_reader, and only it takes one")
    _open(out, config, resume)
    started, load_start, t0 = datetime.now(UTC), os.getloadavg(), time.perf_counter()
    done = {(j.agent, j.question_id) for j in load_jobs(out)}
    pending = list(_pending(config, done))
    agents = {name: _Agent(model, LINK_AGENTS[name], config, action_reader) for name in config.agents}
    n = 0
    with (out / RESULTS_FILE).open("a", encoding="utf-8") as f:
        for agent, question in pending:
            job = agents[agent].job(question)
            f.write(job.model_dump_json() + "\n")
            f.flush()
            os.fsync(f.fileno())
            n += 1
            if on_job is not None:
                on_job(job, n, len(pending))
    session = LinkSession(
        started_at=started,
        wall_s=time.perf_counter() - t0,
        jobs=n,
        load_start=load_start,
        load_end=os.getloadavg(),
    )
    with (out / SESSIONS_FILE).open("a", encoding="utf-8") as f:
        f.write(session.model_dump_json() + "\n")
    return load_jobs(out)
