"""Agent runs as OpenTelemetry GenAI spans, for a recorder given a tracer provider.

The OpenTelemetry GenAI conventions (``semantic-conventions-genai``, agent and tool spans) describe a multi-agent
system as a tree: an ``invoke_agent {agent}`` span per agent run (``gen_ai.operation.name = invoke_agent``,
``gen_ai.agent.name``, ``gen_ai.conversation.id`` the LangGraph thread), an ``execute_tool {tool}`` span per tool call
under it (``gen_ai.tool.name``, ``gen_ai.tool.call.id``), and an agent called as a tool (LangChain's sub-agent
pattern, a deep agent's ``task``) an ``invoke_agent`` span under that tool's span. A hand-off between agents
(``transfer_to_<agent>``) is a tool call whose span says the agent handed to.

The recorder's own spans are the ones audits evaluate (each trace's :attr:`~ariadne_lc.trace.Trace.span`), so each
agent's evaluation events and written-back scores land on that agent's own run. A run that turns out not to be an
agent (a plain chain a tool ran) never ends its span, so nothing is exported for it. Every call here is guarded by
the recorder: a tracer that raises never reaches the agent.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from ariadne_lc import semconv as sc
from ariadne_lc._version import __version__
from ariadne_lc.trace import SpanRef

__all__ = ["AgentSpans", "span_ref"]

_HANDOFF = "transfer_to_"


def span_ref(span: Span) -> SpanRef | None:
    """The :class:`~ariadne_lc.trace.SpanRef` of ``span`` (``None`` for a span that records nothing)."""
    context = span.get_span_context()
    if not context.is_valid:
        return None
    return SpanRef(
        trace_id=trace.format_trace_id(context.trace_id),
        span_id=trace.format_span_id(context.span_id),
        trace_flags=int(context.trace_flags),
    )


class AgentSpans:
    """Starts and ends the recorder's GenAI spans on ``provider``'s tracer."""

    def __init__(self, provider: TracerProvider) -> None:
        self._tracer = provider.get_tracer("ariadne_lc.recorder", __version__)

    def agent(self, name: str | None, thread_id: str | None, parent: Span | None) -> Span:
        """An ``invoke_agent`` span, the child of ``parent`` (the tool call that started a sub-agent) or of the
        current context (a root run)."""
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: "invoke_agent"}
        if name:
            attributes[sc.GEN_AI_AGENT_NAME] = name
        if thread_id:
            attributes[sc.GEN_AI_CONVERSATION_ID] = thread_id
        context = trace.set_span_in_context(parent) if parent is not None else otel_context.get_current()
        label = f"invoke_agent {name}" if name else "invoke_agent"
        return self._tracer.start_span(label, context=context, kind=SpanKind.INTERNAL, attributes=attributes)

    def tool(self, agent: Span, name: str, call_id: str | None) -> Span:
        """An ``execute_tool`` span under ``agent``'s; a hand-off says the agent it hands to."""
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: "execute_tool", sc.GEN_AI_TOOL_NAME: name}
        if call_id:
            attributes[sc.GEN_AI_TOOL_CALL_ID] = call_id
        if name.startswith(_HANDOFF):
            attributes[sc.ARIADNE_HANDOFF_TO] = name.removeprefix(_HANDOFF)
        context = trace.set_span_in_context(agent)
        return self._tracer.start_span(f"execute_tool {name}", context=context, kind=SpanKind.INTERNAL,
                                       attributes=attributes)  # fmt: skip

    @staticmethod
    def end(span: Span | None, error: BaseException | None = None) -> None:
        if span is None:
            return
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.set_attribute(sc.ERROR_TYPE, type(error).__name__)
        span.end()
