"""ariadne_lc: does your LangGraph agent's reasoning drive its answers?

Record live runs with :class:`AriadneCallbackHandler`, audit them with :class:`Auditor` (intervene on a
step, replay the agent's own graph from its checkpoint in an isolated thread, score how far the
answer moved), and read the scores as OpenTelemetry spans next to the agent trace. Audit a sample of
live traffic in the background with :class:`OnlineAuditor`.
"""

from ariadne_lc._version import __version__
from ariadne_lc.audit import Auditor, select_steps
from ariadne_lc.errors import (
    AriadneError,
    ConfigurationError,
    CriticError,
    MissingExtraError,
    NoCheckpointerError,
    NoThoughtError,
    NotReplayableError,
    ReplayDidNotFinishError,
    ReplayError,
    StepNotFoundError,
    StoreError,
    TraceError,
    TraceNotFoundError,
)
from ariadne_lc.interventions import (
    ControlType,
    Intervention,
    InterventionType,
    LLMCritic,
    RuleCritic,
    RuleParaphraser,
)
from ariadne_lc.online import JobState, JobStore, OnlineAuditor, OnlineStats, RunFilter, ShutdownReport, SQLiteJobStore
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.records import (
    Aggregate,
    AuditReport,
    AuditResult,
    PlaceboComparison,
    Redundancy,
    SimilarityMetrics,
    StepContribution,
)
from ariadne_lc.replay import Replayer, ReplayResult, ToolPolicy
from ariadne_lc.scoring import (
    AnswerMatchScorer,
    ByLengthScorer,
    EmbeddingScorer,
    FirstConclusiveScorer,
    LLMJudge,
    NumericAnswerScorer,
    Similarity,
)
from ariadne_lc.store import (
    InMemoryResultStore,
    InMemoryTraceStore,
    ResultStore,
    SQLiteResultStore,
    SQLiteTraceStore,
    TraceStore,
)
from ariadne_lc.trace import CheckpointRef, SpanRef, Step, ToolCall, Trace

__all__ = [
    "Aggregate",
    "AnswerMatchScorer",
    "AriadneCallbackHandler",
    "AriadneError",
    "AuditReport",
    "AuditResult",
    "Auditor",
    "ByLengthScorer",
    "CheckpointRef",
    "ConfigurationError",
    "ControlType",
    "CriticError",
    "EmbeddingScorer",
    "FirstConclusiveScorer",
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "Intervention",
    "InterventionType",
    "JobState",
    "JobStore",
    "LLMCritic",
    "LLMJudge",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "NumericAnswerScorer",
    "OnlineAuditor",
    "OnlineStats",
    "PlaceboComparison",
    "Redundancy",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayResult",
    "Replayer",
    "ResultStore",
    "RuleCritic",
    "RuleParaphraser",
    "RunFilter",
    "SQLiteJobStore",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "ShutdownReport",
    "Similarity",
    "SimilarityMetrics",
    "SpanRef",
    "Step",
    "StepContribution",
    "StepNotFoundError",
    "StoreError",
    "ToolCall",
    "ToolPolicy",
    "Trace",
    "TraceError",
    "TraceNotFoundError",
    "TraceStore",
    "__version__",
    "select_steps",
]
