from __future__ import annotations

import math
import random
import uuid

import pytest

from ariadne_lc import ConfigurationError
from ariadne_lc.audit import DEFAULT_BUDGET, cost_bound
from ariadne_lc.online import Budget, Decision, RateLimiter, RunFilter, RunInfo, Sampler, sample_point
from tests.online.support import synthetic_trace


def _ids(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(n)]


def test_the_same_trace_always_gets_the_same_decision() -> None:
    traces = [RunInfo(i) for i in _ids(500)]
    first = [Sampler(0.3).decide(t) for t in traces]
    assert first == [Sampler(0.3).decide(t) for t in traces]
    assert all(0.0 <= sample_point(t.trace_id) < 1.0 for t in traces)
    # A higher rate keeps every trace a lower rate kept: samples nest.
    kept_low = {t.trace_id for t, d in zip(traces, first, strict=True) if d is Decision.SAMPLED}
    kept_high = {t.trace_id for t in traces if Sampler(0.6).decide(t) is Decision.SAMPLED}
    assert kept_low < kept_high


@pytest.mark.parametrize("rate", [0.01, 0.05, 0.1, 0.5, 0.9])
def test_rate_holds_within_three_sigma(rate: float) -> None:
    n = 20_000
    sampler = Sampler(rate)
    k = sum(sampler.decide(RunInfo(i)) is Decision.SAMPLED for i in _ids(n))
    assert abs(k / n - rate) <= 3 * math.sqrt(rate * (1 - rate) / n)


def test_time_ordered_ids_are_sampled_uniformly() -> None:
    # LangChain's run ids are UUIDv7: time-ordered, nearly equal prefixes. The hash must not care.
    n, rate = 20_000, 0.1
    ids = [f"01a200bb-{i:04x}-7000-8000-000000000000" for i in range(n)]
    k = sum(Sampler(rate).decide(RunInfo(i)) is Decision.SAMPLED for i in ids)
    assert abs(k / n - rate) <= 3 * math.sqrt(rate * (1 - rate) / n)


def test_rates_zero_and_one() -> None:
    traces = [RunInfo(i) for i in _ids(200)]
    assert all(Sampler(0).decide(t) is Decision.NOT_SAMPLED for t in traces)
    assert all(Sampler(1).decide(t) is Decision.SAMPLED for t in traces)


def test_filters_on_agent_tags_and_metadata() -> None:
    prod = RunInfo("a", "support", ("web",), {"environment": "production", "user_id": "u-1"})
    staging = RunInfo("b", "support", ("web",), {"environment": "staging", "user_id": "u-1"})
    qa = RunInfo("c", "support", ("web",), {"environment": "production", "user_id": "qa-1"})
    other = RunInfo("d", "billing", ("web",), {"environment": "production", "user_id": "u-1"})
    internal = RunInfo("e", "support", ("web", "internal"), {"environment": "production", "user_id": "u-1"})

    def kept(run_filter: RunFilter) -> set[str]:
        sampler = Sampler(1.0, run_filter)
        return {t.trace_id for t in (prod, staging, qa, other, internal) if sampler.decide(t) is Decision.SAMPLED}

    assert kept(RunFilter(agent_names={"support"})) == {"a", "b", "c", "e"}
    assert kept(RunFilter(agent_names="billing")) == {"d"}
    assert kept(RunFilter(metadata={"environment": "production"})) == {"a", "c", "d", "e"}
    assert kept(RunFilter(metadata={"environment": {"production", "staging"}})) == {"a", "b", "c", "d", "e"}
    assert kept(RunFilter(exclude_metadata={"user_id": ["qa-1", "qa-2"]})) == {"a", "b", "d", "e"}
    assert kept(RunFilter(tags={"internal"})) == {"e"}
    assert kept(RunFilter(exclude_tags={"internal"})) == {"a", "b", "c", "d"}
    assert kept(RunFilter(predicate=lambda t: t.trace_id in "ab")) == {"a", "b"}


