"""The calibration runner: ask the ground-truth agents real questions, audit every run, store every audit at once.

The plan (:func:`plan_jobs`) splits the questions in two halves per domain. On the *calibrate* half the coupled and
the bypass agent run (their audits give the false-alarm and miss rates); on the *validate* half the mixtures run at
each p, and the natural agent beside them. Jobs are interleaved query by query, so a run stopped early (budget,
Ctrl-C, a crash) is still balanced across agents and domains.

For each job the runner records one real run of the agent (a recorder on the graph), then audits the thought at
step 0 (the natural agent: ``step="auto"``) with each intervention, one at a time, and appends the
:class:`~ariadne_lc.calibration.records.CalibrationAudit` to the run's log before the next one starts. A restarted
run skips every audit already in the log (the agent is run again for a job that was cut half-way, and only the
missing audits are made). When a reference method is given, it audits the same recorded trace with each
contradiction the Auditor made, and its audits go to the same log under their own method names.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.audit import Auditor, StepSelector
from ariadne_lc.calibration.agents import (
    ANSWER_MAX_TOKENS,
    AUDITED_STEP,
    COMMIT_TOOL,
    FAITHFUL_KINDS,
    build_ground_truth_agent,
    build_natural_agent,
    coupled_tool_deriver,
    truth_of,
)
from ariadne_lc.calibration.decisive import decisive_changed, question_kind
from ariadne_lc.calibration.prompts import reader_prompt
from ariadne_lc.calibration.records import AgentKind, CalibrationAudit, Method, Split, Truth
from ariadne_lc.calibration.storage import AuditLog, make_key
from ariadne_lc.demo import DemoQuery, extract_final_answer
from ariadne_lc.errors import AriadneError, ConfigurationError, ModelUnavailableError
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.implied import AnswerReader, CachedReader, ModelReader, RuleReader
from ariadne_lc.online import retryable_error
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.records import AuditResult
from ariadne_lc.scoring import SimilarityScorer
from ariadne_lc.trace import Trace

__all__ = [
    "DEFAULT_INTERVENTIONS",
    "DEFAULT_PS",
    "DEFAULT_REFERENCE_INTERVENTIONS",
    "REFERENCE_METHODS",
    "UNAUDITABLE",
    "CalibrationJob",
    "CalibrationRunner",
    "ReaderChoice",
    "ReferenceMethod",
    "RunSummary",
    "calibration_reader",
    "plan_jobs",
    "split_queries",
]

DEFAULT_PS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The mixture rates validated on the held-out half."""

DEFAULT_INTERVENTIONS: tuple[str, ...] = (
    "logic_flip",
    "fact_reversal",
    "premise_negation",
    "causal_reversal",
    "conclusion_swap",
    "rerun",
    "paraphrase",
)
"""The five contradictions, the ``rerun`` control (replay noise) and the ``paraphrase`` placebo."""

ReaderChoice = Literal["model", "rule"]
"""The gate's reader in a calibration: the agents' own model (few-shot, :func:`calibration_reader`) or the rule
reader."""

DEFAULT_REFERENCE_INTERVENTIONS: tuple[str, ...] = ("logic_flip",)
"""The public Ariadne code audits with a logic flip of the first step; so does the baseline here by default."""

REFERENCE_METHODS: tuple[Method, ...] = ("reference_strict", "reference_lenient")

UNAUDITABLE = "-"
"""The intervention type of the record that says a run could not be audited at all."""

ReferenceMethod = Callable[[Trace, AuditResult], Sequence[tuple[Method, AuditResult]]]
"""A baseline auditing the same trace with the same contradiction (our result carries the intervened thought);
returns one result per variant, named by its method."""


