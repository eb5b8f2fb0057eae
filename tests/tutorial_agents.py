"""Agents shaped like the public LangChain / LangGraph tutorials, scripted so that each one's truth per link is known.

Six shapes: the ``create_agent`` quick start (weather, a templated sentence), sky conditions (a sentence with a sky and
a temperature, read only for its sky), a SQL agent (rows as tuples), agentic RAG (a retrieved passage), web search
(JSON), a lookup by name (a bare name), and a multi-tool agent whose one turn makes parallel calls. Each is built
``create_agent`` + :class:`~ariadne_lc.AriadneMiddleware` on a scripted chat model:

- ``thought``: the first turn writes a plan before its call ("I should look up the capital of Spain with the capital
  tool."), or no text at all (how most models call tools);
- ``action``: on the ``thought->action`` re-run (the thought as the start of the reply) the model makes the call the
  thought says (``"thought"``: faithful) or the question's call again (``"question"``: unfaithful);
- ``answer``: after the tool outputs it answers from them (``"observation"``) or from the question alone
  (``"question"``: unfaithful on ``observation->answer``).

Every tool counts its runs (:data:`RUNS`), so a test can assert that an audit ran none. Shared by the tests and
``benchmarks/audit_cost.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, InMemoryTraceStore
from ariadne_lc.testing import ScriptedChatModel
from ariadne_lc.testing._thoughts import ThoughtPlace, carried, carry
from ariadne_lc.trace import Trace

RUNS: dict[str, int] = {}
"""Tool name -> how many times it ran (production runs only: audits must add none)."""


def _ran(name: str) -> None:
    RUNS[name] = RUNS.get(name, 0) + 1


CITIES = {"Paris": ("sunny", 21), "Tokyo": ("cloudy", 14), "Lima": ("foggy", 17), "Oslo": ("snowy", -3)}
CAPITALS = {"Spain": "Madrid", "France": "Paris", "Japan": "Tokyo", "Peru": "Lima", "Kenya": "Nairobi"}
HEADCOUNT = {"employees": 8, "departments": 3, "projects": 12, "offices": 5}
PASSAGES = {
    "reward hacking": "Reward hacking occurs when a reinforcement learning agent exploits flaws or ambiguities in "
    "the reward function to achieve high rewards without genuinely learning the intended task.",
    "hallucination": "Hallucination is when a language model generates content that is unfaithful to its context "
    "or to world knowledge, inventing facts that are not grounded in any source.",
    "prompt injection": "Prompt injection smuggles instructions into the input of a model, so that untrusted text "
    "overrides what the developer told the model to do.",
    "diffusion models": "Diffusion models learn to reverse a gradual noising process, denoising random noise step "
    "by step until a clean sample emerges.",
}
HEIGHTS = {"Eiffel Tower": 330, "Statue of Liberty": 93, "Big Ben": 96, "Space Needle": 184}


@tool
def get_weather(city: str) -> str:
    """Get the weather for a given city."""
    _ran("get_weather")
    return f"It's always sunny in {city}!"


@tool
def get_conditions(city: str) -> str:
    """Get the sky and the temperature in a city."""
    _ran("get_conditions")
    sky, temperature = CITIES.get(city, ("clear", 10))
    return f"{sky.capitalize()}, {temperature} C in {city}."


@tool
def get_population(city: str) -> str:
    """Get how many people live in a city."""
    _ran("get_population")
    return f"{len(city) * 1.3:.1f} million"


@tool
def sql_db_query(query: str) -> str:
    """Run a SQL query against the company database and return the rows."""
    _ran("sql_db_query")
    table = re.search(r"FROM\s+(\w+)", query, re.I)
    return str([(HEADCOUNT.get(table.group(1).lower(), 0) if table else 0,)])


@tool
def sql_db_schema(table_names: str) -> str:
    """Get the schema of the given tables."""
    _ran("sql_db_schema")
    return f"CREATE TABLE {table_names} (id INTEGER, name TEXT)"


@tool
def sql_db_list_tables() -> str:
    """List the tables of the database."""
    _ran("sql_db_list_tables")
    return ", ".join(HEADCOUNT)


@tool
def retrieve_blog_posts(query: str) -> str:
    """Search and return information about Lilian Weng's blog posts."""
    _ran("retrieve_blog_posts")
    return PASSAGES.get(query.lower(), "No post matches.")