def test_a_raising_predicate_means_filtered() -> None:
    def boom(_: object) -> bool:
        raise RuntimeError("bad predicate")

    assert Sampler(1.0, RunFilter(predicate=boom)).decide(RunInfo("x")) is Decision.FILTERED


def test_run_info_of_a_trace() -> None:
    trace = synthetic_trace("t", agent_name="support", tags=("web",), metadata={"user_id": "u"})
    assert RunInfo.of(trace) == RunInfo("t", "support", ("web",), {"user_id": "u"})


def test_rate_limiter_is_a_token_bucket() -> None:
    now = [0.0]
    limiter = RateLimiter(60, burst=3, clock=lambda: now[0])  # one a second, bursts of 3
    assert [limiter.try_acquire() for _ in range(5)] == [True, True, True, False, False]
    now[0] = 1.5
    assert [limiter.try_acquire() for _ in range(3)] == [True, False, False]
    limiter.refund()
    assert limiter.try_acquire()
    now[0] = 100.0
    assert sum(limiter.try_acquire() for _ in range(10)) == 3  # capped at the burst
    assert RateLimiter(600, clock=lambda: 0.0).capacity == 60  # default burst: a tenth of a minute


def test_budget_reserves_the_backlog() -> None:
    budget = Budget(10, initial_estimate=1.0)
    assert not budget.exhausted(outstanding=8)
    assert budget.exhausted(outstanding=10)  # 11 jobs x 1 call > 10
    budget.record(2)
    budget.record(2)
    assert budget.estimate == 2.0 and budget.spent == 4
    assert not budget.exhausted(outstanding=2)
    assert budget.exhausted(outstanding=3)
    budget.record(3, finished=False)  # a superseded attempt: spent, but it teaches nothing about a job
    assert budget.spent == 7 and budget.estimate == 2.0
    budget.refresh(0)  # the store's count of the last hour (fleet-wide) replaces the local sum
    assert budget.spent == 0 and not budget.exhausted(outstanding=4)
    assert budget.exhausted(outstanding=5)


def test_budget_reserves_a_built_trace_at_its_plans_cost() -> None:
    budget = Budget(250, initial_estimate=1.0)
    run_of_12_calls = cost_bound(12, DEFAULT_BUDGET)  # the plan spends at most 2 x 3 x 12 + 3 x 12 calls on it
    assert run_of_12_calls == 108
    assert not budget.exhausted(outstanding=1, cost=run_of_12_calls)  # 2 x 108 <= 250
    assert budget.exhausted(outstanding=2, cost=run_of_12_calls)  # 3 x 108 > 250: not 3 x the initial estimate
    budget.record(10)  # once a job has finished, the outstanding ones are reserved at the mean of what ran
    assert not budget.exhausted(outstanding=2, cost=run_of_12_calls)  # 10 + 2 x 10 + 108 <= 250


def test_the_rate_limit_holds_across_the_fleet() -> None:
    now = [0.0]
    limiter = RateLimiter(10, burst=10, clock=lambda: now[0])
    limiter.observe_fleet(7)  # other processes added 7 jobs in the last minute
    assert [limiter.try_acquire() for _ in range(4)] == [True, True, True, False]
    limiter.refund()
    assert limiter.try_acquire()
    limiter.observe_fleet(2)  # the next count (this process's committed jobs included)
    assert sum(limiter.try_acquire() for _ in range(20)) == 7  # 7 tokens left in the bucket, 8 under the cap


def test_bad_settings_fail_early() -> None:
    for rate in (-0.1, 1.5, "0.1", True):
        with pytest.raises(ConfigurationError, match="sample_rate"):
            Sampler(rate)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="max_audits_per_minute"):
        RateLimiter(0, clock=lambda: 0.0)
    with pytest.raises(ConfigurationError, match="burst"):
        RateLimiter(10, burst=0.5, clock=lambda: 0.0)
    with pytest.raises(ConfigurationError, match="max_model_calls_per_hour"):
        Budget(0, initial_estimate=1)
