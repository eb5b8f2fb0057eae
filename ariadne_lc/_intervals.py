"""Intervals of rates and means: Wilson for a proportion (weighted for a sampled design), a cluster bootstrap for a mean
over queries. scipy is imported when the first interval is computed, so that ``import ariadne_lc`` stays light."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "BATCH",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_N_RESAMPLES",
    "DEFAULT_SEED",
    "Interval",
    "cluster_bootstrap_mean",
    "rate_and_interval",
    "weighted_mean",
    "weighted_rate",
    "wilson_interval",
]

DEFAULT_CONFIDENCE = 0.95
DEFAULT_N_RESAMPLES = 9999
"""Bootstrap resamples and permutations (the permutation test is exact below 2^13 sign patterns)."""
DEFAULT_SEED = 0

Interval = tuple[float, float]

BATCH = 1000
"""Resamples computed at once: memory stays at 1000 x queries whatever ``n_resamples`` is (results are the same)."""


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval | None:
    """The Wilson score interval of a proportion; ``None`` when there are no trials."""
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def weighted_rate(
    hits: Sequence[bool], inclusion: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, Interval] | None:
    """A rate over units sampled with unequal ``inclusion`` probabilities (docs/method.md#the-budget): each unit
    weighted by 1/inclusion (the Hajek estimator), with the Wilson interval at Kish's effective sample size
    (sum w)² / sum w². With equal probabilities this is the plain rate and its Wilson interval; ``None`` without
    units."""
    if not hits:
        return None
    from scipy.stats import norm

    weights = [1.0 / p for p in inclusion]
    total = sum(weights)
    rate = sum(w for w, hit in zip(weights, hits, strict=True) if hit) / total
    n = total * total / sum(w * w for w in weights)
    z = float(norm.ppf(0.5 + confidence / 2))
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return rate, (max(0.0, centre - half), min(1.0, centre + half))


def weighted_mean(values: Sequence[float], inclusion: Sequence[float]) -> float | None:
    """The mean of ``values`` each weighted by 1/inclusion (the Hajek estimator the rates use); ``None`` for none."""
    if not values:
        return None
    weights = [1.0 / p for p in inclusion]
    return sum(w * v for w, v in zip(weights, values, strict=True)) / sum(weights)


def rate_and_interval(
    hits: Sequence[bool], inclusion: Sequence[float], confidence: float
) -> tuple[float | None, Interval | None]:
    """The plain rate and Wilson interval when every unit had the same inclusion probability, else the weighted."""
    if len(set(inclusion)) > 1:
        found = weighted_rate(hits, inclusion, confidence)
        return (None, None) if found is None else found
    k = sum(hits)
    return (k / len(hits) if hits else None), wilson_interval(k, len(hits), confidence)


def _pooled_mean(sums: Any, counts: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.sum(sums, axis=axis) / np.sum(counts, axis=axis)


def cluster_bootstrap_mean(
    clusters: Mapping[str, Sequence[float]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = DEFAULT_SEED,
    weights: Mapping[str, Sequence[float]] | None = None,
) -> Interval | None:
    """Percentile bootstrap interval of the pooled mean, resampling clusters (queries) with replacement; with
    ``weights`` (per cluster, one per value: 1/inclusion of a sampled unit) the weighted mean, as the rates are.

    ``None`` with fewer than two non-empty clusters; the point itself when all cluster means agree.
    """
    keys = [k for k, v in clusters.items() if len(v)]
    if len(keys) < 2:
        return None
    import numpy as np
    from scipy.stats import bootstrap

    each = {k: list(weights[k]) if weights is not None else [1.0] * len(clusters[k]) for k in keys}
    sums = np.array([sum(w * x for w, x in zip(each[k], clusters[k], strict=True)) for k in keys], dtype=float)
    counts = np.array([sum(each[k]) for k in keys], dtype=float)
    means = sums / counts
    if np.allclose(means, means[0], rtol=0.0, atol=1e-12):
        return float(means[0]), float(means[0])
    result = bootstrap(
        (sums, counts),
        _pooled_mean,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        batch=BATCH,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
