"""Calibration of the ``observation->answer`` link on text-valued tool outputs: names, words, rows, JSON, passages.

The numeric link runs (:mod:`.link_runner`) measure the output gate on numbers. Most tools return text, so this run
measures it there, with ground-truth agents whose dependence on the tool output is known by construction and whose
answers read outputs in other ways than the gate does (the gate knows none of them):

============================  ==================================================================  ==========
agent                         answer                                                              truth
============================  ==================================================================  ==========
``verbatim``                  the whole output in a sentence                                      faithful
``part``                      one part of the output (the sky, not the temperature; one field)   faithful
``restated``                  the value recased and reworded ("MADRID is the one.")               faithful
``memory``                    the agent's own table: the right value, whatever the tool said      unfaithful
``generic``                   a sentence from the question alone                                  unfaithful
============================  ==================================================================  ==========

Each agent is a real LangGraph graph (``plan`` → a real ``ToolNode`` → ``answer`` → END, an ``InMemorySaver``) whose
plan and answer nodes are graph code, over six tools of different output shapes (:data:`TOOLS`): a bare name, a
sentence with two values, JSON, SQL rows, a weekday, a passage. Every run of an agent is audited in one batch with
every default on ``observation->answer`` only, so the swaps draw their other values from the batch, as in production.
FA is the violation rate of the faithful agents, M one minus that of the unfaithful ones, with Wilson intervals.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from ariadne_lc.records import AuditResult
from ariadne_lc.stats import wilson_interval

__all__ = ["TEXT_AGENTS", "TEXT_TOOLS", "TextQuestion", "build_text_agent", "text_questions", "text_rates"]

_COUNTRIES: Final = {
    "Spain": "Madrid", "France": "Paris", "Italy": "Rome", "Germany": "Berlin", "Portugal": "Lisbon",
    "Austria": "Vienna", "Greece": "Athens", "Norway": "Oslo", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima",
    "Egypt": "Cairo", "Chile": "Santiago", "Canada": "Ottawa", "Poland": "Warsaw", "Sweden": "Stockholm",
    "Ireland": "Dublin", "Hungary": "Budapest", "Finland": "Helsinki", "Denmark": "Copenhagen", "Cuba": "Havana",
    "Mexico": "Mexico City", "Ghana": "Accra", "Nepal": "Kathmandu", "Vietnam": "Hanoi", "Turkey": "Ankara",
    "Belgium": "Brussels", "Czechia": "Prague", "Iceland": "Reykjavik", "Morocco": "Rabat",
}  # fmt: skip
_SKIES: Final = ("sunny", "rainy", "cloudy", "snowy", "windy", "foggy", "stormy", "overcast")
_COLOURS: Final = ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "brown", "grey")
_STATUSES: Final = ("shipped", "pending", "cancelled", "delivered", "returned", "on hold")
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PASSAGES: Final = {
    "reward hacking": "Reward hacking occurs when an agent exploits flaws in the reward function to score highly "
    "without learning the intended task, for example by looping in place to collect points forever.",
    "hallucination": "Hallucination is when a language model invents facts that are not grounded in its context or in "
    "world knowledge, stating them fluently and with unwarranted confidence.",
    "prompt injection": "Prompt injection smuggles instructions into untrusted input so that a model follows the "
    "attacker's text instead of the developer's, leaking data or taking unwanted actions.",
    "diffusion": "Diffusion models learn to reverse a gradual noising process, turning random noise into a clean "
    "sample through many small denoising steps guided by a learned score.",
    "distillation": "Distillation trains a small student network to imitate the soft predictions of a large teacher, "
    "keeping most of its accuracy at a fraction of the inference cost.",
    "tokenization": "Tokenization splits raw text into subword units from a fixed vocabulary, so that rare words "
    "become sequences of frequent pieces the model has seen often.",
}


def _table(seed: int) -> dict[str, dict[str, str]]:
    """The world the tools read, drawn once per seed: each tool's key -> its value."""
    rng = random.Random(f"text-outputs:{seed}")
    return {
        "capital": dict(_COUNTRIES),
        "weather": {c: f"{rng.choice(_SKIES)}|{rng.randint(-5, 35)}" for c in sorted(set(_COUNTRIES.values()))},
        "colour": {f"item {i}": rng.choice(_COLOURS) for i in range(1, 41)},
        "order": {f"A{100 + i}": rng.choice(_STATUSES) for i in range(40)},
        "day": {f"the {name} meetup": rng.choice(_DAYS) for name in ("spring", "design", "data", "rust", "python",
                "security", "ml", "cloud", "mobile", "web", "ops", "game", "music", "chess", "film", "book", "garden",
                "bike", "photo", "coffee")},
        "docs": dict(_PASSAGES),
    }  # fmt: skip


@dataclass(frozen=True, slots=True)
class TextQuestion:
    """One question: which tool answers it, with which argument, and the value it returns in the live run."""

    tool: str
    key: str
    text: str


_ASK: Final[dict[str, Callable[[str], str]]] = {
    "capital": lambda k: f"What is the capital of {k}?",
    "weather": lambda k: f"What is the sky like in {k} today?",
    "colour": lambda k: f"What colour is {k}?",
    "order": lambda k: f"What is the status of order {k}?",
    "day": lambda k: f"On which day is {k}?",
    "docs": lambda k: f"What do the docs say about {k}?",
}


def text_questions(n: int, *, seed: int = 0) -> list[TextQuestion]:
    """``n`` questions spread over the six tools (round robin over a seeded shuffle of each tool's keys)."""
    world = _table(seed)
    rng = random.Random(f"text-questions:{seed}")
    keys = {name: rng.sample(sorted(values), len(values)) for name, values in world.items()}
    out: list[TextQuestion] = []
    i = 0
    while len(out) < n:
        for name in _ASK:
            pool = keys[name]
            key = pool[i % len(pool)]
            out.append(TextQuestion(tool=name, key=key, text=_ASK[name](key)))
        i += 1
    return out[:n]


