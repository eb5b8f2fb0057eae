"""The fingerprint of a compiled graph: what an audit needs to know did not change since the recording.

An audit replays the recorded run on the graph it is given. If that graph is not the one the run
ran under (a deploy between the recording and the audit: another model, another prompt, another
tool), the counterfactual answer comes from another agent and φ measures nothing. The recorder keeps
a :class:`~ariadne_lc.trace.GraphFingerprint` on each trace and the auditor compares it with its own
graph's (:func:`differences`).

What is read, all from the compiled graph and without calling anything:

- nodes and edges: ``graph.get_graph()`` (a subgraph counts as its node, and its own parts are read);
- each node's runnable, walked a bounded depth: runnable bindings and sequences, the closure cells
  of node functions and the module globals they name, ``functools.partial`` arguments, bound
  methods' objects, ``create_agent`` middleware, lists and dicts. In there, chat models (type,
  ``model_name``/``model``, a hash of ``_identifying_params``), tools (name, description, argument
  schema; also those a ``ToolNode`` holds and those bound with ``bind_tools``), and prompts (system
  messages, prompt templates, strings in variables named like ``*prompt*`` or ``system*``).

Everything is rendered without ids or addresses (a function is its module and qualified name), so the
same graph built in another process (a fleet worker loading it by import path) has the same digest.
A model or prompt built inside a node at call time is invisible: the fingerprint says what it saw.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import types
import weakref
from collections.abc import Mapping
from typing import Any

from ariadne_lc.trace import GraphFingerprint

__all__ = ["agent_parts_of", "differences", "graph_fingerprint", "prompt_lines", "system_prompts_of"]

_MAX_DEPTH = 6
_MAX_ITEMS = 200
_cache: weakref.WeakKeyDictionary[Any, GraphFingerprint] = weakref.WeakKeyDictionary()


def _hash(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=_stable)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _stable(value: Any) -> Any:
    """A JSON stand-in for ``value`` that is the same in every process (never a repr with an address)."""
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType | type):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    if isinstance(value, functools.partial):
        return {"partial": _stable(value.func), "args": [_stable(a) for a in value.args]}
    if isinstance(value, set | frozenset):
        return sorted(json.dumps(v, sort_keys=True, default=_stable) for v in value)
    if hasattr(value, "get_secret_value"):  # pydantic SecretStr: never in a fingerprint
        return "<secret>"
    return type(value).__qualname__


class _Seen:
    """What a walk from one node found."""

    def __init__(self) -> None:
        self.chat_models: dict[int, Any] = {}
        """The model objects themselves, by id (what :func:`chat_models_of` returns)."""
        self.models: set[str] = set()
        self.prompts: set[str] = set()
        self.tools: dict[str, str] = {}
        self.visited: set[int] = set()


def _model_id(model: Any) -> str:
    name = next(
        (v for v in (getattr(model, a, None) for a in ("model_name", "model", "model_id")) if isinstance(v, str)),
        "",
    )
    try:
        params = dict(model._identifying_params)
    except Exception:
        params = {}
    label = " ".join(p for p in (type(model).__name__, name) if p)
    return f"{label} #{_hash(params)}"


def _tool_id(tool: Any) -> tuple[str, str]:
    try:
        schema = tool.tool_call_schema.model_json_schema()
    except Exception:
        schema = None
    return str(tool.name), _hash({"description": getattr(tool, "description", ""), "schema": schema})


def _bound_tool(spec: Any) -> tuple[str, str] | None:
    """A tool given to ``bind_tools`` as the provider's dict (``{"type": "function", "function": ...}``)."""
    if not isinstance(spec, Mapping):
        return None
    function = spec.get("function", spec)
    name = function.get("name") if isinstance(function, Mapping) else None
    return (str(name), _hash(function)) if name else None


def _prompt_name(name: str) -> bool:
    lowered = name.lower()
    return "prompt" in lowered or lowered.startswith("system")


