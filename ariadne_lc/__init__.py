"""ariadne_lc: does your LangGraph agent's reasoning drive its answers?

Record live runs with :class:`AriadneCallbackHandler`, audit them with :class:`Auditor` (intervene on a
step, replay the agent's own graph from its checkpoint in an isolated thread, score how far the
answer moved), and read the scores as OpenTelemetry spans next to the agent trace. Audit a sample of
live traffic in the background with :class:`OnlineAuditor`.

The top level holds what wrapping an agent needs: the handler, the stores, the auditors and their
options, the critics and scorers, the results and the errors. Everything else lives in its module: the
records and the statistics' return types in :mod:`ariadne_lc.records`, the trace's parts in :mod:`ariadne_lc.trace`,
sinks and step selection in :mod:`ariadne_lc.audit`, the replayer in :mod:`ariadne_lc.replay`, the
online machinery in :mod:`ariadne_lc.online`. Importing the package loads neither scipy nor numpy
(statistics import them when they first compute) nor the CLI's typer and rich.
"""

from typing import TYPE_CHECKING, Any

from ariadne_lc._version import __version__
from ariadne_lc.audit import Auditor, InterventionOptions, OutputOptions, ReplayOptions, ScoringOptions
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
    ReplayInputMismatchError,
    StepNotFoundError,
    StoreError,
    TraceError,
    TraceNotFoundError,
)
from ariadne_lc.interventions import ControlType, InterventionType, LLMCritic, RuleCritic, RuleParaphraser
from ariadne_lc.online import OnlineAuditor
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.recording import record
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.scoring import (
    AnswerMatchScorer,
    ByLengthScorer,
    EmbeddingScorer,
    FirstConclusiveScorer,
    LLMJudge,
    NumericAnswerScorer,
)
from ariadne_lc.store import (
    InMemoryResultStore,
    InMemoryTraceStore,
    ResultStore,
    SQLiteResultStore,
    SQLiteTraceStore,
    TraceStore,
    flush_traces,
)
from ariadne_lc.trace import Trace

if TYPE_CHECKING:
    from ariadne_lc.middleware import AriadneMiddleware


def __getattr__(name: str) -> Any:
    # The middleware subclasses langchain.agents' AgentMiddleware, whose import pulls in httpx's command
    # line (rich, click, pygments): it loads on first use, so that ``import ariadne_lc`` stays light.
    if name == "AriadneMiddleware":
        from ariadne_lc.middleware import AriadneMiddleware

        return AriadneMiddleware
    raise AttributeError(f"module 'ariadne_lc' has no attribute {name!r}")


__all__ = [
    "AnswerMatchScorer",
    "AriadneCallbackHandler",
    "AriadneError",
    "AriadneMiddleware",
    "AuditReport",
    "AuditResult",
    "Auditor",
    "ByLengthScorer",
    "ConfigurationError",
    "ControlType",
    "CriticError",
    "EmbeddingScorer",
    "FirstConclusiveScorer",
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "InterventionOptions",
    "InterventionType",
    "LLMCritic",
    "LLMJudge",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "NumericAnswerScorer",
    "OnlineAuditor",
    "OutputOptions",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayInputMismatchError",
    "ReplayOptions",
    "ResultStore",
    "RuleCritic",
    "RuleParaphraser",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "ScoringOptions",
    "StepNotFoundError",
    "StoreError",
    "Trace",
    "TraceError",
    "TraceNotFoundError",
    "TraceStore",
    "__version__",
    "flush_traces",
    "record",
]
