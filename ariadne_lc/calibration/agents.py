"""Ground-truth agents: real LangGraph graphs whose dependence on the audited thought is known by construction.

One graph serves the three constructed kinds; only its router differs::

    START ─▶ think ─(route)─▶ read ───▶ END        coupled path: the answer is a function of the thought
                     └──────▶ answer ─▶ END        bypass path: the answering call never sees the thought

- ``think`` (a model call): the model writes a one-line thought that commits to an answer
  (``... The answer is 6 * 7.``); this AI message is the audited step (step 0).
- ``read`` (deterministic, no model): reads the commitment of the thought *as it stands in the state* and
  answers with it, the calculation evaluated by the demo's ``calculator`` tool
  (:func:`~ariadne_lc.calibration.decisive.answer_from_thought`). Edit the thought and this answer moves exactly
  as far as its decisive content moved: truth **faithful**.
- ``answer`` (a model call): the graph removes every AI message from the input and asks the model for the bare
  answer from the question alone. Nothing written in the thought can reach it: truth **unfaithful**.
- The router sends a query down ``answer`` when a hash of its text falls below ``p``
  (:func:`routes_to_bypass`): ``coupled`` is p = 0, ``bypass`` is p = 1, ``mixture(p)`` anything between. The
  route depends on the query alone, so the recording and every replay of a query take the same path, and its
  truth is known exactly (:func:`truth_of`).

Two more faithful agents measure what the regex reader of ``read`` cannot:

- ``coupled_llm``: ``think ─▶ read_llm ─▶ END``. The answering node is a model call that sees *only* the thought
  (not the question) and says the final answer it leads to (:func:`~ariadne_lc.calibration.prompts.reader_prompt`).
  Its answer can depend on nothing but the thought: truth **faithful**, and "decisive" is the model's reading,
  not the rule extractor's.
- ``coupled_tool``: ``think ─▶ tools ─▶ final ─▶ END``. The thought's message also carries a tool call taken
  from the thought (``commit(answer=<its calculation or letter>)``, the step's own tool call), the real
  ``ToolNode`` runs it, and ``final`` answers with the tool's output. The decision in the thought reaches the
  answer only through the tool result: truth **faithful**, yet a replay that keeps the step's recorded tool calls
  cannot move the answer (docs/method.md#the-steps-own-tool-calls). :func:`coupled_tool_deriver` is that graph
  code as a tool-call deriver, for audits that re-derive the call from the intervened thought
  (``Auditor(tool_calls="rederive", tool_call_deriver=coupled_tool_deriver())``).

The *natural* agent is the demo ReAct agent, unchanged (:func:`build_natural_agent`); its truth is unknown.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Checkpointer

from ariadne_lc.calibration.decisive import (
    NO_COMMITMENT,
    QuestionKind,
    answer_from_thought,
    decisive_content,
    question_kind,
)
from ariadne_lc.calibration.prompts import (
    answer_grammar,
    answer_prompt,
    parse_answer,
    parse_thought,
    reader_prompt,
    thought_grammar,
    thought_prompt,
)
from ariadne_lc.calibration.records import Truth
from ariadne_lc.demo import FINAL_ANSWER_PREFIX, ReactAgentGraph, build_react_agent
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.replay import FunctionDeriver, StepContext

__all__ = [
    "ANSWER_MAX_TOKENS",
    "ANSWER_NODE",
    "AUDITED_STEP",
    "COMMIT_TOOL",
    "FAITHFUL_KINDS",
    "READ_LLM_NODE",
    "READ_NODE",
    "THINK_NODE",
    "THOUGHT_MAX_TOKENS",
    "GroundTruthKind",
    "build_ground_truth_agent",
    "build_natural_agent",
    "coupled_tool_deriver",
    "routes_to_bypass",
    "routing_p",
    "truth_of",
]

THINK_NODE = "think"
"""The node whose model-written thought is audited."""
READ_NODE = "read"
"""The coupled path's deterministic answering node."""
ANSWER_NODE = "answer"
"""The bypass path's answering model call, which never sees the thought."""
READ_LLM_NODE = "read_llm"
"""The ``coupled_llm`` agent's answering model call, which sees only the thought."""
COMMIT_TOOL = "commit"
"""The ``coupled_tool`` agent's tool: the thought's commitment in, the answer (a calculation evaluated) out."""
AUDITED_STEP = 0
"""The step index of the thought in every trace of a ground-truth agent."""

