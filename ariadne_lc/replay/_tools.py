"""Answering the replayed agent's tool calls without running side-effecting tools.

A call identical to a recorded one (same tool, same arguments) gets the recorded output; a tool
declared safe runs live; anything else gets an explicit "unavailable during audit" message. After the
cut of an early-answering replay every call is refused.

The calls are answered inside the replayed graph: its tool node's runnable is replaced by :func:`serving_node`, which
answers the calls it is given (the state's last AI message, or the calls ``create_agent`` sends it one by one) and
runs no tool but a safe one. The replay is then one run of the graph, as the agent's own was, instead of a stop
before each tool node and a state update after it (three state reads and writes of the whole conversation per model
turn). A level that can hand off to another agent keeps the stop (:mod:`ariadne_lc.replay._drive`): a replay ends
there instead of serving the hand-off.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from ariadne_lc._twin import Flow, run_async, run_sync
from ariadne_lc.errors import ReplayError
from ariadne_lc.replay import _ops
from ariadne_lc.replay._types import EARLY_ANSWER_TOOL_MESSAGE, UNAVAILABLE_TOOL_MESSAGE
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["Served", "find_tools", "serve", "serving_node"]


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
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(call id, tool name) of each call answered "unavailable" (in the replay's order: :meth:`unavailable_in`)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while calls are answered: ``create_agent`` runs a turn's calls as parallel tasks, on several threads."""
    _outputs: dict[str, ToolCall] | None = None

    def refuse(self, call: dict[str, Any]) -> None:
        self.refused.append((str(call.get("id")), call["name"]))

    def unavailable_in(self, messages: Sequence[BaseMessage]) -> tuple[str, ...]:
        """The tools refused, in the order the replay's messages call them (parallel tasks answer in any order)."""
        calls = [str(c.get("id")) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
        rank = {call_id: position for position, call_id in enumerate(calls)}
        return tuple(name for _, name in sorted(self.refused, key=lambda r: rank.get(r[0], len(rank))))

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
    return (yield from answer([dict(c) for c in last.tool_calls], served, tools, safe, early))


def answer(
    calls: Sequence[dict[str, Any]], served: Served, tools: dict[str, Any], safe: frozenset[str], early: bool
) -> Flow[list[ToolMessage]]:
    """The tool messages answering ``calls`` (see the module docstring)."""
    out: list[ToolMessage] = []
    for call in calls:
        if early:
            served.refuse(call)
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
            served.refuse(call)
            out.append(_message(call, UNAVAILABLE_TOOL_MESSAGE.format(name=call["name"])))
    return out


def _calls_of(given: Any) -> tuple[list[dict[str, Any]], bool]:
    """The calls a tool node is given, and whether it answers with a bare list of messages: the state (its last AI
    message's calls), ``create_agent``'s ``Send`` of a list of calls, a ``ToolCallWithContext``, or a list of
    messages (a ``MessageGraph``)."""
    if isinstance(given, dict) and given.get("__type") == "tool_call_with_context":
        return [dict(given["tool_call"])], False
    if isinstance(given, list) and given and isinstance(given[-1], dict) and given[-1].get("type") == "tool_call":
        return [dict(c) for c in given], False
    if isinstance(given, list):
        messages = given
    elif isinstance(given, dict):
        messages = given.get("messages") or [None]
    else:  # a state that is an object (a pydantic or dataclass state schema)
        messages = getattr(given, "messages", None) or [None]
    last = messages[-1]
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ReplayError("the graph ran its tool node, but the last message asks for no tool")
    return [dict(c) for c in last.tool_calls], isinstance(given, list)


def serving_node(name: str, served: Served, tools: dict[str, Any], safe: frozenset[str], early: bool) -> Any:
    """A runnable that stands for the tool node ``name`` in a replay: it answers the calls it is given as
    :func:`answer` does, and runs no tool but a safe one."""

    def flow(given: Any) -> Flow[Any]:
        calls, bare = _calls_of(given)
        messages = yield from answer(calls, served, tools, safe, early)
        return messages if bare else {"messages": messages}

    def now(given: Any) -> Any:
        with served.lock:
            return run_sync(flow(given))

    async def later(given: Any) -> Any:
        return await run_async(flow(given))  # one event loop: its tasks never answer at the same time

    return RunnableLambda(now, afunc=later, name=name)
