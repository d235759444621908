"""The independent oracles of the statistics tests: statsmodels' Wilson interval and two-proportion z-test,
and the rounding the marts publish with (tests/dbt/test_statistics_oracle.py, tests/dbt/test_marts_feedback.py)."""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.proportion import proportion_confint, proportions_ztest


def round_like_the_marts(value: float) -> float:
    """DuckDB's round(value, 6), which the marts publish: half away from zero of value * 1e6, over 1e6."""
    scaled = abs(value * 1e6)
    whole = math.floor(scaled)
    return math.copysign(whole + (1 if scaled - whole >= 0.5 else 0), value) / 1e6


def wilson_oracle(successes: float, trials: float) -> tuple[float, float]:
    low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    return float(low), float(high)


def z_test_oracle(x1: float, n1: float, x2: float, n2: float) -> tuple[float, float] | None:
    """statsmodels' pooled two-sided z-test; None where it is undefined (an empty window, a pooled rate of 0 or 1)."""
    if n1 <= 0 or n2 <= 0 or not 0 < x1 + x2 < n1 + n2:
        return None
    z, p = proportions_ztest(np.array([x1, x2], dtype=float), np.array([n1, n2], dtype=float))
    return float(z), float(p)
