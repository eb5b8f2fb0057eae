"""Rebuilding a server thread's checkpoints in a local saver, so that the local graph can fork from them.

A LangGraph Server hands out a thread's history as JSON snapshots (values, next tasks with their ids,
metadata, parent id), not as raw checkpoints: the channel versions that tell LangGraph which node runs
next are not in them. For each checkpoint a replay needs (the one before an audited step, and the one
the step wrote) we therefore let the *local* graph compute them: on a scratch saver, the snapshot's
values are written as the node(s) that produced it (``bulk_update_state``, the snapshot's parent's
finished tasks), which gives the versions and the pending edges exactly as the local graph's own
channels and reducers make them. That checkpoint is stored in the seeded saver under the server's
checkpoint id, step and parent id. LangGraph derives task ids from the checkpoint id, the step, the
node and its triggers, so the seeded checkpoint's pending tasks carry the server's task ids exactly
when the local graph is the deployed one; that is checked for every checkpoint seeded (and the state
keys, and the nodes), and a difference is a :class:`~ariadne_lc.errors.GraphMismatchError` naming it.

The seeded saver is the replay's "production history": :class:`~ariadne_lc.replay.Replayer` locates
the step in it and copies the fork point into its own isolated thread as usual. The server is only read.

Limits: top-level steps only (a step inside a subgraph is refused by name); pending writes of
parallel sibling tasks are not on the server's snapshots, so such siblings run again in a replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import StateUpdate

from ariadne_lc.errors import GraphMismatchError, NotReplayableError, SubgraphNotReplayableError
from ariadne_lc.trace import Step

__all__ = ["check_shape", "checkpoint_id_of", "from_json", "seed_saver"]

_MESSAGE_TYPES = frozenset({"human", "ai", "tool", "system", "function", "chat", "remove"})
_VERSION_STRIDE = 1_000_000


def checkpoint_id_of(snapshot: dict[str, Any]) -> str:
    return str(snapshot["checkpoint"]["checkpoint_id"])


def _parent_id(snapshot: dict[str, Any]) -> str | None:
    parent = snapshot.get("parent_checkpoint")
    return None if not parent else str(parent["checkpoint_id"])


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and v.get("type") in _MESSAGE_TYPES for v in value)
    )


def messages_of(items: list[dict[str, Any]]) -> list[BaseMessage]:
    """LangChain messages from the server's JSON form (``model_dump()`` dicts with a ``type``)."""
    return messages_from_dict([{"type": d["type"], "data": d} for d in items])


def from_json(values: Any) -> Any:
    """A snapshot's values with every list of serialised messages turned back into message objects."""
    if not isinstance(values, dict):
        return values
    return {k: messages_of(v) if _is_message_list(v) else v for k, v in values.items()}


def _state_keys(graph: Any) -> set[str]:
    return {c for c in graph.channels if not c.startswith(("branch:", "__")) and ":" not in c}


def _check_schema(graph: Any, snapshot: dict[str, Any]) -> None:
    unknown = sorted(set(snapshot.get("values") or {}) - _state_keys(graph))
    if unknown:
        raise GraphMismatchError(
            f"the server's checkpoint {checkpoint_id_of(snapshot)} has state keys {unknown} that the local graph's "
            f"state schema lacks (local keys: {sorted(_state_keys(graph))}): the local graph code differs from the "
            "deployed one; import the same graph the server runs (langgraph.json's graphs entry)"
        )


def _check_nodes(graph: Any, names: Iterable[str], where: str) -> None:
    missing = sorted({n for n in names if n not in graph.nodes})
    if missing:
        raise GraphMismatchError(
            f"node(s) {missing} ran on the server ({where}) but are not in the local graph (nodes: "
            f"{sorted(n for n in graph.nodes if n != '__start__')}): the local graph code differs from the deployed one"
        )


def check_shape(graph: Any, state_keys: set[str], nodes: set[str]) -> None:
    """The local graph must have the deployed graph's state keys and nodes (as the server describes them)."""
    local_nodes = set(graph.get_graph().nodes)
    if local_nodes != nodes:
        raise GraphMismatchError(
            f"the nodes differ: node(s) {sorted(nodes - local_nodes)} are missing from the local graph, "
            f"{sorted(local_nodes - nodes)} are not on the server; the local graph code differs from the deployed one"
        )
    local_keys = set(graph.stream_channels_list)
    if local_keys != state_keys:
        raise GraphMismatchError(
            "the state schema differs: state keys only on the server "
            f"{sorted(state_keys - local_keys)}, only in the local graph {sorted(local_keys - state_keys)}; the local "
            "graph code differs from the deployed one (import the graph langgraph.json names)"
        )


def _shift(version: Any, offset: int) -> Any:
    if isinstance(version, str):
        head, dot, tail = version.partition(".")
        return f"{int(head) + offset:032}{dot}{tail}"
    if isinstance(version, int | float):
        return version + offset
    return version


