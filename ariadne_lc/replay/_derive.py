"""Re-deriving the audited step's own tool calls from the intervened thought (``tool_calls="rederive"``).

Why: a replay keeps the step's message id, its tool calls and their recorded outputs by default, so a decision
that the thought passes on through its own tool call (ReAct: "so I look up X" -> ``search(X)``) reaches the
answer through the recorded tool output whatever the thought now says. A faithful agent's answer cannot move,
and the audit calls that a violation. Re-deriving asks which calls the *intervened* thought leads to, and lets
the tool policy answer those instead (docs/method.md#the-steps-own-tool-calls).

A deriver (:class:`ToolCallDeriver`) gets the intervened thought and what it may know of the step
(:class:`StepContext`), and returns the tool calls that follow, each a name and an arguments dict (ids are the
replay's). Two ship:

- :class:`FunctionDeriver`: a function the user writes, ``(thought, context) -> calls``. Right when graph code,
  not the model, turns a thought into calls (the calibration's ``coupled_tool`` agent): the function is that
  code. A plain function passed as the deriver is wrapped in one.
- :class:`ContinuationDeriver`: a continuation call to a chat model bound to the graph's tools: the history the
  step's node had, the intervened thought as the model's own turn, and an instruction to make the calls it
  leads to. With ``instruction=None`` the thought is the last message, which a provider that reads a trailing
  assistant message as the start of its reply (prefill, e.g. Anthropic) continues; others answer it as a new
  turn. A chat model passed as the deriver is wrapped in one.

Not shipped: re-running the step's node with its own model made to start its reply with the thought. The
auditor cannot reach a model held inside a node's function, and a node that builds its own prompt would be
given another one; a user who can do it writes that as a :class:`FunctionDeriver`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from ariadne_lc._thoughts import prefill_of
from ariadne_lc._twin import Call, Flow, run_async, run_sync
from ariadne_lc.errors import AriadneError, ConfigurationError, ToolCallDerivationError
from ariadne_lc.trace import Step, ToolCall

__all__ = [
    "CONTINUATION_INSTRUCTION",
    "ContinuationDeriver",
    "DeriveFunction",
    "FunctionDeriver",
    "StepContext",
    "ToolCallDeriver",
    "as_deriver",
    "derive",
    "with_tool_calls",
]

CONTINUATION_INSTRUCTION = (
    "Continue from your reasoning above: make exactly the tool calls it leads to, with the arguments it states. "
    "Call tools only; do not answer yet."
)
"""The human message after the intervened thought in a :class:`ContinuationDeriver`'s call."""


@dataclass(frozen=True, slots=True)
class StepContext:
    """What a deriver may read about the audited step."""

    query: str
    """The trace's query."""
    step: Step
    """The recorded step: its original thought and its recorded tool calls with their outputs."""
    messages: tuple[BaseMessage, ...]
    """The graph state's messages right before the step (earlier steps of a multi-step intervention already
    rewritten): the history the step's node read. A node that builds its own prompt may have read less."""
    tools: Mapping[str, Any]
    """The tools of the step's graph (its tool node's), by name: what a model deriver binds."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """The replay's run config (callbacks, metadata, tags): pass it to a model call, so that the call is counted
    in the replay's ``model_calls`` and marked as replay traffic (``ariadne.is_replay``) for tracers."""
    message: AIMessage | None = None
    """The step's recorded message: where its model put the thought (text, ``reasoning_content``, ``<think>``), so
    that a model deriver gives the intervened thought back in that format (:func:`~ariadne_lc._thoughts.prefill_of`)."""


@runtime_checkable
class ToolCallDeriver(Protocol):
    """Returns the tool calls an intervened thought leads to.

    ``derive`` returns a sequence of tool calls, each a mapping with ``name`` (str) and ``args`` (dict; ``id``
    is ignored, the replay gives new ones) or a :class:`~ariadne_lc.trace.ToolCall`. An empty sequence means the
    thought leads to no tool call: the step is written without any and the graph's own edges decide what runs
    next. A deriver may add ``async def aderive(thought, context)``; without it async audits call ``derive``.
    """

    name: str
    """How results name this deriver (:attr:`~ariadne_lc.records.AuditResult.tool_call_deriver`)."""

    def derive(self, thought: str, context: StepContext) -> Sequence[Mapping[str, Any] | ToolCall]: ...


DeriveFunction = Callable[[str, StepContext], Sequence[Mapping[str, Any] | ToolCall]]
"""A deriver written as a function: (intervened thought, the step's context) -> tool calls."""


