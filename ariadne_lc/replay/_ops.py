"""The replay's calls to LangGraph as values, so that its control flow is written once.

The replay is a generator (:mod:`ariadne_lc.replay._drive`) that yields one :class:`Op` per call to
the graph or a checkpointer and receives the call's result back. :func:`run_sync` performs each op
with the blocking API, :func:`run_async` with the ``a``-prefixed one (needed for async-only savers
such as ``AsyncSqliteSaver``). No other code knows whether it runs sync or async.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from ariadne_lc.errors import ReplayError

__all__ = ["GetState", "GetTuple", "History", "Invoke", "Op", "RunTool", "UpdateState", "run_async", "run_sync"]

T = TypeVar("T")


class Op:
    """One call; :meth:`sync` and :meth:`asynchronous` perform it."""

    def sync(self) -> Any:
        raise NotImplementedError

    async def asynchronous(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class History(Op):
    """The snapshots of one checkpoint namespace of a thread, newest first."""

    graph: Any
    config: dict[str, Any]

    def sync(self) -> list[Any]:
        return list(self.graph.get_state_history(self.config))

    async def asynchronous(self) -> list[Any]:
        return [s async for s in self.graph.aget_state_history(self.config)]


@dataclass(frozen=True, slots=True)
class GetTuple(Op):
    """A raw checkpoint tuple (checkpoint, metadata, pending writes) from a saver."""

    saver: Any
    config: dict[str, Any]

    def sync(self) -> Any:
        return self.saver.get_tuple(self.config)

    async def asynchronous(self) -> Any:
        return await self.saver.aget_tuple(self.config)


@dataclass(frozen=True, slots=True)
class GetState(Op):
    graph: Any
    config: dict[str, Any]

    def sync(self) -> Any:
        return self.graph.get_state(self.config, subgraphs=True)

    async def asynchronous(self) -> Any:
        return await self.graph.aget_state(self.config, subgraphs=True)


@dataclass(frozen=True, slots=True)
class UpdateState(Op):
    graph: Any
    config: dict[str, Any]
    values: Any
    as_node: str | None

    def sync(self) -> Any:
        return self.graph.update_state(self.config, self.values, as_node=self.as_node)

    async def asynchronous(self) -> Any:
        return await self.graph.aupdate_state(self.config, self.values, as_node=self.as_node)


@dataclass(frozen=True, slots=True)
class Invoke(Op):
    """Run the isolated graph on; any exception it raises becomes a :class:`ReplayError`."""

    graph: Any
    input: Any
    config: dict[str, Any]

    def sync(self) -> Any:
        try:
            return self.graph.invoke(self.input, self.config)
        except ReplayError:
            raise
        except Exception as exc:
            raise ReplayError(f"the replayed graph raised {type(exc).__name__}: {exc}") from exc

    async def asynchronous(self) -> Any:
        try:
            return await self.graph.ainvoke(self.input, self.config)
        except ReplayError:
            raise
        except Exception as exc:
            raise ReplayError(f"the replayed graph raised {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class RunTool(Op):
    """Run a tool declared safe; returns the tool's result or the exception it raised."""

    tool: Any
    call: dict[str, Any]

    def sync(self) -> Any:
        try:
            return self.tool.invoke({**self.call, "type": "tool_call"})
        except Exception as exc:
            return exc

    async def asynchronous(self) -> Any:
        try:
            return await self.tool.ainvoke({**self.call, "type": "tool_call"})
        except Exception as exc:
            return exc


def run_sync(flow: Generator[Op, Any, T]) -> T:
    """Drive ``flow`` with blocking calls."""
    result: Any = None
    while True:
        try:
            op = flow.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        result = op.sync()


async def run_async(flow: Generator[Op, Any, T]) -> T:
    """Drive ``flow`` with async calls."""
    result: Any = None
    while True:
        try:
            op = flow.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        result = await op.asynchronous()