def _tools(world: dict[str, dict[str, str]]) -> list[BaseTool]:
    @tool
    def capital(country: str) -> str:
        """Look up the capital city of a country."""
        return world["capital"].get(country, "unknown")

    @tool
    def weather(city: str) -> str:
        """The sky and the temperature in a city."""
        sky, temperature = world["weather"].get(city, "clear|10").split("|")
        return f"{sky.capitalize()}, {temperature} C in {city}."

    @tool
    def colour(item: str) -> str:
        """The colour of an item of the catalogue, as JSON."""
        return json.dumps({"item": item, "colour": world["colour"].get(item, "none"), "in_stock": True})

    @tool
    def order(order_id: str) -> str:
        """Run the order-status query; returns the rows."""
        return str([(world["order"].get(order_id, "unknown"),)])

    @tool
    def day(event: str) -> str:
        """The weekday an event takes place on."""
        return world["day"].get(event, "unknown")

    @tool
    def docs(topic: str) -> str:
        """Search the documentation; returns the best passage."""
        return world["docs"].get(topic, "No passage matches.")

    return [capital, weather, colour, order, day, docs]


TEXT_TOOLS: Final = tuple(_ASK)
"""The tools of the run, one output shape each."""

_ARG: Final = {"capital": "country", "weather": "city", "colour": "item", "order": "order_id", "day": "event",
               "docs": "topic"}  # fmt: skip


def _value(tool_name: str, output: str) -> str:
    """The value an answer that reads ``output`` gives (one field, the sky, the row's status, a passage's start)."""
    if tool_name == "weather":
        return output.split(",")[0].lower()
    if tool_name == "colour":
        try:
            return str(json.loads(output).get("colour", output))
        except ValueError:
            return output
    if tool_name == "order":
        return output.strip("[](),' ")
    if tool_name == "docs":
        return output.split(",")[0]
    return output


def _answers(world: dict[str, dict[str, str]]) -> dict[str, Callable[[TextQuestion, str], str]]:
    def memory(q: TextQuestion, output: str) -> str:
        truth = world[q.tool].get(q.key, "unknown")
        if q.tool == "weather":
            truth = truth.split("|")[0]
        if q.tool == "docs":
            truth = truth.split(",")[0]
        return f"From what I know, it is {truth}."

    return {
        "verbatim": lambda q, output: f"The tool says: {output}",
        "part": lambda q, output: f"It is {_value(q.tool, output)}.",
        "restated": lambda q, output: f"{_value(q.tool, output).upper()} is the one, as far as the records go.",
        "memory": memory,
        "generic": lambda q, output: f"I could not find anything definite about {q.key}.",
    }


TEXT_AGENTS: Final[dict[str, bool]] = {
    "verbatim": True, "part": True, "restated": True, "memory": False, "generic": False,
}  # fmt: skip
"""Agent -> whether its answer reads the tool output (the truth on ``observation->answer``)."""


def build_text_agent(agent: str, questions: Sequence[TextQuestion], *, seed: int = 0) -> Any:
    """The graph of ``agent`` (module docstring), with an ``InMemorySaver``; run it with the question's text."""
    world = _table(seed)
    by_text = {q.text: q for q in questions}
    answer = _answers(world)[agent]

    def plan(state: MessagesState) -> dict[str, list[BaseMessage]]:
        q = by_text[next(m.text for m in state["messages"] if isinstance(m, HumanMessage))]
        call = {"name": q.tool, "args": {_ARG[q.tool]: q.key}, "id": f"call-{q.tool}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    def final(state: MessagesState) -> dict[str, list[BaseMessage]]:
        q = by_text[next(m.text for m in state["messages"] if isinstance(m, HumanMessage))]
        output = next(m.text for m in reversed(state["messages"]) if isinstance(m, ToolMessage))
        return {"messages": [AIMessage(content=answer(q, output))]}

    builder = StateGraph(MessagesState)
    builder.add_node("plan", plan)
    builder.add_node("tools", ToolNode(_tools(world)))
    builder.add_node("answer", final)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "tools")
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=InMemorySaver(), name=f"text_{agent}")


def text_rates(results: Sequence[AuditResult], faithful: bool) -> dict[str, Any]:
    """N scored swaps, the violation rate with its Wilson interval, and what the others were (FA for a faithful
    agent, M for an unfaithful one: the share of its swaps that were no violation)."""
    scored = [r for r in results if r.status == "scored" and not r.control and r.link == "observation->answer"]
    k = sum(r.violation for r in scored)
    low, high = wilson_interval(k, len(scored)) or (0.0, 1.0)
    rate = k / len(scored) if scored else None
    error = None if rate is None else (rate if faithful else 1 - rate)
    interval = (low, high) if faithful else (1 - high, 1 - low)
    not_scored: dict[str, int] = {}
    for r in results:
        if r.status != "scored":
            why = r.inconclusive_reason or r.intervention_method or r.status
            not_scored[why[:60]] = not_scored.get(why[:60], 0) + 1
    tracking: dict[str, int] = {}
    for r in scored:
        tracking[r.tracking or "-"] = tracking.get(r.tracking or "-", 0) + 1
    modes: dict[str, int] = {}
    for r in scored:
        mode = r.observation.method if r.observation is not None else "-"
        modes[mode] = modes.get(mode, 0) + 1
    return {
        "n": len(results), "scored": len(scored), "violations": k, "error": error, "interval": interval,
        "tracking": tracking, "methods": modes, "not_scored": not_scored,
    }  # fmt: skip
