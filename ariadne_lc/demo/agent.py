"""A hand-built LangGraph ReAct agent that even SmolLM2-135M can drive, for demos and end-to-end tests.

The graph is the textbook one, ``StateGraph(MessagesState)`` with a ``model`` node and a ``tools`` node
(``ToolNode``)::

    START ─▶ model ─(last AIMessage has tool_calls)─▶ tools ─▶ model
                  └─(otherwise)─────────────────────▶ END

The model speaks the text protocol of :mod:`ariadne_lc.demo._react` instead of native tool calling (the small
model has no tool template). Each model turn still leaves a normal LangGraph trace: ONE ``AIMessage`` whose
``content`` is the thought in plain words and whose ``tool_calls`` carry the action, or, for the last turn, an
``AIMessage`` without tool calls whose content ends with ``Final Answer: <answer>``
(:func:`extract_final_answer` reads it back). The prompt is rebuilt from the message history on every turn, so a
thought edited in the state (same message id, tool calls kept) is what the model reads when the graph resumes.

The first turn of every question thinks and acts (:mod:`ariadne_lc.demo._react`): its grammar admits only a thought
and an action, and a reply that answers at once or thinks too briefly is asked for again, once, within the same
turn, so that every question leaves a reasoning step to audit. Replays resume after the audited step, so they never
re-run a first turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Checkpointer

from ariadne_lc._twin import Call, Flow, run_async, run_sync
from ariadne_lc.demo._react import (
    FINAL_ANSWER_PREFIX,
    ReactStep,
    build_react_prompt,
    extract_final_answer,
    first_turn_ok,
    parse_react_reply,
    react_grammar,
    tool_call_args,
)
from ariadne_lc.demo._tools import DEMO_TOOLS
from ariadne_lc.errors import ConfigurationError

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_STOP",
    "DEMO_QUESTIONS",
    "MODEL_NODE",
    "REACT_METADATA_KEY",
    "TOOLS_NODE",
    "ReactAgentGraph",
    "build_react_agent",
    "extract_final_answer",
]

MODEL_NODE = "model"
"""Name of the node that calls the chat model (the same name ``langchain.agents.create_agent`` uses)."""

TOOLS_NODE = "tools"
"""Name of the ``ToolNode``."""

DEFAULT_MAX_TURNS = 4
"""Tool-using model turns allowed per question; the next turn must answer. Bounds a looping small model.
The model must also answer right after it repeats an earlier action of the same question."""

DEFAULT_STOP: tuple[str, ...] = ("\nObservation:", "\nQuestion:")
"""Stop sequences: a small model that wrote an action tends to go on and invent the observation."""

REACT_METADATA_KEY = "react"
"""Key in ``AIMessage.response_metadata`` holding ``{"status": ..., "raw": ..., "first_turn_retried": ...}`` of the
parsed reply: status is ``action``, ``final``, ``unparsed`` (raw text became the answer) or ``forced`` (an action
when an answer was required, after the turn cap or a repeated action; its raw text became the answer);
``first_turn_retried`` says the question's first reply did not think and act and the model was asked again."""

DEMO_QUESTIONS: tuple[str, ...] = (
    "A baker packs 6 boxes with 7 muffins each. How many muffins does the baker pack?",
    "At what temperature in degrees Celsius does water boil at sea level?",
    "How many legs do 3 spiders have in total?",
    "What is the capital of France?",
)
"""Hand-written questions whose tools (calculator, lookup fact table) can answer them."""

ReactAgentGraph: TypeAlias = CompiledStateGraph[MessagesState, None, MessagesState, MessagesState]
"""The compiled demo graph."""


