"""The fleet's rate limit and budget, on a real PostgreSQL database, shared by separate pools (as by
separate worker processes) and hammered from threads."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from ariadne_lc.distributed import FleetLimits, open_pool
from ariadne_lc.errors import ConfigurationError


@pytest.fixture
def pools(db: str) -> Iterator[list[Any]]:
    made = [open_pool(db, name=f"limits-{i}", max_size=4) for i in range(2)]
    yield made
    for pool in made:
        pool.close()


def test_the_rate_limit_holds_across_processes_and_threads(pools: list[Any]) -> None:
    per_minute = 6.0  # a token every 10 s, a bucket of one
    fleet = [FleetLimits(pool, name="rate", max_audits_per_minute=per_minute) for pool in pools]
    start = time.monotonic()

    def take(i: int) -> bool:
        return fleet[i % 2].acquire(f"job-{i}", 1) == 0.0

    with ThreadPoolExecutor(8) as executor:
        admitted = sum(executor.map(take, range(80)))
    elapsed = time.monotonic() - start
    assert 1 <= admitted <= 1 + math.ceil(elapsed * per_minute / 60)
    wait = fleet[0].acquire("job-late", 1)
    assert 0 < wait <= 60 / per_minute


def test_the_budget_reserves_settles_and_is_shared(pools: list[Any]) -> None:
    one, other = (FleetLimits(p, name="budget", max_model_calls_per_hour=10, initial_estimate=4) for p in pools)
    assert one.acquire("a", 1) == 0.0  # reserves 4
    assert other.acquire("b", 1) == 0.0  # reserves 4: 8 of 10
    assert one.acquire("c", 1) > 0  # 8 + 4 > 10, from either process
    assert other.acquire("c", 1) > 0
    assert one.spent() == 8
    other.settle("a", 1, 1)  # "a" really made one call; the mean of settled attempts is now 1
    assert other.spent() == 5
    assert one.acquire("c", 1) == 0.0  # 5 + 1 <= 10
    one.cancel("c", 1)
    assert one.spent() == 5


def test_limits_are_validated(pools: list[Any]) -> None:
    with pytest.raises(ConfigurationError, match="max_audits_per_minute"):
        FleetLimits(pools[0], max_audits_per_minute=0)
    with pytest.raises(ConfigurationError, match="max_model_calls_per_hour"):
        FleetLimits(pools[0], max_model_calls_per_hour=-1)
    assert FleetLimits(pools[0]).acquire("free", 1) == 0.0