def _walk(value: Any, seen: _Seen, depth: int, name: str = "") -> None:
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.messages import BaseMessage
    from langchain_core.prompts import BasePromptTemplate
    from langchain_core.runnables import RunnableBinding, RunnableSequence
    from langchain_core.tools import BaseTool

    if depth > _MAX_DEPTH or value is None or isinstance(value, int | float | bool | bytes):
        return
    if isinstance(value, str):
        if name and _prompt_name(name):
            seen.prompts.add(value)
        return
    if id(value) in seen.visited:
        return
    seen.visited.add(id(value))
    if isinstance(value, BaseLanguageModel):
        seen.models.add(_model_id(value))
        seen.chat_models.setdefault(id(value), value)
        return
    if isinstance(value, BaseTool):
        tool_name, digest = _tool_id(value)
        seen.tools[tool_name] = digest
        return
    if isinstance(value, BaseMessage):
        if value.type == "system":
            seen.prompts.add(value.text)
        return
    if isinstance(value, BasePromptTemplate):
        try:
            seen.prompts.add(json.dumps(value.to_json(), sort_keys=True, default=_stable))
        except Exception:
            seen.prompts.add(type(value).__qualname__)
        return
    if isinstance(value, RunnableBinding):
        _walk(value.bound, seen, depth + 1)
        for spec in value.kwargs.get("tools") or ():
            found = _bound_tool(spec)
            if found is not None:
                seen.tools[found[0]] = found[1]
        return
    if isinstance(value, RunnableSequence):
        for step in value.steps:
            _walk(step, seen, depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in list(value.items())[:_MAX_ITEMS]:
            _walk(item, seen, depth + 1, str(key))
        return
    if isinstance(value, list | tuple):
        for item in value[:_MAX_ITEMS]:
            _walk(item, seen, depth + 1, name)
        return
    if isinstance(value, types.MethodType):
        _walk(value.__func__, seen, depth + 1)
        _walk(value.__self__, seen, depth + 1)
        return
    if isinstance(value, functools.partial):
        _walk(value.func, seen, depth + 1)
        _walk(value.args, seen, depth + 1)
        _walk(value.keywords, seen, depth + 1)
        return
    if isinstance(value, types.FunctionType):
        _walk_function(value, seen, depth)
        return
    _walk_object(value, seen, depth)


def _walk_function(func: types.FunctionType, seen: _Seen, depth: int) -> None:
    for var, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=False):
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        _walk(contents, seen, depth + 1, var)
    module_globals = func.__globals__
    for global_name in func.__code__.co_names:
        if global_name in module_globals:
            item = module_globals[global_name]
            if not isinstance(item, types.ModuleType | type):
                _walk_global(item, seen, depth + 1, global_name)


def _walk_global(item: Any, seen: _Seen, depth: int, name: str) -> None:
    """A module global a node function names: only the kinds of things a fingerprint is made of
    (a global helper function is not followed: it would pull in the whole module)."""
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.messages import BaseMessage
    from langchain_core.prompts import BasePromptTemplate
    from langchain_core.runnables import RunnableBinding, RunnableSequence
    from langchain_core.tools import BaseTool

    kinds = (BaseLanguageModel, BaseTool, BaseMessage, BasePromptTemplate, RunnableBinding, RunnableSequence)
    if isinstance(item, kinds) or (isinstance(item, str) and _prompt_name(name)):
        _walk(item, seen, depth, name)


def _walk_object(value: Any, seen: _Seen, depth: int) -> None:
    """Objects whose parts are known: runnables wrapping a function, tool nodes, agent middleware."""
    tools_by_name = getattr(value, "tools_by_name", None)  # langgraph.prebuilt.ToolNode
    if isinstance(tools_by_name, Mapping):
        for tool in tools_by_name.values():
            _walk(tool, seen, depth + 1)
    for attribute in ("func", "afunc"):  # RunnableCallable, RunnableLambda
        func = getattr(value, attribute, None)
        if isinstance(func, types.FunctionType | types.MethodType | functools.partial):
            _walk(func, seen, depth + 1)
    if _is_middleware(value):
        for key, item in list(vars(value).items())[:_MAX_ITEMS]:
            _walk(item, seen, depth + 1, key)


def _is_middleware(value: Any) -> bool:
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError:  # pragma: no cover - langchain is a dependency
        return False
    return isinstance(value, AgentMiddleware)