class _ModelNode:
    """The ``model`` node: history → ReAct prompt → chat model → one ``AIMessage``."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
        *,
        max_turns: int,
        stop: Sequence[str],
        constrained: bool,
        system_prompt: str | None,
    ) -> None:
        self._model = model
        self._tools = {t.name: t for t in tools}
        self._tool_names = list(self._tools)
        self._max_turns = max_turns
        self._stop = list(stop) or None
        self._constrained = constrained
        self._system_prompt = system_prompt

    def _must_answer(self, messages: Sequence[BaseMessage]) -> bool:
        """Whether this turn must answer: the turn cap is reached, or the last action repeats an earlier one.

        A repeated action would get the same observation again: small models loop on it until the cap.
        Decided from the history alone, so a replay from a checkpoint decides the same way.
        """
        turns: list[AIMessage] = []
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                break
            if isinstance(message, AIMessage):
                turns.append(message)
        if len(turns) >= self._max_turns:
            return True
        calls = [[(c["name"], sorted(c["args"].items())) for c in t.tool_calls] for t in turns]
        return bool(calls) and bool(calls[0]) and calls[0] in calls[1:]

    @staticmethod
    def _first_turn(messages: Sequence[BaseMessage]) -> bool:
        """Whether no model turn has answered the latest question yet (decided from the history alone)."""
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                return True
            if isinstance(message, AIMessage):
                return False
        return True

    def _request(
        self, messages: Sequence[BaseMessage], *, retry: bool = False
    ) -> tuple[list[BaseMessage], dict[str, Any], bool, bool]:
        """The prompt, the call's keywords, whether this turn must answer, and whether it must think and act."""
        force_final = self._must_answer(messages)
        first = not force_final and self._first_turn(messages)
        prompt = build_react_prompt(
            messages,
            list(self._tools.values()),
            force_final=force_final,
            system_prompt=self._system_prompt,
            first_turn_retry=first and retry,
        )
        kwargs: dict[str, Any] = {}
        if self._stop:
            kwargs["stop"] = self._stop
        if self._constrained:
            # llama.cpp server extension; other OpenAI-compatible servers reject or ignore it.
            grammar = react_grammar(self._tool_names, final_only=force_final, first_turn=first)
            kwargs["extra_body"] = {"grammar": grammar}
        return prompt, kwargs, force_final, first

    def _turn(self, messages: Sequence[BaseMessage], config: RunnableConfig) -> Flow[AIMessage]:
        """One model turn; a question's first reply that does not think and act is asked for again, once."""
        prompt, kwargs, force_final, first = self._request(messages)
        reply: BaseMessage = yield self._call(prompt, config, kwargs)
        retried = False
        if first and not first_turn_ok(parse_react_reply(reply.text, self._tool_names)):
            prompt, kwargs, _, _ = self._request(messages, retry=True)
            again: BaseMessage = yield self._call(prompt, config, kwargs)
            retried = True
            # keep the first reply unless the second one complies: nothing is invented, only asked again
            if first_turn_ok(parse_react_reply(again.text, self._tool_names)):
                reply = again
        return self._to_message(reply, force_final, retried=retried)

    def _call(self, prompt: list[BaseMessage], config: RunnableConfig, kwargs: dict[str, Any]) -> Call[BaseMessage]:
        model = self._model
        return Call(lambda: model.invoke(prompt, config, **kwargs), lambda: model.ainvoke(prompt, config, **kwargs))

    def _to_message(self, reply: BaseMessage, force_final: bool, *, retried: bool = False) -> AIMessage:
        step = parse_react_reply(reply.text, self._tool_names)
        status: str = step.kind
        tool_calls: list[ToolCall] = []
        if step.kind == "action" and not force_final:
            assert step.tool is not None and step.tool_input is not None
            args = tool_call_args(self._tools[step.tool], step.tool_input)
            tool_calls.append(ToolCall(name=step.tool, args=args, id=f"call_{uuid.uuid4().hex[:16]}"))
            content = step.thought
        else:
            if step.kind == "action":
                status = "forced"
            content = _final_content(step)
        metadata = dict(reply.response_metadata)
        metadata[REACT_METADATA_KEY] = {"status": status, "raw": step.raw, "first_turn_retried": retried}
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        return AIMessage(
            content=content,
            tool_calls=tool_calls,
            id=f"react-{uuid.uuid4()}",
            response_metadata=metadata,
            usage_metadata=usage,
        )

    def invoke(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[AIMessage]]:
        return {"messages": [run_sync(self._turn(state["messages"], config))]}

    async def ainvoke(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[AIMessage]]:
        return {"messages": [await run_async(self._turn(state["messages"], config))]}


