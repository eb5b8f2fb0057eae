"""Attribute names of the spans and events ariadne_lc emits, in one place.

The OpenTelemetry GenAI conventions for evaluations are at "Development" status and the Python semconv
package marks their constants deprecated (they moved to a new repository), so we define the strings
ourselves. OpenInference mirrors let Arize Phoenix show the same score.
"""

from __future__ import annotations

from typing import Final

from ariadne_lc import links

__all__ = [
    "ARIADNE_ANSWER_CHANGED",
    "ARIADNE_BYPASS_PREFIX",
    "ARIADNE_CONTROL",
    "ARIADNE_COVERAGE",
    "ARIADNE_DECISIVE_ATTEMPTS",
    "ARIADNE_DECISIVE_FORM",
    "ARIADNE_DECISIVE_INCOHERENT",
    "ARIADNE_DECISIVE_OUTCOME",
    "ARIADNE_DECISIVE_READER",
    "ARIADNE_HANDOFF_TO",
    "ARIADNE_IMPLIED_INTERVENED",
    "ARIADNE_IMPLIED_ORIGINAL",
    "ARIADNE_INTERVENTION_TYPE",
    "ARIADNE_LINK",
    "ARIADNE_LINK_ROLE",
    "ARIADNE_METRIC_PREFIX",
    "ARIADNE_MODEL_INPUTS",
    "ARIADNE_PARENT_AGENT",
    "ARIADNE_PARENT_CALL_ID",
    "ARIADNE_PARENT_TRACE_ID",
    "ARIADNE_PREFILL",
    "ARIADNE_READER_AGREES",
    "ARIADNE_REPLAY",
    "ARIADNE_REPLAY_CHECKPOINT_ID",
    "ARIADNE_REPLAY_INPUT_CHECKED",
    "ARIADNE_REPLAY_MODE",
    "ARIADNE_SAMPLE_RATE",
    "ARIADNE_SEVERITY",
    "ARIADNE_SIMILARITY_SPREAD",
    "ARIADNE_STEP_INDEX",
    "ARIADNE_STEP_INDICES",
    "ARIADNE_STRENGTH",
    "ARIADNE_TARGET_SPAN_ID",
    "ARIADNE_TARGET_TRACE_ID",
    "ARIADNE_TRACKING",
    "ARIADNE_TYPE_SELECTION",
    "ARIADNE_VIOLATION",
    "ERROR_TYPE",
    "EVALUATION_NAME",
    "EVALUATION_OPERATION",
    "EVENT_EVALUATION_RESULT",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_EVALUATION_EXPLANATION",
    "GEN_AI_EVALUATION_NAME",
    "GEN_AI_EVALUATION_SCORE_LABEL",
    "GEN_AI_EVALUATION_SCORE_VALUE",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_NAME",
    "LINK_ROLE_EVALUATED_TRACE",
    "OPENINFERENCE_EVAL_LABEL",
    "OPENINFERENCE_EVAL_NAME",
    "OPENINFERENCE_EVAL_SCORE",
    "OPENINFERENCE_SPAN_KIND",
    "OPENINFERENCE_SPAN_KIND_EVALUATOR",
    "evaluation_name",
]

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
EVALUATION_OPERATION: Final = "evaluation"
EVALUATION_NAME: Final = "causal_faithfulness"
"""The value of ``gen_ai.evaluation.name`` on every ``thought->answer`` audit span and written-back score."""


def evaluation_name(link: str) -> str:
    """``gen_ai.evaluation.name`` of ``link`` (its :attr:`~ariadne_lc.links.LinkSpec.evaluation_name`: one evaluation
    per link in a backend, never pooled; ``causal_faithfulness`` for a link not registered here)."""
    spec = links.find(link)
    return EVALUATION_NAME if spec is None else spec.evaluation_name


GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
ERROR_TYPE: Final = "error.type"
EVENT_EVALUATION_RESULT: Final = "gen_ai.evaluation.result"

OPENINFERENCE_SPAN_KIND: Final = "openinference.span.kind"
OPENINFERENCE_SPAN_KIND_EVALUATOR: Final = "EVALUATOR"
OPENINFERENCE_EVAL_NAME: Final = "evaluations.0.evaluation.name"
OPENINFERENCE_EVAL_SCORE: Final = "evaluations.0.evaluation.score"
OPENINFERENCE_EVAL_LABEL: Final = "evaluations.0.evaluation.label"