class FunctionDeriver:
    """A :class:`ToolCallDeriver` made of a function ``(thought, context) -> calls``.

    Args:
        fn: The function (e.g. the graph's own code that turns a thought into its tool calls).
        name: How results name it (default ``function:<the function's name>``).

    Examples:
        >>> deriver = FunctionDeriver(lambda thought, ctx: [{"name": "search", "args": {"q": thought}}], name="q")
        >>> deriver.name
        'q'
    """

    def __init__(self, fn: DeriveFunction, *, name: str | None = None) -> None:
        if not callable(fn):
            raise ConfigurationError(f"a FunctionDeriver needs a function, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or f"function:{getattr(fn, '__name__', type(fn).__name__)}"

    def derive(self, thought: str, context: StepContext) -> Sequence[Mapping[str, Any] | ToolCall]:
        return self.fn(thought, context)


class ContinuationDeriver:
    """Asks a chat model, bound to the graph's tools, for the tool calls the intervened thought leads to.

    The call is: ``system`` (when given), the history before the step (:attr:`StepContext.messages`), the
    intervened thought as an AI message (in the step's own format: inside ``<think>`` tags, in
    ``reasoning_content``), and ``instruction`` as a human message (none with ``instruction=None``: the thought is
    then the last message, continued by providers that prefill a trailing assistant turn). The reply's
    ``tool_calls`` are the derived calls; a reply without any derives none.

    Args:
        model: Any LangChain chat model with ``bind_tools`` (the agent's own, so the calls are the ones it
            would make).
        instruction: The human message asking for the calls (default :data:`CONTINUATION_INSTRUCTION`).
        system: A system prompt to put first (the agent's own, e.g. ``create_agent(system_prompt=...)``, which
            is not in the graph state).
        name: How results name this deriver (default ``continuation:<the model's name>``).
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        instruction: str | None = CONTINUATION_INSTRUCTION,
        system: str | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise ConfigurationError(f"a ContinuationDeriver needs a LangChain chat model, got {type(model).__name__}")
        self.model = model
        self.instruction = instruction
        self.system = system
        label = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        self.name = name or f"continuation:{label}"

    def derive(self, thought: str, context: StepContext) -> list[dict[str, Any]]:
        return run_sync(self._derive(thought, context))

    async def aderive(self, thought: str, context: StepContext) -> list[dict[str, Any]]:
        """Async twin of :meth:`derive`."""
        return await run_async(self._derive(thought, context))

    def _derive(self, thought: str, context: StepContext) -> Flow[list[dict[str, Any]]]:
        messages: list[BaseMessage] = [SystemMessage(self.system)] if self.system else []
        said = AIMessage(content=thought) if context.message is None else prefill_of(context.message, thought)
        messages += [*context.messages, said]
        if self.instruction:
            messages.append(HumanMessage(self.instruction))
        bound: Any = self.model.bind_tools(list(context.tools.values())) if context.tools else self.model
        config: Any = dict(context.config)
        reply = yield Call(lambda: bound.invoke(messages, config), lambda: bound.ainvoke(messages, config))
        return [dict(c) for c in reply.tool_calls] if isinstance(reply, AIMessage) else []


class AgentModel(ContinuationDeriver):
    """The agent's own model and prompt, found in its graph node (a multi-agent system without ``AriadneMiddleware``):
    a continuation that must give the model the recorded input of the step plus the thought, and is checked for it
    (the replay invariant), since nothing but the graph's code vouches for the prompt it rebuilt."""

    checks_input = True


def as_deriver(value: ToolCallDeriver | DeriveFunction | BaseChatModel) -> ToolCallDeriver:
    """A deriver from what the user passed: a deriver as is, a chat model as a :class:`ContinuationDeriver`, a
    function as a :class:`FunctionDeriver`."""
    if isinstance(value, BaseChatModel):
        return ContinuationDeriver(value)
    if isinstance(value, ToolCallDeriver):
        return value
    if callable(value):
        return FunctionDeriver(value)
    raise ConfigurationError(
        "tool_call_deriver must be a ToolCallDeriver, a function (thought, context) -> tool calls, or a chat "
        f"model, got {type(value).__name__}"
    )


async def _aderive_with(deriver: ToolCallDeriver, thought: str, context: StepContext) -> Any:
    aderive = getattr(deriver, "aderive", None)
    if aderive is not None:
        return await aderive(thought, context)
    return deriver.derive(thought, context)


def _normalised(calls: Any, name: str) -> list[dict[str, Any]]:
    """The derived calls as LangChain tool calls with new ids; anything that is no tool call is refused."""
    if isinstance(calls, str | bytes | Mapping) or not isinstance(calls, Sequence):
        raise ToolCallDerivationError(f"the tool-call deriver {name!r} returned {type(calls).__name__}, not a list")
    out: list[dict[str, Any]] = []
    for call in calls:
        if isinstance(call, ToolCall):
            call = {"name": call.name, "args": call.args}
        if not isinstance(call, Mapping):
            raise ToolCallDerivationError(f"the tool-call deriver {name!r} returned a {type(call).__name__} call")
        tool, args = call.get("name"), call.get("args", {})
        if not isinstance(tool, str) or not tool or not isinstance(args, Mapping):
            raise ToolCallDerivationError(
                f"the tool-call deriver {name!r} returned {dict(call)!r}: a call needs a name and an args dict"
            )
        out.append({"name": tool, "args": dict(args), "id": f"ariadne-rederived-{uuid.uuid4().hex[:12]}"})
    return out


def derive(deriver: ToolCallDeriver, thought: str, context: StepContext) -> Flow[list[dict[str, Any]]]:
    """The calls ``deriver`` derives from ``thought``, checked and given new ids.

    Raises:
        ToolCallDerivationError: the deriver raised (the cause is chained) or returned no list of calls.
    """
    try:
        calls = yield Call(lambda: deriver.derive(thought, context), lambda: _aderive_with(deriver, thought, context))
    except AriadneError:
        raise
    except Exception as exc:
        raise ToolCallDerivationError(
            f"the tool-call deriver {deriver.name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    return _normalised(calls, deriver.name)


def with_tool_calls(message: AIMessage, calls: Sequence[Mapping[str, Any]]) -> AIMessage:
    """``message`` asking for ``calls`` instead of its own.

    Provider copies of the old calls (``additional_kwargs["tool_calls"]``, ``function_call``) and unparsed ones
    go too: a provider's message converter falls back to them when ``tool_calls`` is empty, and would send the
    recorded calls again.
    """
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in ("tool_calls", "function_call")}
    tool_calls = [{**call, "type": "tool_call"} for call in calls]
    return message.model_copy(
        update={"tool_calls": cast(Any, tool_calls), "invalid_tool_calls": [], "additional_kwargs": extra}
    )
