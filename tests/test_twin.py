"""One flow, two drivers: run_sync and run_async see the same results, errors and clean-up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from ariadne_lc._twin import Call, Flow, run_async, run_sync


def _calls(log: list[str]) -> Callable[[str, int], Call[int]]:
    def call(name: str, value: int) -> Call[int]:
        def sync() -> int:
            log.append(f"sync {name}")
            if value < 0:
                raise ValueError(name)
            return value

        async def later() -> int:
            await asyncio.sleep(0)
            log.append(f"async {name}")
            if value < 0:
                raise ValueError(name)
            return value

        return Call(sync, later)

    return call


def _flow(call: Callable[[str, int], Call[int]], cleanup: list[str]) -> Flow[int]:
    try:
        a = yield call("a", 2)
        try:
            yield call("bad", -1)
        except ValueError as exc:  # the call's exception is raised at the yield
            b = yield call(f"after {exc}", 3)
        sub = yield from _sub(call)
        return a * b + sub
    finally:
        cleanup.append("closed")


def _sub(call: Callable[[str, int], Call[int]]) -> Flow[int]:
    x = yield call("sub", 10)
    return x


def test_sync_and_async_drivers_agree() -> None:
    sync_log: list[str] = []
    async_log: list[str] = []
    cleanup: list[str] = []
    assert run_sync(_flow(_calls(sync_log), cleanup)) == 16
    assert asyncio.run(run_async(_flow(_calls(async_log), cleanup))) == 16
    assert sync_log == ["sync a", "sync bad", "sync after bad", "sync sub"]
    assert async_log == [entry.replace("sync", "async") for entry in sync_log]
    assert cleanup == ["closed", "closed"]


def _unhandled(call: Callable[[str, int], Call[int]], cleanup: list[str]) -> Flow[int]:
    try:
        yield call("bad", -1)
        return 0
    finally:
        cleanup.append("closed")


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_unhandled_error_propagates_after_clean_up(driver: str) -> None:
    cleanup: list[str] = []
    flow = _unhandled(_calls([]), cleanup)
    with pytest.raises(ValueError, match="bad"):
        run_sync(flow) if driver == "sync" else asyncio.run(run_async(flow))
    assert cleanup == ["closed"]


def test_cancelling_the_async_driver_closes_the_flow() -> None:
    cleanup: list[str] = []
    started = asyncio.Event()

    async def forever() -> int:
        started.set()
        await asyncio.sleep(3600)
        return 0

    def flow() -> Flow[int]:
        try:
            value: int = yield Call(lambda: 0, forever)
            return value
        finally:
            cleanup.append("closed")

    async def main() -> None:
        task = asyncio.create_task(run_async(flow()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleanup == ["closed"]


def test_a_call_is_awaited_only_by_the_async_driver() -> None:
    awaited: list[Awaitable[int]] = []

    def never_awaited() -> Awaitable[int]:
        raise AssertionError("the sync driver must not start the async twin")

    def flow() -> Flow[int]:
        value: int = yield Call(lambda: 5, never_awaited)
        return value

    assert run_sync(flow()) == 5 and awaited == []