@tool
def web_search(query: str) -> str:
    """Search the web."""
    _ran("web_search")
    name = next((n for n in HEIGHTS if n.lower() in query.lower()), None)
    content = f"The {name} is {HEIGHTS[name]} metres tall." if name else "No result."
    return json.dumps({"query": query, "results": [{"title": name or query, "content": content, "score": 0.9}]})


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page by its URL."""
    _ran("fetch_page")
    return "<html></html>"


@tool
def capital(country: str) -> str:
    """Look up the capital city of a country."""
    _ran("capital")
    return CAPITALS.get(country, "unknown")


@tool
def population(country: str) -> str:
    """Look up the population of a country."""
    _ran("population")
    return f"{len(country) * 7} million"


@dataclass(frozen=True)
class Shape:
    """One tutorial shape: its tools, its questions, and how its scripted model plans, re-plans and answers."""

    name: str
    tools: tuple[BaseTool, ...]
    questions: tuple[str, ...]
    plan: Callable[[str], tuple[str, list[tuple[str, dict[str, Any]]]]]
    """question -> (thought, calls)."""
    follow: Callable[[str, str], list[tuple[str, dict[str, Any]]] | None]
    """(question, thought) -> the calls the thought says (None: no call)."""
    answer: Callable[[str, list[str]], str]
    """(question, tool outputs) -> the answer that reads them."""
    ignore: Callable[[str], str]
    """question -> the answer from the question alone."""


def _tool_named(thought: str, words: dict[str, str]) -> str | None:
    """The tool whose word the thought says last."""
    best: tuple[int, str] | None = None
    for word, name in words.items():
        for m in re.finditer(rf"\b{re.escape(word)}\b", thought, re.I):
            if best is None or m.start() > best[0]:
                best = (m.start(), name)
    return None if best is None else best[1]


def _after(pattern: str, text: str, default: str) -> str:
    m = re.search(pattern, text)
    return m.group(1).strip() if m else default


def _city(q: str) -> str:
    return _after(r"\bin ([A-Z]\w+)", q, "Paris")


def _country(q: str) -> str:
    return _after(r"\bof ([A-Z]\w+)", q, "Spain")


def _table(q: str) -> str:
    return _after(r"many (\w+)", q, "employees")


def _topic(q: str) -> str:
    return _after(r"about (.+)\?", q, "reward hacking")


def _landmark(q: str) -> str:
    return _after(r"the (.+)\?", q, "Eiffel Tower")


def _first_number(text: str) -> str:
    return re.findall(r"\d+", text)[0]


WEATHER = Shape(
    name="quickstart_weather",
    tools=(get_weather,),
    questions=tuple(f"What is the weather in {c}?" for c in CITIES),
    plan=lambda q: (f"I should get the weather in {_city(q)}.", [("get_weather", {"city": _city(q)})]),
    follow=lambda q, t: [("get_weather", {"city": _after(r"\bin ([A-Z]\w+)", t, _city(q))})],
    answer=lambda q, outs: f"Here is the weather: {outs[0]}",
    ignore=lambda q: f"I think it is mild in {_city(q)} today.",
)

SKY = Shape(
    name="sky_conditions",
    tools=(get_conditions, get_population),
    questions=tuple(f"What is the sky like in {c}?" for c in CITIES),
    plan=lambda q: (
        f"I should get the conditions in {_city(q)} with the conditions tool.",
        [("get_conditions", {"city": _city(q)})],
    ),
    follow=lambda q, t: [
        (
            _tool_named(t, {"conditions": "get_conditions", "population": "get_population"}) or "get_conditions",
            {"city": _after(r"\bin ([A-Z]\w+)", t, _city(q))},
        )
    ],
    # reads only the sky: the temperature beside it is none of the answer's business
    answer=lambda q, outs: f"The sky in {_city(q)} is {outs[0].split(',')[0].lower()}.",
    ignore=lambda q: f"The sky in {_city(q)} is blue.",
)

SQL = Shape(
    name="sql_agent",
    tools=(sql_db_list_tables, sql_db_schema, sql_db_query),
    questions=tuple(f"How many {t} does the company have?" for t in HEADCOUNT),
    plan=lambda q: (
        f"I should count the rows of the {_table(q)} table with a query.",
        [("sql_db_query", {"query": f"SELECT COUNT(*) FROM {_table(q)}"})],
    ),
    follow=lambda q, t: [
        (name, {"query": "SELECT COUNT(*) FROM " + _after(r"the (\w+) table", t, "employees")})
        if name == "sql_db_query"
        else (name, {"table_names": _after(r"the (\w+) table", t, "employees")} if name == "sql_db_schema" else {})
        for name in [
            _tool_named(t, {"query": "sql_db_query", "schema": "sql_db_schema", "list": "sql_db_list_tables"})
            or "sql_db_query"
        ]
    ],
    answer=lambda q, outs: f"The company has {_first_number(outs[0])} {_table(q)}.",
    ignore=lambda q: f"The company has about forty {_table(q)}.",
)

RAG = Shape(
    name="agentic_rag",
    tools=(retrieve_blog_posts,),
    questions=tuple(f"What does Lilian Weng say about {topic}?" for topic in PASSAGES),
    plan=lambda q: (
        f"I should search the blog posts for {_topic(q)}.",
        [("retrieve_blog_posts", {"query": _topic(q)})],
    ),
    follow=lambda q, t: [("retrieve_blog_posts", {"query": _after(r"posts for (.+?)\.?$", t, "reward hacking")})],
    answer=lambda q, outs: "According to the blog: " + outs[0].split(",")[0] + ".",
    ignore=lambda q: "It is an important topic in machine learning research.",
)

SEARCH = Shape(
    name="web_search",
    tools=(web_search, fetch_page),
    questions=tuple(f"How tall is the {name}?" for name in HEIGHTS),
    plan=lambda q: (
        f"I should search the web for the height of the {_landmark(q)}.",
        [("web_search", {"query": f"height of the {_landmark(q)}"})],
    ),
    follow=lambda q, t: [
        ("web_search", {"query": _after(r"for (.+?)\.?$", t, q)})
        if (_tool_named(t, {"search": "web_search", "fetch": "fetch_page", "page": "fetch_page"}) or "web_search")
        == "web_search"
        else ("fetch_page", {"url": "https://example.org"})
    ],
    answer=lambda q, outs: json.loads(outs[0])["results"][0]["content"],
    ignore=lambda q: "It is quite tall, as famous landmarks go.",
)

LOOKUP = Shape(
    name="lookup_by_name",
    tools=(capital, population),
    questions=tuple(f"What is the capital of {c}?" for c in CAPITALS),
    plan=lambda q: (
        f"I should look up the capital of {_country(q)} with the capital tool.",
        [("capital", {"country": _country(q)})],
    ),
    follow=lambda q, t: [
        (
            _tool_named(t, {"capital": "capital", "population": "population"}) or "capital",
            {"country": _after(r"\bof ([A-Z]\w+)", t, _country(q))},
        )
    ],
    answer=lambda q, outs: f"The capital of {_country(q)} is {outs[0]}.",
    ignore=lambda q: f"The capital of {_country(q)} is a large city.",
)

MULTI = Shape(
    name="multi_tool_parallel",
    tools=(get_conditions, get_population),
    questions=tuple(f"What is the sky like in {c}, and how many people live there?" for c in CITIES),
    plan=lambda q: (
        f"I should get the conditions and the population of {_city(q)} at once.",
        [("get_conditions", {"city": _city(q)}), ("get_population", {"city": _city(q)})],
    ),
    follow=lambda q, t: (
        [
            (name, {"city": _after(r"of ([A-Z]\w+)", t, _city(q))})
            for name in ("get_conditions", "get_population")
            if re.search(name.split("_")[1], t, re.I)
        ]
        or None
    ),
    answer=lambda q, outs: f"In {_city(q)} the sky is {outs[0].split(',')[0].lower()} and {outs[1]} people live there.",
    ignore=lambda q: f"In {_city(q)} the sky is blue and many people live there.",
)

SHAPES: tuple[Shape, ...] = (WEATHER, SKY, SQL, RAG, SEARCH, LOOKUP, MULTI)


def shape_model(
    shape: Shape,
    *,
    thought: bool = True,
    action: Literal["thought", "question"] = "thought",
    answer: Literal["observation", "question"] = "observation",
    thought_in: ThoughtPlace = "text",
) -> ScriptedChatModel:
    """The scripted model of ``shape`` (module docstring); ``thought_in``: where it writes its thought (the text,
    ``reasoning_content``, a ``<think>`` block) and reads it back from on the re-run."""

    def question(messages: Sequence[BaseMessage]) -> str:
        return next((m.text for m in messages if isinstance(m, HumanMessage)), "")

    def calls_of(planned: Sequence[tuple[str, dict[str, Any]]], tag: str) -> list[dict[str, Any]]:
        return [{"name": n, "args": a, "id": f"call-{tag}-{i}"} for i, (n, a) in enumerate(planned)]

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        q = question(messages)
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the re-run: the thought is the start of the reply
            read = carried(thought_in, last)
            planned = shape.plan(q)[1] if action == "question" else shape.follow(q, read)
            if not planned or (re.search(r"\b(not|never|no longer|false)\b", read, re.I) and action == "thought"):
                return AIMessage(content=" I will answer without a tool.")
            return AIMessage(content="", tool_calls=calls_of(planned, "re"))
        if not any(isinstance(m, AIMessage) for m in messages):
            text, planned = shape.plan(q)
            if not thought:
                return AIMessage(content="", tool_calls=calls_of(planned, "plan"))
            return carry(thought_in, text, tool_calls=calls_of(planned, "plan"))
        outputs = [m.text for m in messages if m.type == "tool"]
        return AIMessage(content=shape.answer(q, outputs) if answer == "observation" else shape.ignore(q))

    script.__name__ = f"{shape.name}_{'thought' if thought else 'silent'}_{thought_in}_{action}_{answer}"
    return ScriptedChatModel(script=script)


def run_shape(
    shape: Shape,
    *,
    thought: bool = True,
    action: Literal["thought", "question"] = "thought",
    answer: Literal["observation", "question"] = "observation",
    thought_in: ThoughtPlace = "text",
    store: InMemoryTraceStore | None = None,
) -> tuple[Any, list[Trace]]:
    """The agent of ``shape`` run on each of its questions (one thread each); the graph and the recorded traces."""
    store = store or InMemoryTraceStore()
    model = shape_model(shape, thought=thought, action=action, answer=answer, thought_in=thought_in)
    graph = create_agent(model, list(shape.tools), checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    for i, q in enumerate(shape.questions):
        graph.invoke({"messages": [("user", q)]}, {"configurable": {"thread_id": f"{shape.name}-{i}"}})
    return graph, store.list_traces()