def _final_content(step: ReactStep) -> str:
    """Content of a final ``AIMessage``: the thought, then ``Final Answer: ...`` on the last line.

    A reply that is not a proper final answer (unparsed, or an action after the turn cap) keeps its raw text
    as the answer, so nothing the model said is lost and nothing is invented.
    """
    if step.kind == "final" and step.thought:
        return f"{step.thought}\n{FINAL_ANSWER_PREFIX} {step.answer}"
    if step.kind == "final":
        return f"{FINAL_ANSWER_PREFIX} {step.answer}"
    return f"{FINAL_ANSWER_PREFIX} {' '.join(step.raw.split())}"


def build_react_agent(
    model: BaseChatModel,
    *,
    checkpointer: Checkpointer,
    tools: Sequence[BaseTool] | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    stop: Sequence[str] = DEFAULT_STOP,
    constrained: bool = False,
    system_prompt: str | None = None,
) -> ReactAgentGraph:
    """Build and compile the demo ReAct agent around any chat model.

    Args:
        model: any chat model; it is called with plain text turns, so it needs no tool-calling support.
        checkpointer: the saver the graph is compiled with (required: audits replay from its checkpoints).
        tools: tools taking one string argument (others take a JSON object); default ``calculator``, ``lookup``.
        max_turns: tool-using turns per question before the model must answer.
        stop: stop sequences passed to the model (empty to pass none).
        constrained: send a GBNF grammar as ``extra_body={"grammar": ...}`` so every reply parses; only the
            llama.cpp server understands it, so use it with :class:`ariadne_lc.local.LocalModelServer`.
        system_prompt: replaces the default instructions.

    Returns:
        The compiled graph; invoke it with ``{"messages": [("user", question)]}`` and a ``thread_id``.

    Raises:
        ConfigurationError: ``max_turns`` is below 1, no tools are given, or two tools share a name.

    Examples:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from ariadne_lc.local import LocalModelServer
        >>> with LocalModelServer() as server:  # doctest: +SKIP
        ...     agent = build_react_agent(server.chat_model(), checkpointer=InMemorySaver(), constrained=True)
        ...     out = agent.invoke({"messages": [("user", DEMO_QUESTIONS[0])]}, {"configurable": {"thread_id": "1"}})
        ...     print(extract_final_answer(out["messages"][-1]))
    """
    if max_turns < 1:
        raise ConfigurationError(f"max_turns must be at least 1, got {max_turns}")
    tool_list = list(DEMO_TOOLS if tools is None else tools)
    if not tool_list:
        raise ConfigurationError("the ReAct agent needs at least one tool")
    names = [t.name for t in tool_list]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"tool names must be unique, got {names}")
    node = _ModelNode(
        model, tool_list, max_turns=max_turns, stop=stop, constrained=constrained, system_prompt=system_prompt
    )
    graph = StateGraph(MessagesState)
    graph.add_node(MODEL_NODE, RunnableLambda(node.invoke, afunc=node.ainvoke, name=MODEL_NODE))
    graph.add_node(TOOLS_NODE, ToolNode(tool_list, name=TOOLS_NODE))
    graph.add_edge(START, MODEL_NODE)
    graph.add_conditional_edges(MODEL_NODE, tools_condition, {"tools": TOOLS_NODE, END: END})
    graph.add_edge(TOOLS_NODE, MODEL_NODE)
    return graph.compile(checkpointer=checkpointer)
