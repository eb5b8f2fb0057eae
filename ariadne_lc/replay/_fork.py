"""Finding the checkpoint before a recorded step, at any subgraph depth, and copying it aside.

A step's task path (``node:<task id>``, prefixed by ``parent:<task id>|`` per enclosing subgraph)
names one pending task per level: at the top level the parent node running the subgraph, below it
the node that wrote the step. At each level the checkpoint *before* that task is the one whose
pending tasks include its id. Those checkpoints are copied raw (values, versions, ids) into a fresh
thread of the replay's own saver, without the writes of the tasks on the path (so those tasks run
again) and with every other pending write (so finished siblings do not). Checkpoint ids are kept, so
LangGraph derives the same task ids and therefore the same subgraph namespaces in the copy: resuming
the copied top level re-enters each copied subgraph exactly where the step was taken, the same way
LangGraph resumes a subgraph after an interrupt. Each level's checkpoint is read once, raw (its values, versions and
pending writes: the step's own message is among the writes of its task), and kept with the fork (:class:`Forks`), so
that the audits of one step read the production checkpointer once between them.

A channel that keeps only deltas (LangGraph's ``DeltaChannel``, which deep agents use for ``messages`` so that
checkpoints grow O(N) rather than O(N²)) stores nothing in most checkpoints: its value is rebuilt by replaying the
writes along the checkpoint's ancestors. A copy of one checkpoint without its ancestors would rebuild only the last
writes (the user's question gone), so each such channel is written into the copy whole, as the value the production
history rebuilds at that checkpoint (a stored value is what ``DeltaChannel.from_checkpoint`` reads as a seed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.channels import BinaryOperatorAggregate, DeltaChannel

from ariadne_lc._cache import Lru
from ariadne_lc._twin import Flow
from ariadne_lc.errors import NotReplayableError, SubgraphNotReplayableError
from ariadne_lc.replay import _ops
from ariadne_lc.replay._history import Histories, HistoryIndex
from ariadne_lc.trace import Step

__all__ = [
    "FORKS_KEPT", "Before", "Forks", "Level", "Saved", "StateEdit", "copy_levels", "levels_of", "locate", "path_of",
    "relative",
]  # fmt: skip

FORKS_KEPT: Final = 64
"""Steps whose fork a replayer keeps (a batch's traces audited at once, each on a few steps at a time)."""


@dataclass(frozen=True, slots=True)
class Before:
    """The state before a level's task as the replay reads it: every channel's value (those the checkpoint rebuilds
    from its ancestors' writes, whole) and the config that names the checkpoint."""

    values: dict[str, Any]
    config: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Saved:
    """A level's checkpoint as each copy of it starts: the raw checkpoint with every rebuilt channel written whole,
    its metadata, and the pending writes of the tasks off the path (by task), which the copy keeps."""

    checkpoint: dict[str, Any]
    metadata: Any
    writes: dict[str, list[tuple[str, Any]]]


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the path from the top graph down to the step."""

    ns: str
    """The checkpoint namespace of this level's graph ("" for the top level)."""
    node: str
    """The node of this level on the path (the subgraph's node, or the step's node at the bottom)."""
    task_id: str
    before: Before
    """The state before the task."""
    saved: Saved
    """The checkpoint before the task, as copies of it start."""
    own_writes: tuple[tuple[str, Any], ...] = ()
    """What the task itself wrote (channel, value), as the saver kept it: at the bottom level, the step's message."""


def levels_of(ns: str) -> list[str]:
    """The levels of a checkpoint namespace or task path, top first: ``node:<task id>`` each, with the call counter
    LangGraph appends when one task runs the same graph again (``tools:<task>|1``: its second call) kept with its
    level, as LangGraph's own ``recast_checkpoint_ns`` reads it."""
    out: list[str] = []
    for segment in ns.split("|") if ns else ():
        if segment.isdigit() and out:
            out[-1] = f"{out[-1]}|{segment}"
        else:
            out.append(segment)
    return out


def path_of(step: Step) -> list[tuple[str, str, str]]:
    """(namespace, node, task id) per level, from the top graph down."""
    segments = levels_of(step.checkpoint.task_path or "") or [""]
    out = []
    for depth, segment in enumerate(segments):
        node, _, task_id = segment.partition(":")
        if not task_id:
            raise NotReplayableError(f"step {step.index} has no LangGraph task id; it cannot be located")
        out.append(("|".join(segments[:depth]), node, task_id))
    return out


def _by_message(index: HistoryIndex, step: Step) -> int | None:
    """The checkpoint before the one that first holds the step's message.

    LangGraph derives task ids from the checkpoint namespace too, so an inner agent's history read as a top level
    (:mod:`ariadne_lc.replay._own`) lists other task ids than the recorder saw; the step's message still tells where
    it was written."""
    first = index.first_with.get(step.message_id) if step.message_id else None
    return None if first is None else index.index_of(index.entries[first].parent_id)


def _find(index: HistoryIndex, task_id: str, step: Step) -> int | None:
    """The entry of the checkpoint before the task (``None``: not in the index)."""
    i = next((i for i, e in enumerate(index.entries) if task_id in e.tasks), None)
    return _by_message(index, step) if i is None else i


def _before(index: HistoryIndex, task_id: str, step: Step, ns: str) -> int:
    i = _find(index, task_id, step)
    if i is not None:
        return i
    if ns:
        raise SubgraphNotReplayableError(
            f"step {step.index} ran inside the subgraph {ns!r}, which has no checkpoint before it: the subgraph "
            "was compiled with checkpointer=False (LangGraph keeps no history for it), or its history was pruned. "
            "Compile subgraphs without a checkpointer argument so that they share the parent's"
        )
    if not index.entries:
        hint = (
            "the thread has no checkpoints at all: it was deleted (checkpointer.delete_thread), or the graph's "
            "checkpointer is not the one the trace was recorded with (another database, another saver)"
        )
    elif len(index.entries) == 1:
        hint = (
            "the thread keeps a single checkpoint: was the graph run with durability='exit'? "
            "Time travel needs 'async' or 'sync' durability"
        )
    else:
        hint = "the thread's history no longer holds it (pruned, or a different checkpointer)"
    raise NotReplayableError(
        f"no checkpoint of thread {step.checkpoint.thread_id!r} precedes step {step.index} (task {task_id}); {hint}"
    )


def _written(graph: Any, index: HistoryIndex, before: Before, step: Step) -> Flow[AIMessage]:
    """The step's own message, from the checkpoint its node wrote (the child of ``before``): where the saver kept no
    write of the step's task."""
    before_id = before.config["configurable"]["checkpoint_id"]
    after = next((e for e in reversed(index.entries) if e.parent_id == before_id), None)
    if after is None:
        raise NotReplayableError(f"the checkpoint written by step {step.index} is missing from the history")
    written_by = yield _ops.snapshot(graph, after.config)
    known = {m.id for m in before.values.get("messages", ())}
    written = [m for m in written_by.values.get("messages", ()) if isinstance(m, AIMessage) and m.id not in known]
    original = next((m for m in written if m.id == step.message_id), written[0] if written else None)
    if original is None:
        raise NotReplayableError(f"step {step.index}'s message is not in the checkpoint it wrote")
    return original


def _messages_in(value: Any) -> list[Any]:
    """What a node's ``messages`` update holds: one message or a list."""
    return list(value) if isinstance(value, list | tuple) else [value]


def _in_writes(level: Level, step: Step) -> AIMessage | None:
    """The step's own message among its task's writes."""
    known = {m.id for m in level.before.values.get("messages", ())}
    written = [
        m
        for channel, value in level.own_writes
        if channel == "messages"
        for m in _messages_in(value)
        if isinstance(m, AIMessage) and m.id not in known
    ]
    return next((m for m in written if m.id == step.message_id), written[0] if written else None)


def _whole_values(saver: Any, saved: Any, channels: Mapping[str, Any]) -> Flow[dict[str, Any]]:
    """The checkpoint of the raw tuple ``saved`` with every channel it rebuilds from its ancestors' writes whole."""
    checkpoint: dict[str, Any] = saved.checkpoint
    names = _rebuilt(channels, checkpoint)
    if names:
        whole = yield from _whole(saver, saved.config, channels, names)
        checkpoint = {**checkpoint, "channel_values": {**checkpoint["channel_values"], **whole}}
    return checkpoint


def _by_superstep(saver: Any, thread: str, ns: str, step: Step, task_id: str) -> Flow[Any]:
    """The raw checkpoint before ``step``, found without the thread's history: LangGraph ran the step's task in
    superstep s from the checkpoint it saved after superstep s - 1 (checkpoint metadata ``step``); of the thread's
    checkpoints of that superstep (a thread forked by time travel has several), the one whose pending writes hold the
    task's (or the step's message). ``None``: none does (a saver that keeps no writes), and the history decides."""
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    candidates = yield _ops.checkpoints(saver, config, {"step": int(step.langgraph_step or 0) - 1})
    for candidate in candidates:
        writes = candidate.pending_writes or ()
        if any(task == task_id for task, _, _ in writes):
            return candidate
        written = (
            getattr(m, "id", None) for _, channel, value in writes if channel == "messages" for m in _messages_in(value)
        )
        if step.message_id and step.message_id in written:
            return candidate
    return None


def relative(ns: str, cut: int) -> str:
    """``ns`` without its first ``cut`` segments: the namespace in the graph that runs at depth ``cut``."""
    return "|".join(levels_of(ns)[cut:])


def locate(
    graph: Any,
    step: Step,
    tool_node_of: Callable[[str], str | None],
    channels_of: Callable[[str], Mapping[str, Any]],
    histories: Histories,
) -> Flow[tuple[list[Level], AIMessage]]:
    """The levels down to ``step`` and the step's original message (production history only read).

    ``tool_node_of`` gives a level's (namespace's) tool node, to refuse a step taken inside
    a graph that a tool called (the replay never runs tool nodes, so it cannot re-enter one; an agent's own run
    inside a tool is replayed on its own graph instead: :mod:`ariadne_lc.replay._own`); ``channels_of`` its channels.
    The step's own level is found by its superstep (:func:`_by_superstep`: no history read); a level above it, or a
    step the saver kept no writes of, through ``histories``, each thread's index of checkpoints
    (:mod:`ariadne_lc.replay._history`, read once per thread). Each level's checkpoint is read once, raw (its pending
    writes hold the step's message: the checkpoint the step wrote is read only when the saver kept no writes).
    """
    thread = str(step.checkpoint.thread_id)
    saver = graph.checkpointer
    levels: list[Level] = []
    path = path_of(step)
    for depth, (ns, node, task_id) in enumerate(path):
        if depth + 1 < len(path) and node == tool_node_of(ns):
            raise SubgraphNotReplayableError(
                f"step {step.index} ran inside a graph called by a tool of node {node!r} ({ns or 'top level'}): "
                "replays answer tool calls from the recording instead of running the tool node, so they cannot "
                "re-enter it. Audit the inner agent's own runs (record it with its own thread)"
            )
        index: HistoryIndex | None = None
        saved = None
        if depth + 1 == len(path) and step.langgraph_step is not None:  # the step's own superstep: no history
            saved = yield from _by_superstep(saver, thread, ns, step, task_id)
        if saved is None:
            index = yield from histories.index(graph, thread, ns)
            i = _find(index, task_id, step)
            saved = None if i is None else (yield _ops.checkpoint_tuple(saver, index.entries[i].config))
        if saved is None:  # an index read earlier no longer answers: the thread went on, or was deleted
            index = yield from histories.index(graph, thread, ns, fresh=True)
            i = _before(index, task_id, step, ns)
            saved = yield _ops.checkpoint_tuple(saver, index.entries[i].config)
            if saved is None:
                raise NotReplayableError(f"checkpoint {index.entries[i].config['configurable']} vanished")
        checkpoint = yield from _whole_values(saver, saved, channels_of(ns))
        level = _level(ns, node, task_id, saved, checkpoint)
        if "messages" not in level.before.values:
            raise NotReplayableError(
                f"the graph state at {ns or 'the top level'!r} has no 'messages' channel; "
                "only message-based agents replay"
            )
        levels.append(level)
        if depth + 1 == len(path):
            original = _in_writes(level, step)
            if original is None:
                if index is None:
                    index = yield from histories.index(graph, thread, ns)
                original = yield from _written(graph, index, level.before, step)
            return levels, original
    raise NotReplayableError(f"step {step.index} has no task path; it cannot be located")


def _level(ns: str, node: str, task_id: str, saved: Any, checkpoint: dict[str, Any]) -> Level:
    writes: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    own: list[tuple[str, Any]] = []
    for task, channel, value in saved.pending_writes or ():
        if task == task_id:
            own.append((channel, value))
        else:
            writes[task].append((channel, value))
    config = {"configurable": {**saved.config["configurable"], "checkpoint_ns": ns}}
    return Level(
        ns=ns,
        node=node,
        task_id=task_id,
        before=Before(values=checkpoint["channel_values"], config=config),
        saved=Saved(checkpoint=checkpoint, metadata=saved.metadata, writes=dict(writes)),
        own_writes=tuple(own),
    )


def _rebuilt(channels: Mapping[str, Any], checkpoint: Any) -> list[str]:
    """The channels whose value ``checkpoint`` does not store but rebuilds from its ancestors' writes."""
    stored = checkpoint["channel_values"]
    return [
        name
        for name, spec in channels.items()
        if isinstance(spec, DeltaChannel | BinaryOperatorAggregate)
        and name in checkpoint["channel_versions"]
        and name not in stored
    ]


def _whole(saver: Any, config: dict[str, Any], channels: Mapping[str, Any], names: list[str]) -> Flow[dict[str, Any]]:
    """The values of ``names`` at the checkpoint ``config`` names, rebuilt from the saver's history of writes, as
    LangGraph's own loader does."""
    values: dict[str, Any] = {}
    history = yield _ops.delta_history(saver, config, names)
    for name in names:
        entry = history.get(name, {})
        channel = channels[name].from_checkpoint(entry.get("seed"))
        writes = entry.get("writes", ())
        if isinstance(channel, DeltaChannel):
            channel.replay_writes(writes)
        else:
            for _, _, value in writes:
                channel.update([value])
        if channel.is_available():
            values[name] = channel.get()
    return values


@dataclass(frozen=True, slots=True)
class StateEdit:
    """What a copy changes in the state it copies, at every level that holds it: the one thing a replay changes when
    it is not a step's own message (what an agent handed back, a to-do list a tool wrote)."""

    messages: Mapping[str, BaseMessage] = field(default_factory=dict)
    """Message id -> the message that takes its place."""
    channels: Mapping[str, Any] = field(default_factory=dict)
    """Channel -> its new value, where the level's graph has that channel."""

    def apply(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(values)
        messages = out.get("messages")
        if self.messages and isinstance(messages, list):
            out["messages"] = [self.messages.get(getattr(m, "id", None) or "", m) for m in messages]
        out.update({name: value for name, value in self.channels.items() if name in out})
        return out


def _put(iso_saver: Any, level: Level, thread: str, edit: StateEdit | None) -> None:
    target = {"configurable": {"thread_id": thread, "checkpoint_ns": level.ns}}
    checkpoint = level.saved.checkpoint
    if edit is not None:
        checkpoint = {**checkpoint, "channel_values": edit.apply(checkpoint["channel_values"])}
    iso_saver.put(target, checkpoint, level.saved.metadata, dict(checkpoint["channel_versions"]))
    at = {"configurable": {**target["configurable"], "checkpoint_id": checkpoint["id"]}}
    for task_id, task_writes in level.saved.writes.items():
        iso_saver.put_writes(at, task_writes, task_id)


class Forks:
    """The forks of the steps audited lately, each read from the production checkpointer once and shared by every
    replay of its step (a step is audited on several links, with several contradictions and controls).

    Thread-safe (a batch audits from several threads). A kept fork is never stale: LangGraph never changes a
    checkpoint once written (a thread that goes on adds checkpoints, with new ids and new task ids), and what a
    replay writes goes to its own saver, through copies (:mod:`~ariadne_lc.replay._saver`).
    """

    def __init__(self, kept: int = FORKS_KEPT) -> None:
        self.histories = Histories()
        self._located: Lru[tuple[str, str, str], tuple[tuple[Level, ...], AIMessage]] = Lru(kept)

    def locate(
        self,
        graph: Any,
        step: Step,
        tool_node_of: Callable[[str], str | None],
        channels_of: Callable[[str], Mapping[str, Any]],
    ) -> Flow[tuple[list[Level], AIMessage]]:
        """:func:`locate`, once per step."""
        key = (str(step.checkpoint.thread_id), step.checkpoint.task_path or "", step.message_id or "")
        found = self._located.get(key)
        if found is None:
            levels, original = yield from locate(graph, step, tool_node_of, channels_of, self.histories)
            found = self._located.put(key, (tuple(levels), original))
        return list(found[0]), found[1]


def copy_levels(levels: Sequence[Level], iso_saver: Any, thread: str, *, edit: StateEdit | None = None) -> None:
    """Copy each level's checkpoint before its task into ``thread`` of ``iso_saver`` (see the module docstring);
    ``edit``: what the copy changes."""
    for level in levels:
        _put(iso_saver, level, thread, edit)