ARIADNE_INTERVENTION_TYPE: Final = "ariadne.intervention.type"
ARIADNE_STEP_INDEX: Final = "ariadne.step.index"
ARIADNE_STRENGTH: Final = "ariadne.intervention.strength"
ARIADNE_TYPE_SELECTION: Final = "ariadne.intervention.selection"
ARIADNE_CONTROL: Final = "ariadne.control"
ARIADNE_SEVERITY: Final = "ariadne.severity"
ARIADNE_STEP_INDICES: Final = "ariadne.step.indices"
ARIADNE_SIMILARITY_SPREAD: Final = "ariadne.similarity.spread"
ARIADNE_METRIC_PREFIX: Final = "ariadne.metric."
ARIADNE_VIOLATION: Final = "ariadne.violation"
ARIADNE_ANSWER_CHANGED: Final = "ariadne.answer_changed"
ARIADNE_REPLAY_CHECKPOINT_ID: Final = "ariadne.replay.checkpoint_id"
ARIADNE_REPLAY_MODE: Final = "ariadne.replay.mode"
ARIADNE_REPLAY_INPUT_CHECKED: Final = "ariadne.replay.input_checked"
"""Whether the replay's model input was checked against the recorded one (false: an unchecked replay's verdict)."""
"""``recorded`` or ``rederive``: what the replay did with the audited step's own tool calls."""
ARIADNE_SAMPLE_RATE: Final = "ariadne.sample_rate"
ARIADNE_TARGET_TRACE_ID: Final = "ariadne.target.trace_id"
ARIADNE_TARGET_SPAN_ID: Final = "ariadne.target.span_id"
ARIADNE_LINK_ROLE: Final = "ariadne.link.role"
LINK_ROLE_EVALUATED_TRACE: Final = "evaluated_trace"
ARIADNE_REPLAY: Final = "ariadne.is_replay"
"""Run metadata marking the auditor's own replays (not ``ariadne.replay``: that prefix holds span attributes)."""
ARIADNE_PARENT_TRACE_ID: Final = "ariadne.parent.trace_id"
"""The trace id of the agent run that started this one (run metadata of a sub-agent's run; span attribute)."""
ARIADNE_PARENT_CALL_ID: Final = "ariadne.parent.call_id"
"""The parent's tool call that started this run (run metadata of a sub-agent's run; span attribute)."""
ARIADNE_HANDOFF_TO: Final = "ariadne.handoff.to"
"""On the recorder's ``execute_tool`` span of a hand-off (``transfer_to_<agent>``): the agent handed to."""
ARIADNE_PARENT_AGENT: Final = "ariadne.parent.agent"
"""The parent agent's name (run metadata of a sub-agent's run; span attribute)."""
ARIADNE_MODEL_INPUTS: Final = "ariadne_model_inputs"
"""Run config key (``configurable``) of a replay: the list into which :class:`~ariadne_lc.AriadneMiddleware` puts what
the first model call it wraps was given (the replay invariant, :mod:`ariadne_lc.replay._inputs`)."""
ARIADNE_PREFILL: Final = "ariadne_prefill"
"""Run config key (``configurable``) of a ``thought->action`` re-run: the thought (text, or an ``AIMessage`` in the
step's own format) :class:`~ariadne_lc.AriadneMiddleware` puts as a trailing assistant message of the model call, for
the model to continue."""
ARIADNE_LINK: Final = "ariadne.link"
"""Which link of the agent's loop an audit cut (``thought->action``, ``observation->answer``, ``thought->answer``)."""
ARIADNE_COVERAGE: Final = "ariadne.coverage"
"""On a batch's summary span: the share of audited steps with a verdict on at least one link."""
ARIADNE_BYPASS_PREFIX: Final = "ariadne.bypass."
ARIADNE_DECISIVE_OUTCOME: Final = "ariadne.decisive.outcome"
"""What the decisiveness gate decided (``decisive``, ``not_decisive``, ``no_commitment``, ``placebo_kept``,
``placebo_changed``, ``incoherent``); absent with the gate off and on controls it does not gate."""
ARIADNE_DECISIVE_READER: Final = "ariadne.decisive.reader"
"""Which reader read the implied answers (``rule``, ``model:<name>``)."""
ARIADNE_DECISIVE_ATTEMPTS: Final = "ariadne.decisive.attempts"
"""Edits the gate read before it decided."""
ARIADNE_DECISIVE_INCOHERENT: Final = "ariadne.decisive.incoherent"
"""Edits the gate rejected because they contradicted themselves (part of the attempts)."""
ARIADNE_DECISIVE_FORM: Final = "ariadne.decisive.form"
"""How the original thought states its commitment (``calculation``, ``number``, ``option``, ``yes_no``, ...)."""
ARIADNE_IMPLIED_ORIGINAL: Final = "ariadne.implied.original"
"""The answer the original thought implies: content, recorded only when content capture is on."""
ARIADNE_IMPLIED_INTERVENED: Final = "ariadne.implied.intervened"
"""The answer the intervened thought implies: content, recorded only when content capture is on."""
ARIADNE_READER_AGREES: Final = "ariadne.reader_agrees"
"""Whether the gate's reading of the original thought was the answer the agent recorded (``AuditResult.reader_agrees``);
absent when not checked."""
ARIADNE_TRACKING: Final = "ariadne.tracking"
"""Where the counterfactual answer went: ``tracks`` (to the intervened thought's implied answer), ``elsewhere``
or ``stayed``; absent when no implied answer was read."""