GroundTruthKind = Literal["coupled", "bypass", "mixture", "coupled_llm", "coupled_tool"]

FAITHFUL_KINDS: tuple[str, ...] = ("coupled", "coupled_llm", "coupled_tool")
"""The agent kinds whose every answer depends on the thought (truth faithful on every query)."""

_THOUGHT_STOP = ("\n",)
THOUGHT_MAX_TOKENS = 64
"""A one-line thought (the grammar allows 160 characters) and its commitment fit; a rambling model is cut."""
ANSWER_MAX_TOKENS = 12
"""``Final Answer: <number or letter>``."""


def routing_p(kind: GroundTruthKind, p: float | None = None) -> float:
    """The bypass rate of an agent kind: 0 for ``coupled``, 1 for ``bypass``, ``p`` for ``mixture``.

    Raises:
        ConfigurationError: a mixture without ``p`` in [0, 1], or ``p`` given for another kind.
    """
    if kind == "mixture":
        if p is None or not 0.0 <= p <= 1.0:
            raise ConfigurationError(f"a mixture agent needs p in [0, 1], got {p!r}")
        return p
    if kind not in ("bypass", *FAITHFUL_KINDS):
        raise ConfigurationError(
            f"unknown ground-truth agent {kind!r}; use coupled, coupled_llm, coupled_tool, bypass or mixture"
        )
    if p is not None:
        raise ConfigurationError(f"p is only for mixture agents, not {kind}")
    return 1.0 if kind == "bypass" else 0.0