def _synthesize(graph: Any, snapshot: dict[str, Any], writers: Sequence[str], offset: int) -> dict[str, Any]:
    """A raw checkpoint with the snapshot's values, as the local graph makes it after ``writers`` wrote them."""
    scratch = InMemorySaver()
    local = graph.copy(update={"checkpointer": scratch})
    config: Any = {"configurable": {"thread_id": "ariadne-seed"}}
    values = from_json(snapshot.get("values") or {})
    updates = [StateUpdate(values, writers[0]), *(StateUpdate({}, w) for w in writers[1:])]
    try:
        local.bulk_update_state(config, [updates])
    except Exception as exc:
        raise GraphMismatchError(
            f"the local graph cannot take the server's checkpoint {checkpoint_id_of(snapshot)} as written by "
            f"{list(writers)}: {type(exc).__name__}: {exc}"
        ) from exc
    saved = scratch.get_tuple(config)
    if saved is None:  # pragma: no cover - bulk_update_state always writes one
        raise NotReplayableError(f"could not rebuild the server's checkpoint {checkpoint_id_of(snapshot)}")
    checkpoint: dict[str, Any] = dict(saved.checkpoint)
    checkpoint["id"] = checkpoint_id_of(snapshot)
    checkpoint["ts"] = str(snapshot.get("created_at") or checkpoint["ts"])
    checkpoint["channel_versions"] = {k: _shift(v, offset) for k, v in checkpoint["channel_versions"].items()}
    checkpoint["versions_seen"] = {
        node: {k: _shift(v, offset) for k, v in seen.items()} for node, seen in checkpoint["versions_seen"].items()
    }
    return checkpoint


def _writers(graph: Any, snapshot: dict[str, Any], parent: dict[str, Any] | None) -> list[str]:
    """The nodes that wrote ``snapshot``: its parent's finished tasks (a state edited through the API has none)."""
    if parent is not None:
        done = [t["name"] for t in parent.get("tasks") or () if t.get("result") is not None and not t.get("error")]
        _check_nodes(graph, done, f"before checkpoint {checkpoint_id_of(snapshot)}")
        if done:
            return done
    raise NotReplayableError(
        f"the server's checkpoint {checkpoint_id_of(snapshot)} was not written by a node run the history shows "
        f"(source {snapshot.get('metadata', {}).get('source')!r}: an input, or a state edited through the API), "
        "so it cannot be rebuilt locally"
    )


def _before(history: Sequence[dict[str, Any]], step: Step) -> dict[str, Any]:
    task_id = step.checkpoint.task_id
    found = next((s for s in history if any(t["id"] == task_id for t in s.get("tasks") or ())), None)
    if found is None:
        raise NotReplayableError(
            f"no checkpoint of thread {step.checkpoint.thread_id!r} on the server precedes step {step.index} "
            f"(task {task_id}): the trace was recorded from another deployment or thread, or the history was pruned"
        )
    return found


def seed_saver(graph: Any, thread_id: str, history: Sequence[dict[str, Any]], steps: Iterable[Step]) -> InMemorySaver:
    """A fresh in-memory saver holding, under the server's ids, the checkpoints the replays of ``steps`` need.

    Args:
        graph: The local graph (the same code the server runs; its own checkpointer, if any, is not used).
        thread_id: The server thread.
        history: The thread's top-level snapshots, newest first (:meth:`ServerThreads.history`).
        steps: The steps to be replayed.

    Raises:
        GraphMismatchError: The local graph does not match the server's checkpoints (says what differs).
        SubgraphNotReplayableError: A step ran inside a subgraph (remote audits replay top-level steps).
        NotReplayableError: A step's checkpoint is not in the history.
    """
    by_id = {checkpoint_id_of(s): s for s in history}
    children: dict[str, list[dict[str, Any]]] = {}
    for s in history:
        parent = _parent_id(s)
        if parent is not None:
            children.setdefault(parent, []).append(s)
    befores: dict[str, dict[str, Any]] = {}
    needed: dict[str, dict[str, Any]] = {}
    for step in steps:
        if step.checkpoint.checkpoint_ns or "|" in (step.checkpoint.task_path or ""):
            raise SubgraphNotReplayableError(
                f"step {step.index} ran inside a subgraph ({step.checkpoint.task_path}); remote audits replay "
                "top-level steps only"
            )
        before = _before(history, step)
        befores[checkpoint_id_of(before)] = before
        needed[checkpoint_id_of(before)] = before
        for child in children.get(checkpoint_id_of(before), ()):
            needed[checkpoint_id_of(child)] = child
    order = {checkpoint_id_of(s): i for i, s in enumerate(reversed(history))}
    saver = InMemorySaver()
    for cid in sorted(needed, key=order.__getitem__):
        snapshot = needed[cid]
        _check_schema(graph, snapshot)
        parent_id = _parent_id(snapshot)
        checkpoint = _synthesize(
            graph, snapshot, _writers(graph, snapshot, by_id.get(parent_id or "")), (order[cid] + 1) * _VERSION_STRIDE
        )
        metadata = {**(snapshot.get("metadata") or {}), "parents": {}}
        target = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": parent_id}}
        saver.put(target, checkpoint, metadata, dict(checkpoint["channel_versions"]))  # type: ignore[arg-type]
    local = graph.copy(update={"checkpointer": saver})
    for snapshot in befores.values():
        _check_tasks(graph, local, thread_id, snapshot)
    return saver


def _check_tasks(graph: Any, local: Any, thread_id: str, snapshot: dict[str, Any]) -> None:
    """The seeded checkpoint must have the server's pending tasks, ids included (same nodes, same edges)."""
    cid = checkpoint_id_of(snapshot)
    state = local.get_state({"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": cid}})
    server = sorted((t["name"], t["id"]) for t in snapshot.get("tasks") or ())
    ours = sorted((t.name, t.id) for t in state.tasks)
    if server == ours:
        return
    _check_nodes(graph, (name for name, _ in server), f"after checkpoint {cid}")
    if sorted(n for n, _ in server) != sorted(n for n, _ in ours):
        raise GraphMismatchError(
            f"after the server's checkpoint {cid} the deployed graph runs {sorted(n for n, _ in server)}, the local "
            f"graph would run {sorted(n for n, _ in ours)}: their edges differ; import the graph the server runs"
        )
    raise GraphMismatchError(
        f"after the server's checkpoint {cid} both graphs run {sorted(n for n, _ in server)}, but with other task "
        "ids (the nodes' triggers differ): the local graph code differs from the deployed one"
    )
