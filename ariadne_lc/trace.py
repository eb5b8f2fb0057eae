"""The record of one live agent run: what it was asked, what it thought and did, what it answered.

A :class:`Trace` is what the recorder writes and the auditor reads. Every :class:`Step` carries what is
needed to go back to it: the thread, the checkpoint namespace and the LangGraph task that produced it
(the checkpoint *before* that task is the fork point), and the id of the message it wrote.
All models are pydantic v2 and round-trip through JSON unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SPLIT_MARK",
    "AgentLink",
    "CheckpointRef",
    "GraphFingerprint",
    "HandedBack",
    "InterruptRecord",
    "MessageDigest",
    "ModelInput",
    "SpanRef",
    "Step",
    "ToolCall",
    "Trace",
    "UnitKind",
    "output_unit",
    "recorded_trace_id",
    "split_run_id",
    "state_unit",
    "unit_kind",
]

_DOMAIN_TAG = "domain:"


class HandedBack(BaseModel):
    """What the agent a hand-off started returned to the agent that handed off, as that agent read it back.

    A supervisor (``langgraph-supervisor``) hands a question to a worker with a ``transfer_to_<worker>`` call; the
    worker's last message comes back into the supervisor's conversation, and the supervisor answers from it. That
    message, not the hand-off's "Successfully transferred" acknowledgement, is what the supervisor observed: the
    ``observation->answer`` link changes it in the supervisor's state and replays the supervisor alone.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    """The message's text, as the caller read it."""
    message_id: str
    """Its id in the graph state (the worker's answer), where a replay changes it."""
    trace_id: str
    """The run that returned it (the worker's trace)."""


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
    agents: tuple[str, ...] = ()
    """The trace ids of the agent runs this call started (a deep agent's sub-agents behind its ``task`` tool), each
    recorded as its own trace whose :attr:`Trace.parent` points back here."""
    handed_back: HandedBack | None = None
    """A hand-off's observation: what the agent it handed to returned, read back by the caller's next turn."""


SPLIT_MARK: Final = "~"
"""Joins a recorded trace's id and the number of a run split from it at audit time (``<trace id>~<n>``: a
supervisor's workers, recorded in the supervisor's trace, are audited as runs of their own)."""


def split_run_id(trace_id: str, n: int) -> str:
    """The id of the ``n``-th run split from recorded trace ``trace_id`` (the first keeps the trace's own id)."""
    return trace_id if n == 0 else f"{trace_id}{SPLIT_MARK}{n}"


def recorded_trace_id(run_id: str) -> str:
    """The recorded trace a run's id comes from: itself, or the trace a split run was split from."""
    return run_id.split(SPLIT_MARK, 1)[0]


def output_unit(call: ToolCall, index: int) -> str:
    """The name of the unit that is ``call``'s output, ``index`` its position among its step's calls: ``output:`` and
    the call's id (quoted, so that a ``:`` in a provider's id cannot make two units' keys alike), or ``output:#`` and
    the position when the call has no id. The one name of an output unit: plan, budget, coverage, resume and the
    online jobs all key by it (a step's thought is the unit ``thought``)."""
    return f"output:{quote(call.id, safe='')}" if call.id else f"output:#{index}"


def state_unit(call: ToolCall, index: int) -> str:
    """The name of the unit that is the state ``call`` wrote (a ``write_todos`` to-do list), named like an output
    unit (:func:`output_unit`) with ``state:`` first."""
    return "state" + output_unit(call, index).removeprefix("output")


UnitKind = Literal["thought", "output", "state"]
"""What a unit is: a step's thought, a tool's output, or state a tool wrote (a to-do list)."""


def unit_kind(unit: str) -> UnitKind:
    """The kind of the unit named ``unit`` (``thought``, :func:`output_unit`, :func:`state_unit`)."""
    if unit.startswith("state:"):
        return "state"
    return "thought" if unit == "thought" else "output"


class AgentLink(BaseModel):
    """Where a run of one agent was started by another: the parent's trace and the tool call that started it.

    Runs of several agents (a deep agent's sub-agents) are traces of their own, linked both ways: the child's
    :attr:`Trace.parent` is this, the parent's :attr:`ToolCall.agents` lists the child's trace id.
    """

    model_config = ConfigDict(frozen=True)

    trace_id: str
    """The parent agent's trace."""
    call_id: str | None = None
    """The parent's tool call that started the run (its ``ToolCall.id``)."""
    agent_name: str | None = None
    """The parent agent's name."""


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


class InterruptRecord(BaseModel):
    """One human-in-the-loop pause of a run: what the graph asked and what the human answered.

    A replay that reaches the same question (same node, same value) is resumed with ``resume``
    instead of waiting for a human.
    """

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    """LangGraph's interrupt id in the live thread (replays get other ids; they match by node and value)."""
    node: str | None = None
    """The node that called ``interrupt()``; ``None`` when the recorder did not see the pause."""
    task_path: str | None = None
    """The asking node's checkpoint namespace (``node:<task id>``, with parents for subgraphs)."""
    value: Any = None
    """What the graph asked (the ``interrupt()`` argument), as JSON-compatible data."""
    answered: bool = False
    """Whether the run was resumed with an answer to it."""
    resume: Any = None
    """The answer it was resumed with (``Command(resume=...)``), when ``answered``."""


class SpanRef(BaseModel):
    """The OpenTelemetry span context of the agent run, kept so that audit spans can link to it."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    """32 lower-case hex digits."""
    span_id: str
    """16 lower-case hex digits."""
    trace_flags: int = 1
    """W3C trace flags (1 = sampled)."""


class GraphFingerprint(BaseModel):
    """What the graph a run ran under was made of, so that an audit with another graph is noticed.

    Derived from the compiled graph (see :mod:`ariadne_lc._fingerprint`): its nodes and edges, the
    tools each node can call (name, description, argument schema), the chat models reachable from each
    node (type, model name, parameters) and the prompts reachable from each node (system messages,
    prompt templates, strings held in a variable named like a prompt). Models and prompts that a node
    builds at call time are invisible to it. Every value is stable across processes (no ids or
    addresses), so a worker that loads the same graph by import path gets the same fingerprint.
    """

    model_config = ConfigDict(frozen=True)

    nodes: tuple[str, ...] = ()
    """Node names, sorted."""
    edges: tuple[str, ...] = ()
    """``"a -> b"`` (``"a -?-> b"`` for a conditional edge), sorted."""
    tools: dict[str, str] = Field(default_factory=dict)
    """Tool name -> a short hash of its description and argument schema."""
    models: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Node -> the chat models reachable from it (``"ChatOpenAI gpt-4o-mini #<hash of its parameters>"``)."""
    prompts: dict[str, str] = Field(default_factory=dict)
    """Node -> a short hash of the prompts reachable from it."""
    digest: str = ""
    """A hash of all of the above: equal digests, equal graphs (as far as the fingerprint sees)."""
    partial: bool = False
    """Seen from the model request only (``AriadneMiddleware``, which never sees the graph): only
    :attr:`system_lines` is known, and only it is compared."""
    system_lines: tuple[str, ...] = ()
    """Digests of the non-empty lines of the system prompt the agent's model was given, sorted (partial
    fingerprints): the graph's own system prompt must be among them, line by line (middleware may add lines)."""


@dataclass(frozen=True, slots=True)
class MessageDigest:
    """One message a model call read, as :class:`ModelInput` keeps it: its type, its id and a digest of its content."""

    kind: str
    """The message's type: ``system``, ``human``, ``ai``, ``tool``."""
    id: str
    """Its id in the graph state (``""`` when it has none)."""
    digest: str
    """A digest of its content: equal contents, equal digests."""

    @classmethod
    def parse(cls, entry: str) -> MessageDigest:
        """The message of one ``"<type>:<message id>:<digest>"`` entry (an id may hold colons, a type and a digest
        never do)."""
        kind, _, rest = entry.partition(":")
        message_id, _, digest = rest.rpartition(":")
        return cls(kind, message_id, digest)

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}:{self.digest}"