def _unit_hash(query: str) -> float:
    digest = hashlib.sha256(query.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def routes_to_bypass(query: str, p: float) -> bool:
    """Whether a query takes the bypass path at rate ``p``: a SHA-256 of its text, read as a number in [0, 1).

    Deterministic across processes and machines; over many queries the fraction routed is ``p``. The sets are
    nested: a query routed at p is routed at every larger p.
    """
    return _unit_hash(query) < p


def truth_of(query: str, p: float) -> Truth:
    """The truth of an audit of this query on a ground-truth agent with bypass rate ``p``."""
    return "unfaithful" if routes_to_bypass(query, p) else "faithful"


def _question(messages: Sequence[BaseMessage]) -> str:
    return next((m.text for m in messages if isinstance(m, HumanMessage)), "")


def _thought(messages: Sequence[BaseMessage]) -> str:
    return next((m.text for m in reversed(messages) if isinstance(m, AIMessage)), "")


class _Nodes:
    """The three nodes and the router, sharing the model and its call settings."""

    def __init__(self, model: BaseChatModel, *, p: float, constrained: bool) -> None:
        self._model = model
        self._p = p
        self._constrained = constrained

    def _kwargs(self, grammar: str, stop: Sequence[str], max_tokens: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"stop": list(stop), "max_tokens": max_tokens}
        if self._constrained:  # llama.cpp server extension
            kwargs["extra_body"] = {"grammar": grammar}
        return kwargs

    def _think_request(self, state: MessagesState) -> tuple[list[BaseMessage], dict[str, Any]]:
        question = _question(state["messages"])
        grammar = thought_grammar(question, question_kind(question))
        return thought_prompt(question), self._kwargs(grammar, _THOUGHT_STOP, THOUGHT_MAX_TOKENS)

    @staticmethod
    def _thought_message(reply: BaseMessage) -> dict[str, list[BaseMessage]]:
        thought = parse_thought(reply.text)
        metadata = {**reply.response_metadata, "raw": reply.text}
        return {"messages": [AIMessage(content=thought, id=f"think-{uuid.uuid4()}", response_metadata=metadata)]}

    def think(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._think_request(state)
        return self._thought_message(self._model.invoke(prompt, config, **kwargs))

    async def athink(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._think_request(state)
        return self._thought_message(await self._model.ainvoke(prompt, config, **kwargs))

    @staticmethod
    def read(state: MessagesState) -> dict[str, list[BaseMessage]]:
        messages = state["messages"]
        answer = answer_from_thought(_thought(messages), question_kind(_question(messages)))
        return {"messages": [AIMessage(content=f"{FINAL_ANSWER_PREFIX} {answer}", id=f"read-{uuid.uuid4()}")]}

    def _answer_request(self, state: MessagesState) -> tuple[list[BaseMessage], dict[str, Any]]:
        # The bypass: only the question goes in. Every AI message (the thought) is dropped from the input.
        question = _question([m for m in state["messages"] if isinstance(m, HumanMessage)])
        grammar = answer_grammar(question, question_kind(question))
        return answer_prompt(question), self._kwargs(grammar, ("\n",), ANSWER_MAX_TOKENS)

    @staticmethod
    def _answer_message(reply: BaseMessage) -> dict[str, list[BaseMessage]]:
        content = f"{FINAL_ANSWER_PREFIX} {parse_answer(reply.text)}"
        metadata = {**reply.response_metadata, "raw": reply.text}
        return {"messages": [AIMessage(content=content, id=f"answer-{uuid.uuid4()}", response_metadata=metadata)]}

    def answer(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._answer_request(state)
        return self._answer_message(self._model.invoke(prompt, config, **kwargs))

    async def aanswer(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._answer_request(state)
        return self._answer_message(await self._model.ainvoke(prompt, config, **kwargs))

    def route(self, state: MessagesState) -> str:
        return ANSWER_NODE if routes_to_bypass(_question(state["messages"]), self._p) else READ_NODE

    # -- coupled_llm: a model reads the thought alone -------------------------------------------------

    def _read_llm_request(self, state: MessagesState) -> tuple[list[BaseMessage], dict[str, Any]]:
        messages = state["messages"]
        question = _question(messages)
        grammar = answer_grammar(question, question_kind(question))
        return reader_prompt(_thought(messages)), self._kwargs(grammar, ("\n",), ANSWER_MAX_TOKENS)

    def read_llm(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._read_llm_request(state)
        return self._answer_message(self._model.invoke(prompt, config, **kwargs))

    async def aread_llm(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        prompt, kwargs = self._read_llm_request(state)
        return self._answer_message(await self._model.ainvoke(prompt, config, **kwargs))

    # -- coupled_tool: the thought's own tool call carries its decision ---------------------------------

    @staticmethod
    def _with_commit_call(update: dict[str, list[BaseMessage]], question: str) -> dict[str, list[BaseMessage]]:
        message = update["messages"][0]
        assert isinstance(message, AIMessage)
        calls = _commit_calls(message.text, question)
        if not calls:
            return update
        call = {**calls[0], "id": f"commit-{uuid.uuid4().hex[:12]}"}
        return {"messages": [message.model_copy(update={"tool_calls": [call]})]}

    def think_tool(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return self._with_commit_call(self.think(state, config), _question(state["messages"]))

    async def athink_tool(self, state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return self._with_commit_call(await self.athink(state, config), _question(state["messages"]))

    @staticmethod
    def final(state: MessagesState) -> dict[str, list[BaseMessage]]:
        output = next((m.text for m in reversed(state["messages"]) if isinstance(m, ToolMessage)), NO_COMMITMENT)
        return {"messages": [AIMessage(content=f"{FINAL_ANSWER_PREFIX} {output}", id=f"final-{uuid.uuid4()}")]}

    @staticmethod
    def route_tool(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else FINAL_NODE


FINAL_NODE = "final"


def _commit_calls(thought: str, question: str) -> list[dict[str, Any]]:
    """The ``coupled_tool`` agent's own tool call for a thought: ``commit`` with what it commits to, if anything."""
    content = decisive_content(thought, question_kind(question))
    return [] if content is None else [{"name": COMMIT_TOOL, "args": {"answer": content}}]


def coupled_tool_deriver() -> FunctionDeriver:
    """The ``coupled_tool`` agent's derivation of its tool call from its thought, as a tool-call deriver.

    The agent's ``think`` node attaches ``commit(answer=<what the thought commits to>)`` to the thought by graph
    code; this is the same code, applied to an intervened thought (the question is read from the history). No
    commitment, no call: the graph then goes straight to ``final``.
    """

    def derive(thought: str, context: StepContext) -> list[dict[str, Any]]:
        return _commit_calls(thought, _question(context.messages) or context.query)

    return FunctionDeriver(derive, name=f"function:{COMMIT_TOOL}")


def _commit_tool() -> Any:
    @tool(COMMIT_TOOL)
    def commit(answer: str) -> str:
        """Commit to an answer: a calculation (evaluated) or an option letter."""
        kind: QuestionKind = "choice" if len(answer.strip()) == 1 and answer.strip().isalpha() else "number"
        return answer_from_thought(f"The answer is {answer}.", kind)

    return commit


def build_ground_truth_agent(
    model: BaseChatModel,
    kind: GroundTruthKind,
    *,
    checkpointer: Checkpointer,
    p: float | None = None,
    constrained: bool = False,
) -> Any:
    """Build and compile a coupled, bypass or mixture(p) agent around any chat model.

    Args:
        model: any chat model (for a base model, a :class:`~ariadne_lc.local.CompletionChatModel`).
        kind: ``coupled`` (truth faithful), ``bypass`` (truth unfaithful), ``mixture`` (a fraction ``p`` of the
            queries, chosen by a hash of the query, takes the bypass path), ``coupled_llm`` or ``coupled_tool``
            (truth faithful; see the module docstring).
        checkpointer: the saver the graph is compiled with (audits replay from its checkpoints).
        p: the mixture's bypass rate; only for ``mixture``.
        constrained: send GBNF grammars as ``extra_body={"grammar": ...}`` (llama.cpp server only). Off by
            default: measured on the 2-core machine, llama-cpp-python 0.3 took 10-14 s per grammar-constrained thought
            against 1-4 s free, and the lenient parsers read the free replies.

    Returns:
        The compiled graph; invoke it with ``{"messages": [("user", question)]}`` and a ``thread_id``. Its
        traces have the thought at step :data:`AUDITED_STEP`.

    Raises:
        ConfigurationError: an unknown kind, or ``p`` missing or out of range for a mixture.

    Examples:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from ariadne_lc.local import LocalModelServer
        >>> with LocalModelServer() as server:  # doctest: +SKIP
        ...     agent = build_ground_truth_agent(server.chat_model(), "coupled", checkpointer=InMemorySaver())
    """
    rate = routing_p(kind, p)
    nodes = _Nodes(model, p=rate, constrained=constrained)
    if kind in ("coupled_llm", "coupled_tool"):
        return _build_extra(nodes, kind, checkpointer)
    graph = StateGraph(MessagesState)
    graph.add_node(THINK_NODE, RunnableLambda(nodes.think, afunc=nodes.athink, name=THINK_NODE))
    graph.add_node(READ_NODE, RunnableLambda(nodes.read, name=READ_NODE))
    graph.add_node(ANSWER_NODE, RunnableLambda(nodes.answer, afunc=nodes.aanswer, name=ANSWER_NODE))
    graph.add_edge(START, THINK_NODE)
    graph.add_conditional_edges(THINK_NODE, nodes.route, {READ_NODE: READ_NODE, ANSWER_NODE: ANSWER_NODE})
    graph.add_edge(READ_NODE, END)
    graph.add_edge(ANSWER_NODE, END)
    name = f"calibration-{kind}" if kind != "mixture" else f"calibration-mixture-{rate:g}"
    return graph.compile(checkpointer=checkpointer, name=name)


def _build_extra(nodes: _Nodes, kind: str, checkpointer: Checkpointer) -> Any:
    graph = StateGraph(MessagesState)
    if kind == "coupled_llm":
        graph.add_node(THINK_NODE, RunnableLambda(nodes.think, afunc=nodes.athink, name=THINK_NODE))
        graph.add_node(READ_LLM_NODE, RunnableLambda(nodes.read_llm, afunc=nodes.aread_llm, name=READ_LLM_NODE))
        graph.add_edge(START, THINK_NODE)
        graph.add_edge(THINK_NODE, READ_LLM_NODE)
        graph.add_edge(READ_LLM_NODE, END)
    else:
        graph.add_node(THINK_NODE, RunnableLambda(nodes.think_tool, afunc=nodes.athink_tool, name=THINK_NODE))
        graph.add_node("tools", ToolNode([_commit_tool()]))
        graph.add_node(FINAL_NODE, RunnableLambda(nodes.final, name=FINAL_NODE))
        graph.add_edge(START, THINK_NODE)
        graph.add_conditional_edges(THINK_NODE, nodes.route_tool, {"tools": "tools", FINAL_NODE: FINAL_NODE})
        graph.add_edge("tools", FINAL_NODE)
        graph.add_edge(FINAL_NODE, END)
    return graph.compile(checkpointer=checkpointer, name=f"calibration-{kind}")


def build_natural_agent(
    model: BaseChatModel, *, checkpointer: Checkpointer, constrained: bool = False
) -> ReactAgentGraph:
    """The demo ReAct agent, unchanged (its truth is unknown): reported beside the constructed agents."""
    return build_react_agent(model, checkpointer=checkpointer, constrained=constrained)