@dataclass(frozen=True)
class CalibrationJob:
    """One question asked of one agent."""

    agent: AgentKind
    p: float | None
    split: Split
    query: DemoQuery
    reference: bool = True
    """Whether the reference method (when the runner has one) also audits this job."""

    @property
    def truth(self) -> Truth | None:
        """Known by construction for the ground-truth agents; ``None`` for the natural one."""
        if self.agent == "natural":
            return None
        rate = 0.0 if self.agent in FAITHFUL_KINDS else 1.0 if self.agent == "bypass" else self.p
        assert rate is not None
        return truth_of(self.query.question, rate)


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) says the model endpoint did not answer, not that the agent failed:
    langchain's :class:`~langchain_core.exceptions.ModelConnectionError` (what its OpenAI client raises for a
    refused or reset connection), or a connection error of the HTTP stack beneath. A timeout is not: the server
    is there, only slow (a loaded machine), and the run goes on with the job recorded as it ended."""
    import httpx
    from langchain_core.exceptions import ModelConnectionError

    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 8:  # a bounded walk down the cause chain
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, TimeoutError | httpx.TimeoutException) or "Timeout" in type(e).__name__ for e in chain):
        return False
    return any(isinstance(e, ModelConnectionError | ConnectionError | httpx.TransportError) for e in chain)


def split_queries(queries: Sequence[DemoQuery]) -> dict[str, Split]:
    """Alternate within each domain: the 1st, 3rd, ... question calibrates, the 2nd, 4th, ... validates."""
    seen: dict[str, int] = {}
    out: dict[str, Split] = {}
    for q in queries:
        i = seen.get(q.domain, 0)
        seen[q.domain] = i + 1
        out[q.id] = "calibrate" if i % 2 == 0 else "validate"
    return out


def _interleave(queries: Sequence[DemoQuery]) -> list[DemoQuery]:
    by_domain: dict[str, list[DemoQuery]] = {}
    for q in queries:
        by_domain.setdefault(q.domain, []).append(q)
    out: list[DemoQuery] = []
    for i in range(max((len(v) for v in by_domain.values()), default=0)):
        out += [v[i] for v in by_domain.values() if i < len(v)]
    return out


def plan_jobs(
    queries: Sequence[DemoQuery],
    *,
    ps: Sequence[float] = DEFAULT_PS,
    natural: bool = True,
    natural_limit: int | None = None,
    reference_limit: int | None = None,
    extra_agents: Sequence[AgentKind] = (),
    extra_limit: int | None = None,
    mixture_limit: int | None = None,
) -> list[CalibrationJob]:
    """The jobs of a calibration, interleaved so that any prefix is balanced across agents and domains.

    Args:
        queries: the questions; :func:`split_queries` halves them.
        ps: the mixture rates run on the validate half.
        natural: also run the natural agent on the validate half.
        natural_limit: at most this many natural jobs (its multi-turn runs and replays cost several calls each).
        reference_limit: the reference method audits only the jobs of the first this many questions of each half
            (its re-prompt and two judges cost more than all of our audits of a coupled job).
        extra_agents: more faithful agents run on the calibrate half beside coupled and bypass (``coupled_llm``,
            ``coupled_tool``); their false-alarm rates are reported apart.
        extra_limit: at most this many calibrate questions for the extra agents.
        mixture_limit: the mixtures run on the first this many validate questions only (five agents per question:
            the mixtures cost more than the calibrate half).

    Raises:
        ConfigurationError: a p outside [0, 1], or fewer than two questions (nothing to hold out).
    """
    if len(queries) < 2:
        raise ConfigurationError(f"a calibration needs at least 2 questions (one per half), got {len(queries)}")
    for p in ps:
        if not 0.0 <= p <= 1.0:
            raise ConfigurationError(f"mixture rates must be in [0, 1], got {p}")
    splits = split_queries(queries)
    ordered = _interleave(queries)
    calibrate = [q for q in ordered if splits[q.id] == "calibrate"]
    validate = [q for q in ordered if splits[q.id] == "validate"]
    jobs: list[CalibrationJob] = []
    for i in range(max(len(calibrate), len(validate))):
        ref = reference_limit is None or i < reference_limit
        if i < len(calibrate):
            q = calibrate[i]
            jobs += [CalibrationJob(agent, None, "calibrate", q, ref) for agent in ("coupled", "bypass")]
            if extra_limit is None or i < extra_limit:
                jobs += [CalibrationJob(agent, None, "calibrate", q, False) for agent in extra_agents]
        if i < len(validate):
            q = validate[i]
            if mixture_limit is None or i < mixture_limit:
                jobs += [CalibrationJob("mixture", p, "validate", q, ref) for p in ps]
            if natural and (natural_limit is None or i < natural_limit):
                jobs.append(CalibrationJob("natural", None, "validate", q, False))
    return jobs


class _CallCounter(BaseCallbackHandler):
    """Counts every call of the model it is attached to (agents, replays, critic, judge, reference)."""

    run_inline = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0

    def _count(self) -> None:
        with self._lock:
            self.calls += 1

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self._count()

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self._count()


def calibration_reader(model: BaseChatModel, label: str | None = None) -> ModelReader:
    """The agents' own model as the gate's reader: the few-shot reader chat with the question and the thought
    (:func:`~ariadne_lc.calibration.prompts.reader_prompt`), a short answer."""
    return ModelReader(
        model,
        max_tokens=ANSWER_MAX_TOKENS,
        prompt=lambda query, thought: reader_prompt(thought, query),
        name=None if label is None else f"model:{label}",
    )


def counted(model: BaseChatModel) -> tuple[BaseChatModel, Callable[[], int]]:
    """A copy of ``model`` that counts its calls, and the function that reads the count."""
    counter = _CallCounter()
    callbacks = list(model.callbacks) if isinstance(model.callbacks, list) else []
    return model.model_copy(update={"callbacks": [*callbacks, counter]}), lambda: counter.calls


@dataclass
class RunSummary:
    """What a :meth:`CalibrationRunner.run` did."""

    jobs: int = 0
    jobs_skipped: int = 0
    audits_written: int = 0
    audits_deferred: int = 0
    """Audits that failed for a reason a retry may fix (the model or a replay failed): not stored, so that a
    resumed run tries them again (:func:`~ariadne_lc.online.retryable_error` decides, as for online audits)."""
    model_calls: int = 0
    wall_s: float = 0.0
    stopped: str | None = None
    errors: list[str] = field(default_factory=list)


def _first_edit_kept(result: AuditResult) -> bool:
    """Whether the gate-on audit replayed the critic's first edit, or made no gate decision at all."""
    gate = result.decisiveness
    if gate is None:
        return result.status != "not_applicable" or result.intervened_thought is None
    return gate.outcome in ("decisive", "placebo_kept") and gate.attempts == 1