class ModelInput(BaseModel):
    """What one model call was given, as digests: enough to tell that a replay gave the model the same input.

    A replay is the recorded run with exactly one thing changed; the auditor checks it against this record
    (:mod:`ariadne_lc.replay._inputs`). Digests, not text: a trace stays small and holds no more content than
    its steps already do.
    """

    model_config = ConfigDict(frozen=True)

    messages: tuple[str, ...] = ()
    """One entry per message the model read, in order: ``"<type>:<message id>:<digest of its content>"`` (the
    system prompt as the middleware stack built it is the first message when there is one)."""
    tools: tuple[str, ...] | None = None
    """The names of the tools bound to the call, sorted; ``None`` when the recorder could not see them."""
    source: str = "callback"
    """Who saw the call: ``"callback"`` (the chat model's start callback) or ``"middleware"`` (the model request
    ``AriadneMiddleware`` wrapped). A replay is checked against what the same source sees."""

    def digests(self) -> tuple[MessageDigest, ...]:
        """:attr:`messages` as records (they are stored as strings, so that stored traces keep their form)."""
        return tuple(MessageDigest.parse(entry) for entry in self.messages)


class Step(BaseModel):
    """One model turn of the agent: its thought and the tools it called (s_i in docs/method.md#traces)."""

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
    model_input: ModelInput | None = None
    """What the model was given for this turn (``None`` in traces recorded before this was kept, or from a
    LangGraph Server thread): what a replay of this turn must give it again, except for the edit."""
    structured_output: bool = False
    """This turn gave the run's structured response through a tool call (``create_agent(...,
    response_format=...)`` with the tool strategy): that call is the answer, not a tool, so the turn is final."""

    @property
    def tool(self) -> str | None:
        """The first tool's name, ``tool_i`` in docs/method.md#traces."""
        return self.tool_calls[0].name if self.tool_calls else None

    @property
    def is_final(self) -> bool:
        """Whether this turn answered instead of calling tools (or answered with a structured-output call)."""
        return not self.tool_calls or self.structured_output