def _compute(graph: Any) -> GraphFingerprint:
    drawn = graph.get_graph()
    nodes = tuple(sorted(str(n) for n in drawn.nodes))
    edges = tuple(sorted(f"{e.source} {'-?->' if e.conditional else '->'} {e.target}" for e in drawn.edges))
    tools: dict[str, str] = {}
    models: dict[str, tuple[str, ...]] = {}
    prompts: dict[str, str] = {}
    for name, node in sorted(graph.nodes.items()):
        seen = _Seen()
        _walk_node(node, seen)
        tools.update(seen.tools)
        if seen.models:
            models[name] = tuple(sorted(seen.models))
        if seen.prompts:
            prompts[name] = _hash(sorted(seen.prompts))
    parts = {"nodes": nodes, "edges": edges, "tools": tools, "models": models, "prompts": prompts}
    return GraphFingerprint(
        nodes=nodes, edges=edges, tools=dict(sorted(tools.items())), models=models, prompts=prompts, digest=_hash(parts)
    )


def _walk_node(node: Any, seen: _Seen) -> None:
    from langgraph.pregel import Pregel

    bound = getattr(node, "bound", node)
    if isinstance(bound, Pregel):  # a subgraph: its nodes' parts belong to this node
        for _, inner in sorted(bound.nodes.items()):
            _walk_node(inner, seen)
        return
    _walk(bound, seen, 0)


def agent_parts_of(graph: Any, node: str) -> tuple[list[Any], list[str]]:
    """The chat models node ``node`` of ``graph`` can call and the prompts it holds, found as the fingerprint finds
    them (its function's closure, bound runnables, its subgraph's nodes): what a ``thought->action`` audit re-runs when
    the agent has no ``AriadneMiddleware`` (a supervisor's own agent, a swarm recorded by a handler)."""
    found = graph.nodes.get(node)
    if found is None:
        return [], []
    seen = _Seen()
    _walk_node(found, seen)
    return list(seen.chat_models.values()), sorted(p for p in seen.prompts if p.strip())


def graph_fingerprint(graph: Any) -> GraphFingerprint:
    """The fingerprint of a compiled graph (computed once per graph object).

    Raises whatever reading the graph raises; the recorder and the auditor guard the call.
    """
    try:
        return _cache[graph]
    except (KeyError, TypeError):
        pass
    fingerprint = _compute(graph)
    with contextlib.suppress(TypeError):  # not weakly referenceable: computed each time
        _cache[graph] = fingerprint
    return fingerprint


def differences(recorded: GraphFingerprint, current: GraphFingerprint) -> list[str]:
    """What changed from the graph a trace was recorded under to ``current``, one line a change."""
    if recorded.digest == current.digest:
        return []
    out: list[str] = []

    def sets(what: str, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
        if added:
            out.append(f"{what} added: {', '.join(added)}")
        if removed:
            out.append(f"{what} removed: {', '.join(removed)}")

    sets("nodes", recorded.nodes, current.nodes)
    sets("edges", recorded.edges, current.edges)
    sets("tools", tuple(recorded.tools), tuple(current.tools))
    for tool in sorted(set(recorded.tools) & set(current.tools)):
        if recorded.tools[tool] != current.tools[tool]:
            out.append(f"tool {tool!r}: description or argument schema changed")
    for node in sorted(set(recorded.models) | set(current.models)):
        old, new = recorded.models.get(node, ()), current.models.get(node, ())
        if old != new:
            out.append(f"model of node {node!r}: {', '.join(old) or 'none seen'} -> {', '.join(new) or 'none seen'}")
    for node in sorted(set(recorded.prompts) | set(current.prompts)):
        if recorded.prompts.get(node) != current.prompts.get(node):
            out.append(f"prompt of node {node!r} changed")
    return out or ["the graph's fingerprint differs"]


def prompt_lines(text: str) -> tuple[str, ...]:
    """Digests of the non-empty lines of a system prompt, sorted, distinct (``GraphFingerprint.system_lines``)."""
    return tuple(sorted({_hash(line.strip()) for line in text.splitlines() if line.strip()}))


def system_prompts_of(graph: Any) -> dict[str, str]:
    """Node -> the system prompt it holds, for the graph's own agent nodes (``create_agent``'s model node keeps its
    ``system_message`` in its closure); empty when none is found."""
    found: dict[str, str] = {}
    for name_of_node, node in getattr(graph, "nodes", {}).items():
        func = getattr(getattr(node, "bound", node), "func", None)
        code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None) or ()
        for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=False):
            if name in ("system_message", "system_prompt"):
                try:
                    value = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                text = getattr(value, "content", value)
                if isinstance(text, str) and text.strip():
                    found[str(name_of_node)] = text
    return found
