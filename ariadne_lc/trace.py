"""The record of one live agent run: what it was asked, what it thought and did, what it answered.

A :class:`Trace` is what the recorder writes and the auditor reads. Every :class:`Step` carries what is
needed to go back to it: the thread, the checkpoint namespace and the LangGraph task that produced it
(the checkpoint *before* that task is the fork point), and the id of the message it wrote.
All models are pydantic v2 and round-trip through JSON unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CheckpointRef", "SpanRef", "Step", "ToolCall", "Trace"]

_DOMAIN_TAG = "domain:"


class ToolCall(BaseModel):
    """One tool call the model asked for, with the output the tool gave in the live run."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    """The provider's tool call id; tool outputs are matched to calls by it."""
    name: str
    """The tool's name."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments as the model produced them."""
    output: str | None = None
    """The tool message content of the live run, or ``None`` when no output was seen."""
    status: str | None = None
    """``"success"`` or ``"error"`` as the tool message said; ``None`` when no output was seen."""


class CheckpointRef(BaseModel):
    """Where in the checkpointer a step can be found again.

    LangGraph's callbacks do not carry a checkpoint id, but they do carry the task id of the node that
    ran; the checkpoint whose pending tasks include that id is the state right before the step.
    """

    model_config = ConfigDict(frozen=True)

    thread_id: str | None = None
    """The ``configurable.thread_id`` of the live run."""
    checkpoint_ns: str = ""
    """The namespace of the graph that ran the node (empty for the top-level graph)."""
    task_id: str | None = None
    """The LangGraph task id of the node run that produced the step."""
    task_path: str | None = None
    """The node's checkpoint namespace as LangGraph reports it (``node:<task id>``)."""
    checkpoint_id: str | None = None
    """The id of the checkpoint before the step, once it has been resolved."""


class SpanRef(BaseModel):
    """The OpenTelemetry span context of the agent run, kept so that audit spans can link to it."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    """32 lower-case hex digits."""
    span_id: str
    """16 lower-case hex digits."""
    trace_flags: int = 1
    """W3C trace flags (1 = sampled)."""


class Step(BaseModel):
    """One model turn of the agent: its thought and the tools it called (s_i of the formulation)."""

    model_config = ConfigDict(frozen=True)

    index: int
    """Position among this run's model turns, from 0."""
    node: str
    """The graph node that produced the message (``model`` for ``create_agent``)."""
    langgraph_step: int | None = None
    """LangGraph's superstep counter when the node ran."""
    thought: str = ""
    """The text of the message, with reasoning content blocks first."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls of this turn, with their live outputs."""
    message_id: str | None = None
    """The id of the AI message in the graph state; the replay substitutes the message with this id."""
    checkpoint: CheckpointRef = Field(default_factory=CheckpointRef)
    """Everything needed to fork the graph at this step."""

    @property
    def tool(self) -> str | None:
        """The first tool's name, the formulation's ``tool_i``."""
        return self.tool_calls[0].name if self.tool_calls else None

    @property
    def is_final(self) -> bool:
        """Whether this turn answered instead of calling tools."""
        return not self.tool_calls


class Trace(BaseModel):
    """One recorded agent run (T(q) and a(q) of the formulation)."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    """Our id for the run (the root LangChain run id)."""
    thread_id: str | None = None
    """The LangGraph thread the run belongs to."""
    query: str = ""
    """The first human message of the run's input."""
    steps: tuple[Step, ...] = ()
    """The model turns, in order."""
    final_answer: str | None = None
    """The text of the last AI message of the run's output."""
    error: str | None = None
    """Set when the run raised; such traces are kept but not audited."""
    interrupted: bool = False
    """The run paused at a LangGraph interrupt (human in the loop); it has no final answer yet."""
    span: SpanRef | None = None
    """The agent's span context when the run started (or ended), if it was traced."""
    agent_name: str | None = None
    """The graph's name, or ``gen_ai.agent.name`` from run metadata."""
    tags: tuple[str, ...] = ()
    """Run tags (for filtering and break-downs)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Run metadata that is JSON-serialisable; open for future keys."""
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    """When the root run started."""
    ended_at: datetime | None = None
    """When the root run ended."""

    @property
    def domain(self) -> str | None:
        """The run's domain: ``metadata["domain"]``, else the first ``domain:<x>`` tag, else ``None``."""
        value = self.metadata.get("domain")
        if isinstance(value, str) and value.strip():
            return value.strip()
        for tag in self.tags:
            if tag.startswith(_DOMAIN_TAG) and tag[len(_DOMAIN_TAG) :].strip():
                return tag[len(_DOMAIN_TAG) :].strip()
        return None

    def step(self, index: int) -> Step:
        """The step with this index (raises :class:`~ariadne_lc.errors.StepNotFoundError`)."""
        from ariadne_lc.errors import StepNotFoundError

        if not 0 <= index < len(self.steps):
            raise StepNotFoundError(
                f"trace {self.trace_id} has {len(self.steps)} steps; step {index} does not exist "
                f"(valid: 0..{len(self.steps) - 1})"
            )
        return self.steps[index]