class Trace(BaseModel):
    """One recorded agent run (T(q) and a(q) in docs/method.md#traces)."""

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
    """The run's answer: its structured response as JSON when it ended with one (``create_agent(...,
    response_format=...)``), else the text of the last AI message of its output. ``None`` when the run has
    no answer (it failed, or paused at an interrupt); ``""`` is an answer that is empty, which no audit
    gives a verdict on."""
    error: str | None = None
    """Why the trace cannot be audited: the run raised, or it is only the resumed half of a turn whose
    paused trace was not found. Such traces are kept but not audited."""
    interrupted: bool = False
    """The run is paused at a LangGraph interrupt (human in the loop): not finished, no final answer yet."""
    interrupts: tuple[InterruptRecord, ...] = ()
    """Every pause of this user turn, in order, with the answers it was resumed with."""
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
    parent: AgentLink | None = None
    """The run of another agent that started this one (a sub-agent's run, started by its parent's ``task`` call);
    ``None`` for a run the user started."""
    graph: GraphFingerprint | None = None
    """The graph the run ran under, when the recorder knew it (``None`` in traces recorded before
    fingerprints, or by a handler given no graph: such traces are audited without the check)."""

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

    @property
    def agents_started(self) -> tuple[str, ...]:
        """The trace ids of the agent runs this run's tool calls started (its sub-agents), in order."""
        return tuple(a for s in self.steps for c in s.tool_calls for a in c.agents)

    def step(self, index: int) -> Step:
        """The step with this index (raises :class:`~ariadne_lc.errors.StepNotFoundError`)."""
        from ariadne_lc.errors import StepNotFoundError

        if not 0 <= index < len(self.steps):
            raise StepNotFoundError(
                f"trace {self.trace_id} has {len(self.steps)} steps; step {index} does not exist "
                f"(valid: 0..{len(self.steps) - 1})"
            )
        return self.steps[index]