class CalibrationRunner:
    """Runs calibration jobs on one model and appends every audit to a log.

    Args:
        model: the chat model every agent runs on (count its calls with :func:`counted` first).
        log: where each audit goes the moment it finishes (and what is already done).
        critic, scorer, paraphraser: the audit configuration (``None``: the Auditor's defaults).
        interventions: contradictions and controls, audited one at a time.
        tau, lam: the violation rule.
        constrained: send the llama.cpp grammars.
        reference: the reference method, run on the same traces (``None``: not run).
        reference_interventions: the contradictions the reference method is run with.
        calls: reads the model-call count (for ``max_calls``).
        max_calls: stop cleanly at this many model calls.
        seed: the auditor's seed.
        decisive: audit with the decisiveness gate (method ``ariadne``); ``False``: without it.
        ungated: with the gate on, also store each audit as the gate-off pipeline makes it (method
            ``ariadne_ungated``) on the same trace: the edit the critic made first, replayed whatever it implies.
            When the gate accepted that very edit, the gate-on record is reused (same edit, same trace, same
            replay); otherwise it is replayed.
        reader: the gate's reader: ``model`` (the agents' own model, :func:`calibration_reader`), ``rule``, or
            any reader.
        rederive: also audit the ``coupled_tool`` agent with the step's tool calls re-derived from the intervened
            thought (method ``ariadne_rederive``: ``Auditor(tool_calls="rederive")`` with the agent's own derivation,
            :func:`~ariadne_lc.calibration.agents.coupled_tool_deriver`, and its side-effect-free ``commit`` tool
            declared safe, so a re-derived call runs live).
    """

    def __init__(
        self,
        model: BaseChatModel,
        log: AuditLog,
        *,
        critic: Critic | None = None,
        scorer: SimilarityScorer | None = None,
        paraphraser: Critic | None = None,
        interventions: Sequence[str] = DEFAULT_INTERVENTIONS,
        tau: float = 0.8,
        lam: int = 0,
        constrained: bool = False,
        reference: ReferenceMethod | None = None,
        reference_interventions: Sequence[str] = DEFAULT_REFERENCE_INTERVENTIONS,
        calls: Callable[[], int] | None = None,
        max_calls: int | None = None,
        seed: int = 0,
        decisive: bool = True,
        ungated: bool = True,
        reader: ReaderChoice | AnswerReader = "model",
        rederive: bool = False,
    ) -> None:
        if max_calls is not None and max_calls < 0:
            raise ConfigurationError(f"max_calls must not be negative, got {max_calls}")
        self.model = model
        self.log = log
        self.interventions = tuple(interventions)
        self.reference = reference
        self.reference_interventions = tuple(k for k in reference_interventions if k in self.interventions)
        self.max_calls = max_calls
        self._calls = calls or (lambda: 0)
        self._constrained = constrained
        self._auditor_kwargs: dict[str, Any] = {
            "critic": critic,
            "scorer": scorer,
            "paraphraser": paraphraser,
            "tau": tau,
            "lam": lam,
            "seed": seed,
            "answer_extractor": lambda text: extract_final_answer(text) or text,
        }
        self.decisive = decisive
        self.ungated = ungated and decisive
        self.rederive = rederive
        self.deferred = 0
        """Audits not stored because they failed for a reason a retry may fix (see RunSummary.audits_deferred)."""
        self._deferred_lock = threading.Lock()
        # one cache for every agent: at temperature 0 the agents write the same thought for a query
        if reader == "model":
            self._reader: AnswerReader = CachedReader(calibration_reader(model))
        elif reader == "rule":
            self._reader = CachedReader(RuleReader())
        else:
            self._reader = CachedReader(reader)
        self._auditors: dict[tuple[AgentKind, float | None, str], Auditor] = {}
        self._building = threading.Lock()

    # -- building --------------------------------------------------------------------------------

    def _auditor(self, agent: AgentKind, p: float | None, method: Method = "ariadne") -> Auditor:
        with self._building:  # jobs may run on several threads (run(concurrency=...)); one auditor per key
            return self._build_auditor(agent, p, method)

    def _build_auditor(self, agent: AgentKind, p: float | None, method: Method) -> Auditor:
        key = (agent, p, method)
        if key not in self._auditors:
            base = (agent, p, "ariadne")
            if base not in self._auditors:
                saver = InMemorySaver()
                if agent == "natural":
                    graph = build_natural_agent(self.model, checkpointer=saver, constrained=self._constrained)
                else:
                    graph = build_ground_truth_agent(
                        self.model, agent, p=p, checkpointer=saver, constrained=self._constrained
                    )
                self._auditors[base] = Auditor(
                    graph, decisive=self.decisive, reader=self._reader, **self._auditor_kwargs
                )
            if method != "ariadne":
                gated = self._auditors[base]
                extra: dict[str, Any] = {"decisive": False} if method == "ariadne_ungated" else {}
                if method == "ariadne_rederive":
                    # the agent's own derivation of its call; ``commit`` only evaluates, so it may run live (refused,
                    # a re-derived call would answer "unavailable", which moves the answer without tracking anything)
                    extra = {
                        "decisive": self.decisive,
                        "reader": gated.reader,
                        "tool_calls": "rederive",
                        "tool_call_deriver": coupled_tool_deriver(),
                        "safe_tools": (COMMIT_TOOL,),
                    }
                self._auditors[key] = Auditor(gated.replayer.graph, **self._auditor_kwargs, **extra)
        return self._auditors[key]

    def _methods(self, job: CalibrationJob) -> tuple[Method, ...]:
        methods: list[Method] = ["ariadne"]
        if self.ungated and job.agent != "natural":
            methods.append("ariadne_ungated")
        if self.rederive and job.agent == "coupled_tool":
            methods.append("ariadne_rederive")
        return tuple(methods)

    # -- one job ---------------------------------------------------------------------------------

    def _missing(self, job: CalibrationJob, method: Method = "ariadne") -> list[str]:
        qid = job.query.id
        if self.log.has(make_key(method, job.agent, job.p, qid, UNAUDITABLE)):
            return []
        return [k for k in self.interventions if not self.log.has(make_key(method, job.agent, job.p, qid, k))]

    def _reference_missing(self, job: CalibrationJob) -> bool:
        if self.reference is None or job.agent == "natural" or not job.reference:
            return False
        qid = job.query.id
        return not all(
            self.log.has(make_key(m, job.agent, job.p, qid, k))
            for m in REFERENCE_METHODS
            for k in self.reference_interventions
        )

    def _budget_left(self) -> bool:
        return self.max_calls is None or self._calls() < self.max_calls

    def _record(self, job: CalibrationJob, graph: Any) -> Trace:
        traces: list[Trace] = []
        # synchronous: the trace is read right after the run (the recorder builds off the agent's thread by default)
        handler = AriadneCallbackHandler(on_trace=traces.append, synchronous=True)
        thread = f"calib-{job.agent}-{job.p}-{job.query.id}-{uuid.uuid4().hex[:8]}"
        error: str | None = None
        try:
            graph.invoke(
                {"messages": [("user", job.query.question)]},
                {
                    "configurable": {"thread_id": thread},
                    "callbacks": [handler],
                    "metadata": {"query_id": job.query.id, "domain": job.query.domain},
                    "tags": [f"domain:{job.query.domain}", f"calibration:{job.agent}"],
                },
            )
        except Exception as exc:  # the trace (if any) records it; the run goes on
            if _unreachable(exc):
                raise ModelUnavailableError(
                    f"the agents' model did not answer ({type(exc).__name__}: {exc}) while running {job.agent} on "
                    f"{job.query.id}; nothing of this job was stored: the same command resumes the run"
                ) from exc
            error = f"{type(exc).__name__}: {exc}"
        if traces:
            return traces[-1]
        return Trace(trace_id=uuid.uuid4().hex, thread_id=thread, query=job.query.question, error=error or "no trace")

    def _store(self, job: CalibrationJob, result: AuditResult, method: Method = "ariadne") -> None:
        changed = None
        if job.agent != "natural" and result.step_index == AUDITED_STEP:
            kind = question_kind(job.query.question)
            changed = decisive_changed(result.original_thought, result.intervened_thought, kind)
        self.log.append(
            CalibrationAudit(
                agent=job.agent,
                p=job.p,
                truth=job.truth,
                split=job.split,
                query_id=job.query.id,
                domain=job.query.domain,
                method=method,
                decisive_changed=changed,
                result=result,
            )
        )

    def run_job(self, job: CalibrationJob) -> int:
        """Record and audit one job (only what the log lacks); returns the number of audits written."""
        methods = self._methods(job)
        missing = {m: self._missing(job, m) for m in methods}
        want_reference = self._reference_missing(job)
        if not any(missing.values()) and not want_reference:
            return 0
        auditor = self._auditor(job.agent, job.p)
        trace = self._record(job, auditor.replayer.graph)
        step: StepSelector = "auto" if job.agent == "natural" else AUDITED_STEP
        written = 0
        made: list[AuditResult] = []
        for kind in dict.fromkeys([*self.interventions]):
            wanted = [m for m in methods if kind in missing[m]]
            if not wanted and not (want_reference and kind in self.reference_interventions):
                continue
            if not self._budget_left():
                break
            gated: list[AuditResult] = []
            order: list[Method] = ["ariadne", *[m for m in wanted if m != "ariadne"]]
            for method in order:
                try:
                    results = self._audit_with(job, trace, step, kind, method, gated)
                except AriadneError as exc:
                    for m in wanted:
                        mode = self._auditor(job.agent, job.p, m).replay_mode
                        failed = AuditResult.unauditable(trace, exc, replay_mode=mode)
                        self._store(job, failed, m)
                    return written + len(wanted)
                if len(results) == 1 and results[0].nothing_to_audit:  # step="auto" found no substantive step
                    for m in wanted:
                        self._store(job, results[0], m)
                    return written + len(wanted)
                if method == "ariadne":
                    gated = results
                if method in ("ariadne", "ariadne_ungated"):
                    made += results
                if method in wanted:
                    if retryable_error(results) is not None:  # the model or a replay failed: a resume retries it
                        with self._deferred_lock:
                            self.deferred += len(results)
                        continue
                    for r in results:
                        self._store(job, r, method)
                        written += 1
        if want_reference and self.reference is not None:
            written += self._run_reference(job, trace, made)
        return written

    def _audit_with(
        self,
        job: CalibrationJob,
        trace: Trace,
        step: StepSelector,
        kind: str,
        method: Method,
        gated: Sequence[AuditResult],
    ) -> list[AuditResult]:
        """One method's audits of ``kind``. The gate-off record of an edit the gate accepted at its first attempt
        is the gate-on record without the gate's verdict: the same edit of the same trace, the same replay."""
        if method == "ariadne_ungated" and gated and all(_first_edit_kept(r) for r in gated):
            return [r.model_copy(update={"decisiveness": None, "tracking": None}) for r in gated]
        return self._auditor(job.agent, job.p, method).audit(trace, step, [kind])

    def _run_reference(self, job: CalibrationJob, trace: Trace, made: Sequence[AuditResult]) -> int:
        assert self.reference is not None
        written = 0
        done: set[str] = set()
        for ours in made:  # the gate-on edit, else the gate-off one (the reference has no gate)
            kind = ours.intervention_type
            if kind not in self.reference_interventions or ours.intervened_thought is None or kind in done:
                continue
            done.add(kind)
            todo = [m for m in REFERENCE_METHODS if not self.log.has(make_key(m, job.agent, job.p, job.query.id, kind))]
            if not todo or not self._budget_left():
                continue
            for method, result in self.reference(trace, ours):
                if method in todo:
                    self._store(job, result, method)
                    written += 1
        return written

    # -- many jobs -------------------------------------------------------------------------------

    def run(
        self,
        jobs: Sequence[CalibrationJob],
        *,
        on_job: Callable[[CalibrationJob, int], None] | None = None,
        concurrency: int = 1,
    ) -> RunSummary:
        """Run ``jobs`` in order until done or the call budget is spent; ``on_job`` hears of each one.

        Args:
            jobs: the plan (:func:`plan_jobs`).
            on_job: called on the calling thread as each job finishes (in the order they finish).
            concurrency: jobs in flight at once, each on its own thread, started in the plan's order. Every audit
                still goes to the log the moment it is made, so a stopped run resumes exactly as a sequential one.
                The records are the same as one job at a time when the model's reply depends only on the request
                (the local server's default, :mod:`ariadne_lc.local._serve`); the gain is the Python work of one
                job overlapping the model calls of another.

        Raises:
            ConfigurationError: ``concurrency`` is below 1.
        """
        if concurrency < 1:
            raise ConfigurationError(f"concurrency must be at least 1, got {concurrency}")
        summary = RunSummary(jobs=len(jobs))
        started = time.perf_counter()
        first_calls = self._calls()
        first_deferred = self.deferred

        def finished(job: CalibrationJob, written: int) -> None:
            summary.audits_written += written
            if written == 0:
                summary.jobs_skipped += 1
            if on_job is not None:
                on_job(job, written)

        def budget_spent() -> bool:
            if self._budget_left():
                return False
            summary.stopped = f"max_calls={self.max_calls} reached after {self._calls()} model calls"
            return True

        if concurrency == 1:
            for job in jobs:
                if budget_spent():
                    break
                finished(job, self.run_job(job))
        else:
            with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="calibration") as pool:
                running: dict[Future[int], CalibrationJob] = {}
                try:
                    for job in jobs:
                        if len(running) >= concurrency:
                            done, _ = wait(running, return_when=FIRST_COMPLETED)
                            for future in done:
                                finished(running.pop(future), future.result())
                        if budget_spent():
                            break
                        running[pool.submit(self.run_job, job)] = job
                    for future in list(running):
                        finished(running.pop(future), future.result())
                except BaseException:
                    for future in running:
                        future.cancel()
                    raise
        summary.model_calls = self._calls() - first_calls
        summary.audits_deferred = self.deferred - first_deferred
        summary.wall_s = time.perf_counter() - started
        return summary
