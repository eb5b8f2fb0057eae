"""The replay's calls to LangGraph, each as a :class:`~ariadne_lc._twin.Call` (blocking and awaitable).

The replay is one flow (:mod:`ariadne_lc.replay._drive`) that yields these calls; ``_twin.run_sync``
makes them with the blocking API, ``_twin.run_async`` with the ``a``-prefixed one (needed for
async-only savers such as ``AsyncSqliteSaver``). Nothing else knows whether it runs sync or async.
"""

from __future__ import annotations

from typing import Any

from ariadne_lc._twin import Call
from ariadne_lc.errors import ReplayError

__all__ = [
    "checkpoint_tuple", "checkpoints", "delta_history", "history", "invoke", "run_tool", "snapshot", "state",
    "update_state",
]  # fmt: skip


def history(graph: Any, config: dict[str, Any]) -> Call[list[Any]]:
    """The snapshots of one checkpoint namespace of a thread, newest first."""

    async def later() -> list[Any]:
        return [s async for s in graph.aget_state_history(config)]

    return Call(lambda: list(graph.get_state_history(config)), later)


def checkpoints(saver: Any, config: dict[str, Any], metadata: dict[str, Any]) -> Call[list[Any]]:
    """The raw checkpoint tuples of one namespace of a thread whose metadata matches ``metadata`` (the saver filters:
    only those are read), newest first."""

    async def later() -> list[Any]:
        return [t async for t in saver.alist(config, filter=metadata)]

    return Call(lambda: list(saver.list(config, filter=metadata)), later)


def checkpoint_tuple(saver: Any, config: dict[str, Any]) -> Call[Any]:
    """A raw checkpoint tuple (checkpoint, metadata, pending writes) from a saver."""
    return Call(lambda: saver.get_tuple(config), lambda: saver.aget_tuple(config))


def delta_history(saver: Any, config: dict[str, Any], channels: list[str]) -> Call[Any]:
    """The seed and the writes that rebuild ``channels`` at a checkpoint (``get_delta_channel_history``)."""
    return Call(
        lambda: saver.get_delta_channel_history(config=config, channels=channels),
        lambda: saver.aget_delta_channel_history(config=config, channels=channels),
    )


def state(graph: Any, config: dict[str, Any]) -> Call[Any]:
    """The thread's current state, with the states of pending subgraphs."""
    return Call(lambda: graph.get_state(config, subgraphs=True), lambda: graph.aget_state(config, subgraphs=True))


def snapshot(graph: Any, config: dict[str, Any]) -> Call[Any]:
    """The state at one checkpoint (``config`` names it: thread, namespace, checkpoint id)."""
    return Call(lambda: graph.get_state(config), lambda: graph.aget_state(config))


def update_state(graph: Any, config: dict[str, Any], values: Any, as_node: str | None) -> Call[Any]:
    return Call(
        lambda: graph.update_state(config, values, as_node=as_node),
        lambda: graph.aupdate_state(config, values, as_node=as_node),
    )


def _replay_error(exc: Exception) -> ReplayError:
    return ReplayError(f"the replayed graph raised {type(exc).__name__}: {exc}")


def invoke(graph: Any, input: Any, config: dict[str, Any]) -> Call[Any]:
    """Run the isolated graph on; any exception it raises becomes a :class:`ReplayError`.

    With ``durability="exit"``: the replay's thread is read back only where a run stops (an interrupt, the end), so
    the checkpoints of the supersteps between are never written (LangGraph's default writes each from a background
    thread, and waits for them when the run returns)."""

    def now() -> Any:
        try:
            return graph.invoke(input, config, durability="exit")
        except ReplayError:
            raise
        except Exception as exc:
            raise _replay_error(exc) from exc

    async def later() -> Any:
        try:
            return await graph.ainvoke(input, config, durability="exit")
        except ReplayError:
            raise
        except Exception as exc:
            raise _replay_error(exc) from exc

    return Call(now, later)


def run_tool(tool: Any, call: dict[str, Any]) -> Call[Any]:
    """Run a tool declared safe; the result is the tool's output or the exception it raised."""
    request = {**call, "type": "tool_call"}

    def now() -> Any:
        try:
            return tool.invoke(request)
        except Exception as exc:
            return exc

    async def later() -> Any:
        try:
            return await tool.ainvoke(request)
        except Exception as exc:
            return exc

    return Call(now, later)
