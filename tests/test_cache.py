"""The bounded LRU map the audit caches share between a batch's threads (ariadne_lc._cache)."""

from __future__ import annotations

import threading

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc._cache import Lru
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


def test_a_batch_audited_by_many_threads_with_the_derived_action_cache_at_its_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("ariadne_lc.audit._run.DERIVED_CACHE_SIZE", 2)  # evicting all the time
    store = InMemoryTraceStore()
    graph = create_agent(
        lookup_model(4), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)]
    )
    for run in range(8):
        graph.invoke({"messages": [("user", lookup_question(4, run))]}, {"configurable": {"thread_id": f"t{run}"}})
    traces = store.list_traces()
    alone = Auditor(graph).audit_batch(traces, max_concurrency=1).results
    together = Auditor(graph).audit_batch(traces, max_concurrency=8).results
    assert not [r for r in together if r.status == "failed"]
    assert sorted((r.trace_id, r.plan_key, r.label) for r in together) == sorted(
        (r.trace_id, r.plan_key, r.label) for r in alone
    )
