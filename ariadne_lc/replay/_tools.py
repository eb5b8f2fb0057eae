"""Answering the replayed agent's tool calls without running side-effecting tools.

A call identical to a recorded one (same tool, same arguments) gets the recorded output; a tool
declared safe runs live; anything else gets an explicit "unavailable during audit" message. After the
cut of an early-answering replay every call is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from ariadne_lc._twin import Flow
from ariadne_lc.errors import ReplayError
from ariadne_lc.replay import _ops
from ariadne_lc.replay._types import EARLY_ANSWER_TOOL_MESSAGE, UNAVAILABLE_TOOL_MESSAGE
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["Served", "find_tools", "serve"]


def _args_key(name: str, args: Any) -> str:
    return name + "\0" + json.dumps(args, sort_keys=True, default=str)


@dataclass(slots=True)
class Served:
    """What the replay did with tool calls so far."""

    trace: Trace
    outputs: dict[str, str] = field(default_factory=dict)
    """Outputs served instead of the recorded ones, by tool call id (an ``observation_swap``)."""
    recorded: int = 0
    live: int = 0
    unavailable: list[str] = field(default_factory=list)
    _outputs: dict[str, ToolCall] | None = None

    def recorded_call(self, call: dict[str, Any]) -> ToolCall | None:
        if self._outputs is None:
            self._outputs = {}
            for step in self.trace.steps:
                for recorded in step.tool_calls:
                    self._outputs.setdefault(_args_key(recorded.name, recorded.args), recorded)
        return self._outputs.get(_args_key(call["name"], call.get("args", {})))


def find_tools(graph: Any, name: str | None) -> tuple[str | None, dict[str, Any]]:
    """The tool node of ``graph`` (``name``, or the first ``ToolNode``) and its tools by name."""
    for node_name, node in getattr(graph, "nodes", {}).items():
        tools = getattr(getattr(node, "bound", None), "tools_by_name", None)
        if isinstance(tools, dict) and (name is None or node_name == name):
            return node_name, dict(tools)
    return name, {}


def _message(call: dict[str, Any], content: str, status: str = "error") -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status=status)


def serve(
    values: dict[str, Any], served: Served, tools: dict[str, Any], safe: frozenset[str], early: bool
) -> Flow[list[ToolMessage]]:
    """The tool messages answering the last AI message's calls in ``values``."""
    last = values.get("messages", [None])[-1]
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ReplayError("the graph is about to run its tool node, but the last message asks for no tool")
    out: list[ToolMessage] = []
    for tool_call in last.tool_calls:
        call: dict[str, Any] = dict(tool_call)
        if early:
            served.unavailable.append(call["name"])
            out.append(_message(call, EARLY_ANSWER_TOOL_MESSAGE.format(name=call["name"])))
            continue
        swapped = served.outputs.get(call.get("id") or "")
        recorded = served.recorded_call(call)
        if swapped is not None:
            served.recorded += 1
            out.append(_message(call, swapped, "success"))
        elif recorded is not None and recorded.output is not None:
            served.recorded += 1
            out.append(_message(call, recorded.output, "error" if recorded.status == "error" else "success"))
        elif call["name"] in safe and call["name"] in tools:
            served.live += 1
            result = yield _ops.run_tool(tools[call["name"]], call)
            if isinstance(result, Exception):
                out.append(_message(call, f"Error: {result}"))
            else:
                out.append(result if isinstance(result, ToolMessage) else _message(call, str(result), "success"))
        else:
            served.unavailable.append(call["name"])
            out.append(_message(call, UNAVAILABLE_TOOL_MESSAGE.format(name=call["name"])))
    return out
