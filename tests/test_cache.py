"""The bounded LRU map the audit caches share between a batch's threads (ariadne_lc._cache)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc._cache import Lru
from ariadne_lc._twin import Call, run_async, run_sync
from ariadne_lc.interventions.implied import CachedReader, ImpliedAnswer, RuleReader
from ariadne_lc.testing import lookup, lookup_model, lookup_question


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)
    with pytest.raises(ValueError, match="at least 1"):
        Lru(0)


def test_many_threads_at_the_size_limit_never_break_it() -> None:
    cache: Lru[int, int] = Lru(8)
    errors: list[BaseException] = []

    def hammer(offset: int) -> None:
        try:
            for i in range(5_000):
                cache.put(offset + i % 50, i)
                cache.get(offset + (i * 7) % 50)
        except BaseException as exc:  # any error in a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(k * 100,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) == 8


async def _never() -> int:
    raise AssertionError("a blocking caller never awaits")


def _never_sync() -> int:
    raise AssertionError("an awaiting caller never blocks")


def _at_once(n: int, work: Callable[[int], object]) -> list[object]:
    """``work(i)`` for i < n, each on its own thread, all released together; their results, or the first error."""
    start, results, errors = threading.Barrier(n), [None] * n, []

    def one(i: int) -> None:
        try:
            start.wait()
            results[i] = work(i)
        except BaseException as exc:  # any error in a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    return results


def test_a_value_asked_for_by_many_threads_at_once_is_made_once() -> None:
    cache: Lru[str, int] = Lru(4)
    made: list[int] = []

    def make() -> int:
        made.append(1)
        time.sleep(0.05)  # long enough that every other thread asks while it is being made
        return 42

    got = _at_once(8, lambda i: run_sync(cache.get_or_make("k", Call(make, _never))))
    assert len(made) == 1 and sorted(got) == [(42, False), *[(42, True)] * 7]  # type: ignore[type-var]


def test_a_maker_that_fails_lets_a_waiter_make_the_value() -> None:
    cache: Lru[str, int] = Lru(4)
    calls: list[int] = []

    def make() -> int:
        calls.append(1)
        time.sleep(0.05)
        if len(calls) == 1:
            raise RuntimeError("the first maker fails")
        return 7

    got = _at_once(4, lambda i: _or_error(lambda: run_sync(cache.get_or_make("k", Call(make, _never)))))
    assert len(calls) == 2 and sorted(map(str, got)) == [
        "(7, False)",
        "(7, True)",
        "(7, True)",
        "the first maker fails",
    ]


def _or_error(work: Callable[[], object]) -> object:
    try:
        return work()
    except RuntimeError as exc:
        return str(exc)


def test_coroutines_on_one_loop_and_on_other_threads_wait_for_one_maker() -> None:
    cache: Lru[str, int] = Lru(4)
    made: list[int] = []

    async def make() -> int:
        made.append(1)
        await asyncio.sleep(0.05)
        return 5

    async def many() -> list[tuple[int, bool]]:
        return list(
            await asyncio.gather(*[run_async(cache.get_or_make("k", Call(_never_sync, make))) for _ in range(5)])
        )

    per_thread = _at_once(3, lambda i: asyncio.run(many()))  # three loops, five coroutines each
    flat = [r for rs in per_thread for r in rs]  # type: ignore[attr-defined]
    assert len(made) == 1 and flat.count((5, False)) == 1 and flat.count((5, True)) == 14


def test_a_cached_reader_read_by_many_threads_at_once_reads_once() -> None:
    class SlowReader(RuleReader):
        reads = 0

        def read(self, query: str, thought: str) -> ImpliedAnswer:
            SlowReader.reads += 1
            time.sleep(0.05)
            return super().read(query, thought)

    reader = CachedReader(SlowReader())
    got = _at_once(6, lambda i: reader.read("What is 6 times 7?", "6 times 7 is 42, so the answer is 42."))
    assert SlowReader.reads == 1 and reader.misses == 1 and reader.hits == 5 and len(set(map(repr, got))) == 1


def test_a_batch_audited_by_many_threads_with_the_derived_action_cache_at_its_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("ariadne_lc.audit._run.DERIVED_CACHE_SIZE", 2)  # evicting all the time
    store = InMemoryTraceStore()
    graph = create_agent(lookup_model(4), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    for run in range(8):
        graph.invoke({"messages": [("user", lookup_question(4, run))]}, {"configurable": {"thread_id": f"t{run}"}})
    traces = store.list_traces()
    alone = Auditor(graph).audit_batch(traces, max_concurrency=1).results
    together = Auditor(graph).audit_batch(traces, max_concurrency=8).results
    assert not [r for r in together if r.status == "failed"]
    assert sorted((r.trace_id, r.plan_key, r.label) for r in together) == sorted(
        (r.trace_id, r.plan_key, r.label) for r in alone
    )
