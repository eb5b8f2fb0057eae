"""A bounded, thread-safe least-recently-used map: the caches a batch audit shares between its threads.

:meth:`Lru.get_or_make` computes a missing value once however many threads (or coroutines) ask for it at the same
time: the first makes it, the others wait for it. Without that, two concurrent audits of the same thought each paid
for the same model reading, and a concurrent run's model calls differed from the same run one job at a time. It is a
flow (:mod:`ariadne_lc._twin`): one definition for the blocking and the awaiting callers.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from ariadne_lc._twin import Call, Flow

__all__ = ["Lru"]

K = TypeVar("K")
V = TypeVar("V")


class _Flight:
    """A value being made: waiting threads block on ``done``, waiting coroutines await a future of their own loop."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    def wait(self) -> bool:
        """Block until the value is made; ``False`` at once on a thread running an event loop, where blocking could
        wait for a coroutine of that very loop (the caller then makes the value itself)."""
        if _on_a_loop():
            return False
        self.done.wait()
        return True

    async def finished(self) -> bool:
        """Await the value without blocking the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self.done.is_set():
                return True
            self._waiters.append((loop, future))
        await future
        return True

    def finish(self) -> None:
        """Wake every waiter."""
        with self._lock:
            self.done.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():  # a waiter whose loop has gone needs no waking
                loop.call_soon_threadsafe(_resolve, future)


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Lru(Generic[K, V]):
    """At most ``size`` entries; the least recently used goes first. Every method may be called from any thread (one
    lock, never held while a value is made)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an Lru holds at least 1 entry, got {size}")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._flights: dict[K, _Flight] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._get(key)

    def _get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def get_or_make(self, key: K, make: Call[V]) -> Flow[tuple[V, bool]]:
        """The value at ``key`` and ``True`` (a hit: found, or made meanwhile by another caller this one waited
        for), else the value ``make`` makes, kept, and ``False``; one flow for threads (:func:`~ariadne_lc._twin.
        run_sync`) and coroutines (``run_async``). A maker that raises lets the waiters try in turn."""
        while True:
            found, flight, mine = self._claim(key)
            if flight is None:
                return found, True  # type: ignore[return-value]  # a hit is never None
            if mine:
                break
            if not (yield Call(flight.wait, flight.finished)):  # a thread running an event loop never blocks on one
                return self.put(key, (yield make)), False
        try:
            return self.put(key, (yield make)), False
        finally:
            self._finished(key, flight)

    def _claim(self, key: K) -> tuple[V | None, _Flight | None, bool]:
        """(the value, ``None``, ``False``) on a hit, else the key's flight and whether this caller makes it."""
        with self._lock:
            found = self._get(key)
            if found is not None:
                return found, None, False
            flight = self._flights.get(key)
            if flight is not None:
                return None, flight, False
            flight = self._flights[key] = _Flight()
            return None, flight, True

    def _finished(self, key: K, flight: _Flight) -> None:
        with self._lock:
            del self._flights[key]
        flight.finish()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
