"""The auditor: intervene on a recorded step, replay the agent's graph, score how far the answer moved.

For each (trace, step k, intervention ι) the :class:`Auditor` asks the critic for s'_k, replays the
user's own graph from the checkpoint before s_k with s'_k substituted (see :mod:`ariadne_lc.replay`),
scores S(a, a*) and applies φ = 1 − S and the violation rule (see :mod:`ariadne_lc.scoring`), and
hands the record to its sinks: the OpenTelemetry audit span (see :mod:`ariadne_lc.otel`), a result
store, score write-back (see :class:`AuditSink`).

Beside the five contradictions it runs the controls (``paraphrase``, ``rerun``, ``ablation``,
``early_answer``, ``filler``; see :class:`~ariadne_lc.interventions.ControlType`), resolves the
``random`` and ``adaptive`` type selectors per step (:mod:`ariadne_lc.interventions.selection`), and
intervenes on several steps at once when ``step`` is a list of indices (docs/method.md#multi-step).

The package follows the data flow: ``_plan`` (which audits; bad requests fail here, before any work),
``_budget`` (which units of a long run the default plan audits, with their inclusion probabilities), ``_run``
(intervene, replay, score: one flow for sync and async), ``_assemble`` (the record, a pure function), ``_sinks``
(where records go), ``_options`` (the auditor's options, four small frozen objects), ``_auditor`` (the front).
Failures of one audit (a critic model that raised, a replay that broke) are recorded in its result
(``status="failed"``, with ``error_type``) so that a batch goes on and nothing already computed is lost.
"""

from ariadne_lc.audit._auditor import Auditor
from ariadne_lc.audit._budget import DEFAULT_BUDGET, Sampled, cost_bound
from ariadne_lc.audit._options import (
    DEFAULT_INTERVENTION,
    DEFAULT_OUTPUT,
    DEFAULT_REPLAY,
    DEFAULT_SCORING,
    AuditorOptions,
    InterventionOptions,
    OutputOptions,
    ReplayOptions,
    ScoringOptions,
)
from ariadne_lc.audit._plan import (
    DECISIVE_ORDER,
    DEFAULT_INTERVENTIONS,
    DEFAULT_MIN_THOUGHT_CHARS,
    PlannedAudit,
    StepSelector,
    select_steps,
)
from ariadne_lc.audit._pool import RecordedValues
from ariadne_lc.audit._sinks import AuditSink, FinishedAudit, ResultStoreSink, ScoreWriteBackSink, SpanSink

__all__ = [
    "DECISIVE_ORDER",
    "DEFAULT_BUDGET",
    "DEFAULT_INTERVENTION",
    "DEFAULT_INTERVENTIONS",
    "DEFAULT_MIN_THOUGHT_CHARS",
    "DEFAULT_OUTPUT",
    "DEFAULT_REPLAY",
    "DEFAULT_SCORING",
    "AuditSink",
    "Auditor",
    "AuditorOptions",
    "FinishedAudit",
    "InterventionOptions",
    "OutputOptions",
    "PlannedAudit",
    "RecordedValues",
    "ReplayOptions",
    "ResultStoreSink",
    "Sampled",
    "ScoreWriteBackSink",
    "ScoringOptions",
    "SpanSink",
    "StepSelector",
    "cost_bound",
    "select_steps",
]
