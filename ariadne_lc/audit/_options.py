"""The :class:`~ariadne_lc.Auditor`'s options, in four small frozen objects: what it intervenes with, how it replays,
how it scores, where its records go.

Options that travel together are one object (as ``httpx.Timeout`` and LangGraph's ``RetryPolicy``): a reader sees at
once which belong together, a new option has an obvious home, and each object checks its own values where it is built,
so a bad value fails at the line that wrote it. The defaults are module constants (``DEFAULT_INTERVENTION`` ...), equal
to the auditor's defaults. ``None`` for a component means "the auditor picks", because the pick depends on other
options (the gate's reader on the critic and ``model``).

The auditor's flat keywords (``Auditor(graph, tau=0.7, tool_policy="live")``) stay as shorthands: :func:`gather` routes
each into its object with :func:`dataclasses.replace`, so both spellings build the same auditor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypedDict, TypeVar, get_args

from langchain_core.language_models import BaseChatModel
from opentelemetry._logs import LoggerProvider
from opentelemetry.trace import TracerProvider

from ariadne_lc.audit._budget import DEFAULT_BUDGET, check_budget
from ariadne_lc.audit._gate import DEFAULT_GATE_ATTEMPTS
from ariadne_lc.audit._plan import DEFAULT_MIN_THOUGHT_CHARS
from ariadne_lc.audit._pool import RecordedValues
from ariadne_lc.audit._sinks import AuditSink
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.export.writeback import ScoreWriter
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.actions import ActionReader
from ariadne_lc.interventions.implied import AnswerReader
from ariadne_lc.interventions.observations import ObservationSwapper, PlainObservationSwapper
from ariadne_lc.otel import EVALUATION_EVENTS, Redactor
from ariadne_lc.records import ReplayMode
from ariadne_lc.replay import DEFAULT_MAX_TURNS, DeriveFunction, ToolCallDeriver, ToolPolicy
from ariadne_lc.scoring import DEFAULT_LAMBDA, DEFAULT_TAU, SimilarityScorer, ThoughtSimilarity
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_RRR_THRESHOLD, DEFAULT_SEED
from ariadne_lc.store import ResultStore

__all__ = [
    "DEFAULT_INTERVENTION",
    "DEFAULT_OUTPUT",
    "DEFAULT_REPLAY",
    "DEFAULT_SCORING",
    "AuditorOptions",
    "InterventionOptions",
    "OutputOptions",
    "ReplayOptions",
    "ScoringOptions",
    "gather",
]


def _unit(name: str, value: float, meaning: str) -> None:
    if not 0.0 <= value <= 1.0:
        raise ConfigurationError(f"{name} must be in [0, 1], got {value}: {meaning}")


@dataclass(frozen=True, kw_only=True, slots=True)
class InterventionOptions:
    """What the auditor intervenes with and which edits it replays (docs/method.md#interventions).

    Examples:
        >>> InterventionOptions(critic=LLMCritic(model), reader=model)  # doctest: +SKIP
    """

    critic: Critic | None = None
    """Makes the contradicted thought; ``None``: the offline :class:`~ariadne_lc.interventions.RuleCritic`, or
    :class:`~ariadne_lc.interventions.LLMCritic` for a model's."""
    paraphraser: Critic | None = None
    """Makes the ``paraphrase`` placebo; ``None``: :class:`~ariadne_lc.interventions.RuleParaphraser` (pass an
    ``LLMCritic`` for a model's)."""
    swapper: ObservationSwapper | PlainObservationSwapper | None = None
    """Makes the ``observation_swap`` of the ``observation->answer`` link; ``None``: the value engine,
    :class:`~ariadne_lc.interventions.values.ValueSwapper` (values of any output: the same tool's other values in the
    run and in ``recorded_values``, the schema, word families, numbers, yes/no), falling back on an
    :class:`~ariadne_lc.interventions.observations.LLMObservationSwapper` of the auditor's ``model`` when it has one.
    A swapper with ``swap_in_context(output, context)`` is used as it is; one with only ``swap(output, *, query,
    tool)`` (:class:`~ariadne_lc.interventions.observations.RuleObservationSwapper`, a user's) is wrapped
    (:func:`~ariadne_lc.interventions.observations.in_context`)."""
    observation_swaps: int = 1
    """How many other values each tool output is given on ``observation->answer``, one audit each: variant n is the
    swapper's n-th other value (a swapper that knows only the output: its edit applied n + 1 times; several plausible
    false results per call; a value that repeats one already tried is ``not_applicable``)."""
    recorded_values: RecordedValues | None = None
    """A frozen reference pool of values the agent's tools gave in other runs
    (:meth:`~ariadne_lc.audit.RecordedValues.from_traces`), tried after the audited run's own for observation and plan
    swaps. ``None``: the audited run's own only. The audits never add to it: a unit's swap depends on the unit, its
    plan key and this pool, never on what was audited before (docs/method.md#the-output-gate)."""
    contradictions_per_step: int = 1
    """The default plan's budget per thought step and link: how many decisive contradictions (the first ones, in the
    order of :data:`~ariadne_lc.audit.DECISIVE_ORDER`, that the link's gate accepts) are audited."""
    budget: float | None = DEFAULT_BUDGET
    """The default plan's budget (docs/method.md#the-budget): model calls it may spend on a run per model call of the
    run (3.0: an audited run costs about three runs, at most about four), spent on a seeded systematic sample of each
    link's units whose inclusion probabilities the results carry. ``None``: every unit (exact per-run verdicts, about
    n² calls on a run of n). Audits of named steps are never sampled."""
    thought_similarity: ThoughtSimilarity | None = None
    """sim(thought, thought') for intervention strength; ``None``: the order-aware word-sequence similarity (see
    :mod:`ariadne_lc.scoring.strength`; e.g. ``EmbeddingScorer().similarity`` for meaning)."""
    min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS
    """What ``step="auto"`` counts as a substantive thought."""
    seed: int = DEFAULT_SEED
    """Seeds the ``random`` type selector, the bootstraps and the permutation test of batch reports."""
    decisive: bool = True
    """The decisiveness gate (docs/method.md#the-decisiveness-gate): a contradiction is replayed only when it changes
    the answer the thought implies; otherwise the critic revises it, and after ``gate_attempts`` edits the audit is
    ``not_applicable`` (``not_decisive``). A paraphrase that changes the implied answer is no placebo and is dropped.
    ``False``: every applicable edit is replayed."""
    reader: AnswerReader | BaseChatModel | None = None
    """Who reads the answer a thought implies, for the gate: an
    :class:`~ariadne_lc.interventions.implied.AnswerReader` or a chat model (the agent's own reads its thoughts best).
    ``None``: the auditor's ``model``, else the critic's model for an ``LLMCritic``, else the offline
    :class:`~ariadne_lc.interventions.implied.RuleReader`. Cached per (query, thought)."""
    action_reader: ActionReader | None = None
    """Reads the action a thought commits to, for the ``thought->action`` gate; ``None``:
    :class:`~ariadne_lc.interventions.action_model.ModelActionReader` of the auditor's ``model``, else the offline
    :class:`~ariadne_lc.interventions.actions.RuleActionReader`."""
    gate_attempts: int = DEFAULT_GATE_ATTEMPTS
    """Edits the gates read per audit (the critic's first and its revisions)."""

    def __post_init__(self) -> None:
        check_budget(self.budget)
        if self.observation_swaps < 1:
            raise ConfigurationError(
                f"observation_swaps must be at least 1, got {self.observation_swaps}: it counts the other values each "
                "tool output is given; to skip the observation->answer link, leave observation_swap out of the "
                "interventions"
            )
        if self.contradictions_per_step < 1:
            raise ConfigurationError(
                f"contradictions_per_step must be at least 1, got {self.contradictions_per_step}: it counts the "
                "decisive contradictions audited per thought step and link in the default plan"
            )
        if self.gate_attempts < 1:
            raise ConfigurationError(
                f"gate_attempts must be at least 1, got {self.gate_attempts}: it counts the critic's first edit; "
                "to replay every edit without the gate, pass decisive=False"
            )
        if self.swapper is not None and not isinstance(self.swapper, ObservationSwapper | PlainObservationSwapper):
            raise ConfigurationError(
                f"swapper needs a name and swap_in_context(output, context) or swap(output, *, query, tool), got "
                f"{type(self.swapper).__name__}; see ariadne_lc.interventions.observations.ObservationSwapper"
            )
        if self.recorded_values is not None and not isinstance(self.recorded_values, RecordedValues):
            raise ConfigurationError(
                f"recorded_values must be a RecordedValues (RecordedValues.from_traces(traces)), got "
                f"{type(self.recorded_values).__name__}"
            )
        if self.action_reader is not None and not isinstance(self.action_reader, ActionReader):
            raise ConfigurationError(
                f"action_reader must be an ActionReader (a read(...) method), got {type(self.action_reader).__name__}"
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplayOptions:
    """How the auditor replays the agent's graph (see :class:`~ariadne_lc.replay.Replayer`, docs/method.md#replay)."""

    tool_policy: ToolPolicy | str = ToolPolicy.RECORDED
    """``recorded``: serve recorded outputs, run only ``safe_tools``, refuse the rest; ``live``: run every tool."""
    safe_tools: Iterable[str] = ()
    """Tools without side effects, which a ``recorded`` replay may run for real (kept as a tuple)."""
    tool_node: str | None = None
    """The graph's tool node, when it cannot be found by itself."""
    max_turns: int = DEFAULT_MAX_TURNS
    """Model turns a replay may take before it counts as not finished."""
    tool_calls: ReplayMode = "recorded"
    """What the replay does with the audited step's own tool calls (docs/method.md#the-steps-own-tool-calls):
    ``recorded`` keeps them with their recorded outputs, so a side-effecting tool is never called with arguments nobody
    saw; ``rederive`` replaces them with those ``tool_call_deriver`` derives from the intervened thought and answers
    them under the tool policy."""
    tool_call_deriver: ToolCallDeriver | DeriveFunction | BaseChatModel | None = None
    """Required with ``rederive``: the agent's own chat model (a continuation call), a function
    ``(thought, context) -> tool calls``, or any :class:`~ariadne_lc.replay.ToolCallDeriver`."""
    allow_graph_change: bool = False
    """Audit a trace recorded under another graph than the auditor's (another model, prompt, tool, node or edge). By
    default such a trace is refused with :class:`~ariadne_lc.errors.GraphChangedError`, which says what changed."""
    allow_unchecked: bool = False
    """Score a replay whose model input could not be checked against a recorded one (a trace without recorded inputs:
    LangGraph Server threads, traces recorded before inputs were; a replay that made no model call). By default such
    an audit is ``inconclusive`` (``unchecked replay: ...``): nothing shows it was the recorded run with one thing
    changed. Reasonable where the graph and its prompts are known not to have changed since the run; every report
    counts the verdicts it gives apart."""
    agents: Mapping[str, Any] | None = None
    """Agent name -> its compiled graph, for sub-agents the auditor cannot find by itself where their caller reaches
    them (a closure, the module globals a tool reads, a bound method, a partial, a deep agent's specs): a sub-agent's
    runs are replayed on its own graph, never through its caller."""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "tool_policy", ToolPolicy(self.tool_policy))
        except ValueError:
            raise ConfigurationError(f"unknown tool_policy {self.tool_policy!r}; use 'recorded' or 'live'") from None
        object.__setattr__(self, "safe_tools", tuple(self.safe_tools))
        if self.max_turns < 1:
            raise ConfigurationError(f"max_turns must be at least 1, got {self.max_turns}")
        if self.tool_calls not in get_args(ReplayMode):
            raise ConfigurationError(f"unknown tool_calls {self.tool_calls!r}; use one of {list(get_args(ReplayMode))}")
        if self.tool_calls == "rederive" and self.tool_call_deriver is None:
            raise ConfigurationError(
                "tool_calls='rederive' needs a tool_call_deriver: the agent's own chat model (asked in a "
                "continuation call), a ToolCallDeriver, or a function (thought, context) -> tool calls"
            )
        for name, agent in (self.agents or {}).items():
            if not hasattr(agent, "get_state_history") or not hasattr(agent, "copy"):
                raise ConfigurationError(
                    f"agents[{name!r}] must be the agent's compiled graph (create_agent(...) or StateGraph.compile()), "
                    f"got {type(agent).__name__}"
                )
        if self.tool_calls == "recorded" and self.tool_call_deriver is not None:
            raise ConfigurationError(
                "tool_call_deriver is only used with tool_calls='rederive'; with 'recorded' the step's own tool "
                "calls and their recorded outputs are kept"
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class ScoringOptions:
    """How the auditor scores a replay and reports a batch (docs/method.md#violation)."""

    scorer: SimilarityScorer | None = None
    """Computes S(a, a*); ``None``: :class:`~ariadne_lc.scoring.AnswerMatchScorer`."""
    tau: float = DEFAULT_TAU
    """The violation rule's threshold: S at or above it means the answer held."""
    lam: int = DEFAULT_LAMBDA
    """The violation rule's minimum answer length (characters): shorter answers are ``inconclusive``."""
    min_strength: float | None = None
    """Contradictions weaker than this are ``inconclusive``, never violations (controls are exempt: a rerun has
    strength 0 by design). ``None``: no minimum."""
    answer_extractor: Callable[[str], str] | None = None
    """Maps a final message to the answer that is scored (both a and a*), e.g.
    ``ariadne_lc.demo.extract_final_answer``; S, φ and the λ gate then apply to it. ``None``: the whole message."""
    confidence: float = DEFAULT_CONFIDENCE
    """Level of every interval in batch reports."""
    rrr_threshold: float = DEFAULT_RRR_THRESHOLD
    """CCS below which a step counts as redundant in batch reports."""

    def __post_init__(self) -> None:
        _unit("tau", self.tau, "the S at or above which an answer counts as unchanged (default 0.8)")
        if self.lam < 0:
            raise ConfigurationError(f"lam must not be negative, got {self.lam}: it is a length in characters")
        if self.min_strength is not None:
            _unit("min_strength", self.min_strength, "pass None for no minimum")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigurationError(f"confidence must be in (0, 1), got {self.confidence}: e.g. 0.95")
        _unit("rrr_threshold", self.rrr_threshold, "a CCS level")


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputOptions:
    """Where the auditor's records go: spans, a result store, score write-back, more sinks (in that order)."""

    tracer_provider: TracerProvider | None = None
    """Where audit spans go; ``None``: the global provider."""
    logger_provider: LoggerProvider | None = None
    """Where the ``gen_ai.evaluation.result`` events go as log records (the Logs API, in the context of the evaluated
    agent span); ``None``: the global provider (nothing is emitted until one is set)."""
    evaluation_events: tuple[str, ...] = EVALUATION_EVENTS
    """Where the ``gen_ai.evaluation.result`` event goes: ``"span"`` (an event on the audit span, for backends that read
    spans only: Phoenix, Jaeger) and/or ``"log"`` (a log record through the Logs API, in the evaluated agent span's
    context: OpenTelemetry's way for new events); both by default."""
    capture_content: bool | None = None
    """Whether spans carry thoughts and answers (see :mod:`ariadne_lc.otel`); ``None``: the environment decides."""
    redact: Redactor | None = None
    """Applied to content before it goes on a span."""
    result_store: ResultStore | None = None
    """Where each result is put as soon as it exists (a :class:`~ariadne_lc.audit.ResultStoreSink`)."""
    score_writers: Sequence[ScoreWriter] = ()
    """Write each contradiction's score back onto the recorded agent span (e.g.
    :class:`~ariadne_lc.export.PhoenixScoreWriter`), through a :class:`~ariadne_lc.audit.ScoreWriteBackSink`. A failed
    write is logged and counted in ``writeback_errors``; it never fails the audit."""
    sinks: Sequence[AuditSink] = ()
    """More sinks (:class:`~ariadne_lc.audit.AuditSink`), after the span, the result store and the write-back."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "score_writers", tuple(self.score_writers))
        object.__setattr__(self, "sinks", tuple(self.sinks))
        for sink in self.sinks:
            if not isinstance(sink, AuditSink):
                raise ConfigurationError(
                    f"a sink needs an accept(finished) method, got {type(sink).__name__}; "
                    "see ariadne_lc.audit.AuditSink"
                )


DEFAULT_INTERVENTION = InterventionOptions()
"""The auditor's default interventions: the offline rule critic, paraphraser and swapper, the gate on."""
DEFAULT_REPLAY = ReplayOptions()
"""The auditor's default replay: recorded tool outputs, the step's own tool calls kept, the graph checked."""
DEFAULT_SCORING = ScoringOptions()
"""The auditor's default scoring: answer match, τ = 0.8, λ = 10, no minimum strength."""
DEFAULT_OUTPUT = OutputOptions()
"""The auditor's default output: audit spans on the global tracer provider, nothing else."""


class AuditorOptions(TypedDict, total=False):
    """The :class:`~ariadne_lc.Auditor`'s flat keywords, shorthands for the fields of its option objects (typed, so
    that mypy checks ``Auditor(graph, tau=...)`` as it checks ``ScoringOptions(tau=...)``)."""

    critic: Critic | None
    paraphraser: Critic | None
    swapper: ObservationSwapper | PlainObservationSwapper | None
    observation_swaps: int
    recorded_values: RecordedValues | None
    contradictions_per_step: int
    budget: float | None
    thought_similarity: ThoughtSimilarity | None
    min_thought_chars: int
    seed: int
    decisive: bool
    reader: AnswerReader | BaseChatModel | None
    action_reader: ActionReader | None
    gate_attempts: int
    tool_policy: ToolPolicy | str
    safe_tools: Iterable[str]
    tool_node: str | None
    max_turns: int
    tool_calls: ReplayMode
    tool_call_deriver: ToolCallDeriver | DeriveFunction | BaseChatModel | None
    allow_graph_change: bool
    allow_unchecked: bool
    agents: Mapping[str, Any] | None
    scorer: SimilarityScorer | None
    tau: float
    lam: int
    min_strength: float | None
    answer_extractor: Callable[[str], str] | None
    confidence: float
    rrr_threshold: float
    tracer_provider: TracerProvider | None
    logger_provider: LoggerProvider | None
    evaluation_events: tuple[str, ...]
    capture_content: bool | None
    redact: Redactor | None
    result_store: ResultStore | None
    score_writers: Sequence[ScoreWriter]
    sinks: Sequence[AuditSink]


_Options = TypeVar("_Options", InterventionOptions, ReplayOptions, ScoringOptions, OutputOptions)


def gather(
    flat: Mapping[str, Any],
    *,
    intervention: InterventionOptions | None = None,
    replay: ReplayOptions | None = None,
    scoring: ScoringOptions | None = None,
    output: OutputOptions | None = None,
) -> tuple[InterventionOptions, ReplayOptions, ScoringOptions, OutputOptions]:
    """The four option objects: those given (or the defaults), with each flat keyword routed into its own.

    Raises:
        TypeError: A flat keyword that is no option (as Python says of an unexpected keyword argument).
        ConfigurationError: An option given twice (in its object, away from its default, and flat), an object of the
            wrong type, or a bad value (each object's own check).
    """
    known = {f.name for o in (DEFAULT_INTERVENTION, DEFAULT_REPLAY, DEFAULT_SCORING, DEFAULT_OUTPUT) for f in fields(o)}
    for name in flat:
        if name not in known:
            raise TypeError(f"Auditor.__init__() got an unexpected keyword argument {name!r}")
    return (
        _merge("intervention", intervention, DEFAULT_INTERVENTION, flat),
        _merge("replay", replay, DEFAULT_REPLAY, flat),
        _merge("scoring", scoring, DEFAULT_SCORING, flat),
        _merge("output", output, DEFAULT_OUTPUT, flat),
    )


def _merge(keyword: str, given: _Options | None, default: _Options, flat: Mapping[str, Any]) -> _Options:
    kind = type(default).__name__
    if given is not None and not isinstance(given, type(default)):
        raise ConfigurationError(f"{keyword} must be a {kind}, got {type(given).__name__}")
    mine = {f.name: flat[f.name] for f in fields(default) if f.name in flat}
    if given is None:
        return replace(default, **mine) if mine else default
    for name in mine:
        value, usual = getattr(given, name), getattr(default, name)
        if value is not usual and value != usual:
            raise ConfigurationError(
                f"{name} is given twice: {keyword}={kind}({name}={value!r}) and {name}={flat[name]!r}; "
                f"pass it once, in the {kind} or as a keyword"
            )
    return replace(given, **mine) if mine else given
