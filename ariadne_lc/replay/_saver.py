"""The replay's own checkpointer: LangGraph's ``InMemorySaver`` keeping its checkpoints as objects, not bytes.

LangGraph reads the isolated thread's checkpoint wherever a replay or a re-run starts, resumes, is updated or ends.
Stock ``InMemorySaver`` serializes each checkpoint with msgpack and decodes it again on every read: the whole
conversation, message by message through pydantic, for a thread that lives a few milliseconds in one process and is
then thrown away. That decoding was a third of an audit's own time on a scripted model (when a replay still stopped
before each tool node).

:class:`KeptSerde` keeps each value as it is instead, behind copies of its containers (dicts, lists, tuples, sets):
what a read hands to LangGraph is never what the saver holds, so a superstep that updates a checkpoint's versions in
place cannot change a stored checkpoint. A write also copies each pydantic model (a message) one level deep, so that a
node changing a message it was given changes no stored checkpoint, nor the production fork the first checkpoint was
copied from (which a step's audits share); reads share the stored messages, as the supersteps of one LangGraph run
share them in memory. Leaves (strings, numbers) are immutable and shared. A replay's thread is only ever read back in
the process that wrote it, so nothing needs to survive pickling or another Python.
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

__all__ = ["KeptSerde", "replay_saver"]

_KEPT: Final = "ariadne-kept"
"""The type tag of a kept value (``InMemorySaver`` tests its blobs' tag against ``"empty"`` only)."""


def _copied(value: Any, models: bool) -> Any:
    """``value`` with every container in it copied (with ``models``, every pydantic model too, one level deep);
    other objects shared."""
    if isinstance(value, dict):
        return {k: _copied(v, models) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v, models) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # a named tuple is a record: kept whole
        return tuple(_copied(v, models) for v in value)
    if isinstance(value, set):
        return {_copied(v, models) for v in value}
    if models and isinstance(value, BaseModel):
        return value.model_copy()
    return value


class KeptSerde:
    """A LangGraph serializer that keeps values as objects (copied in and out: see the module docstring)."""

    def dumps_typed(self, obj: Any) -> tuple[str, Any]:
        return _KEPT, _copied(obj, True)

    def loads_typed(self, data: tuple[str, Any]) -> Any:
        kind, value = data
        if kind != _KEPT:  # never written by this serde: a saver shared by mistake
            raise TypeError(f"the replay's saver holds a value of type {kind!r} it did not write")
        return _copied(value, False)


def replay_saver() -> InMemorySaver:
    """A fresh saver for one replay's isolated thread (and nothing else: see the module docstring)."""
    return InMemorySaver(serde=KeptSerde())
