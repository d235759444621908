"""The independent oracles of the statistics tests: statsmodels' Wilson interval and two-proportion z-test,
and the rounding the marts publish with (tests/dbt/test_statistics_oracle.py, tests/dbt/test_marts_feedback.py)."""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest


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


def newcombe_oracle(x1: float, n1: float, x2: float, n2: float) -> tuple[float, float]:
    """statsmodels' Newcombe hybrid score interval of p1 - p2 (`method="newcomb"`), clamped to -1..1 as the marts."""
    low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
    return max(-1.0, float(low)), min(1.0, float(high))


def dimension_change_oracle(
    events: Iterable[Mapping[str, Any]],
    as_of: dt.datetime,
    window_days: int,
    min_invocations: int,
) -> dict[tuple[str, str], dict[str, Any]]:
    """skill_dimension_changes recomputed with statsmodels from events (skill_id, invoked_at or None,
    dimension_hint, is_event: a correction or a partial): per skill and dimension with an event in either
    window, the rates over every invocation of the skill, the change with Newcombe's interval, the pooled z-test
    when both windows hold min_invocations, Benjamini-Hochberg over every tested cell; rounded as the marts."""
    window = dt.timedelta(days=window_days)
    invocations: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for event in events:
        invoked_at = event["invoked_at"]
        if invoked_at is None or not as_of - 2 * window <= invoked_at <= as_of:
            continue
        slot = 0 if invoked_at >= as_of - window else 1
        invocations[event["skill_id"]][slot] += 1
        if event["is_event"] and event["dimension_hint"] is not None:
            cells[(event["skill_id"], event["dimension_hint"])][slot] += 1
    expected: dict[tuple[str, str], dict[str, Any]] = {}
    p_values: dict[tuple[str, str], float] = {}
    for key, (recent_events, prior_events) in cells.items():
        recent_n, prior_n = invocations[key[0]]
        row: dict[str, Any] = {"recent_invocations": recent_n, "prior_invocations": prior_n}
        row |= {"recent_events": recent_events, "prior_events": prior_events}
        recent_rate = recent_events / recent_n if recent_n else None
        prior_rate = prior_events / prior_n if prior_n else None
        row["recent_rate"] = None if recent_rate is None else round_like_the_marts(recent_rate)
        row["prior_rate"] = None if prior_rate is None else round_like_the_marts(prior_rate)
        row["rate_change"] = row["rate_change_ci_low"] = row["rate_change_ci_high"] = None
        if recent_rate is not None and prior_rate is not None:
            low, high = newcombe_oracle(recent_events, recent_n, prior_events, prior_n)
            row["rate_change"] = round_like_the_marts(recent_rate - prior_rate)
            row["rate_change_ci_low"], row["rate_change_ci_high"] = (
                round_like_the_marts(low),
                round_like_the_marts(high),
            )
        test = None
        if recent_n >= min_invocations and prior_n >= min_invocations:
            test = z_test_oracle(recent_events, recent_n, prior_events, prior_n)
        if test is not None:
            p_values[key] = test[1]
        expected[key] = row
    family = sorted(p_values)
    q_values = multipletests([p_values[key] for key in family], method="fdr_bh")[1] if family else []
    for key, q_value in zip(family, q_values, strict=True):
        expected[key]["p_value"] = round_like_the_marts(p_values[key])
        expected[key]["q_value"] = round_like_the_marts(float(q_value))
    for row in expected.values():
        row.setdefault("p_value", None)
        row.setdefault("q_value", None)
        row["is_significant"] = row["q_value"] is not None and row["q_value"] <= 0.05
        row["is_significant_worsening"] = row["is_significant"] and row["rate_change"] > 0
    return expected
