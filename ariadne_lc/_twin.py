"""Write a control flow once, run it synchronously or asynchronously.

The sync and async versions of an audit, a critic or a judge differ only where they call a model or a
graph: ``invoke`` or ``await ainvoke``. So the flow is written once, as a generator that yields a
:class:`Call` at each such point (the blocking call and its awaitable twin) and receives the call's
result, or has the call's exception raised at the ``yield``, exactly as if it had made the call itself
(``try``/``except`` and ``with`` blocks around a ``yield`` work as usual; ``yield from`` composes
flows). :func:`run_sync` drives a flow by calling, :func:`run_async` by awaiting; neither adds
threads, tasks or context switches of its own.

Examples:
    >>> def flow() -> Flow[int]:
    ...     x = yield Call(lambda: 20, _answer(20))
    ...     return x + 1
    >>> run_sync(flow())
    21
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Call", "Flow", "run_async", "run_sync"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One point where the sync and async flows differ: the same call, blocking or awaitable."""

    sync: Callable[[], T]
    """Makes the call and returns its result."""
    async_: Callable[[], Awaitable[T]]
    """Makes the same call on the running event loop."""


Flow = Generator[Call[Any], Any, R]
"""A flow that yields calls and returns an ``R``."""


def run_sync(flow: Flow[R]) -> R:
    """Run ``flow`` on this thread, making each call it yields."""
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                call = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as stop:
                result: R = stop.value
                return result
            try:
                value, error = call.sync(), None
            except Exception as exc:
                value, error = None, exc
    finally:
        flow.close()


async def run_async(flow: Flow[R]) -> R:
    """Run ``flow`` on the running event loop, awaiting each call it yields."""
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                call = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as stop:
                result: R = stop.value
                return result
            try:
                value, error = await call.async_(), None
            except Exception as exc:
                value, error = None, exc
    finally:
        flow.close()


def _answer(value: T) -> Callable[[], Awaitable[T]]:
    async def answer() -> T:
        return value

    return answer
