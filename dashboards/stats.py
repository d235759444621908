"""Confidence intervals for the rates the dashboard re-aggregates over a period.

The marts carry a Wilson interval per row (macro `rate_with_interval`); when a
page sums a daily mart over the selected period it recomputes the interval
from the summed counts with the same formula, and compares two periods with
Newcombe's hybrid score interval for a difference of proportions (method 10
in Newcombe 1998), which stays inside [-1, 1] and behaves at small counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

Z_95 = 1.959963984540054  # Phi^-1(0.975), as the marts' macro normal_quantile_975() (not 1.96)


@dataclass(frozen=True)
class Rate:
    """successes / trials with its 95% Wilson interval; all None when trials is 0."""

    successes: float
    trials: float
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Change:
    """current - previous with its 95% Newcombe interval; None when either rate is missing."""

    value: float | None
    low: float | None
    high: float | None

    @property
    def is_significant(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def wilson(successes: float, trials: float, z: float = Z_95) -> Rate:
    if not trials or trials <= 0:
        return Rate(successes or 0, trials or 0, None, None, None)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return Rate(successes, trials, p, max(0.0, centre - margin), min(1.0, centre + margin))


def change(current: Rate, previous: Rate) -> Change:
    if current.value is None or previous.value is None:
        return Change(None, None, None)
    assert current.low is not None and current.high is not None
    assert previous.low is not None and previous.high is not None
    difference = current.value - previous.value
    low = difference - math.sqrt((current.value - current.low) ** 2 + (previous.high - previous.value) ** 2)
    high = difference + math.sqrt((current.high - current.value) ** 2 + (previous.value - previous.low) ** 2)
    return Change(difference, max(-1.0, low), min(1.0, high))


def change_from_intervals(
    current: float | None,
    current_low: float | None,
    current_high: float | None,
    previous: float | None,
    previous_low: float | None,
    previous_high: float | None,
) -> Change:
    """Newcombe's interval from two rates that already carry their Wilson bounds (e.g. a mart's columns)."""
    values = (current, current_low, current_high, previous, previous_low, previous_high)
    if any(value is None or value != value for value in values):  # None or NaN
        return Change(None, None, None)
    return change(
        Rate(0, 1, current, current_low, current_high),
        Rate(0, 1, previous, previous_low, previous_high),
    )


def period_rates(counts: pd.DataFrame, metric: str) -> tuple[Rate, Rate]:
    """(current, previous) of one metric from rows metric, period, successes, trials."""
    rows = counts[counts["metric"] == metric].set_index("period")

    def rate(period: str) -> Rate:
        if period not in rows.index:
            return wilson(0, 0)
        return wilson(float(rows.loc[period, "successes"]), float(rows.loc[period, "trials"]))

    return rate("current"), rate("previous")


def rank_changes(counts: pd.DataFrame, min_trials: int = 20) -> pd.DataFrame:
    """Segments ranked by how much their rate moved between the periods.

    Input rows: metric, segment, successes, trials, prev_successes, prev_trials.
    Only segments with at least `min_trials` observations in both periods are
    ranked; the significant changes (95% interval of the difference excludes
    0) come first, then the largest absolute changes.
    """
    columns = ["metric", "segment", "current", "previous", "change", "change_low", "change_high", "significant", "n"]
    if counts.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for row in counts.fillna(0).itertuples(index=False):
        if row.trials < min_trials or row.prev_trials < min_trials:
            continue
        current, previous = wilson(row.successes, row.trials), wilson(row.prev_successes, row.prev_trials)
        difference = change(current, previous)
        rows.append(
            {
                "metric": row.metric,
                "segment": row.segment,
                "current": current.value,
                "previous": previous.value,
                "change": difference.value,
                "change_low": difference.low,
                "change_high": difference.high,
                "significant": difference.is_significant,
                "n": int(row.trials),
            }
        )
    ranked = pd.DataFrame(rows, columns=columns)
    if ranked.empty:
        return ranked
    ranked["magnitude"] = ranked["change"].abs()
    ranked = ranked.sort_values(["significant", "magnitude"], ascending=[False, False]).drop(columns="magnitude")
    return ranked.reset_index(drop=True)


def with_rate(frame: pd.DataFrame, successes: str, trials: str, name: str) -> pd.DataFrame:
    """A copy of frame with columns `name`, `name_ci_low`, `name_ci_high` from two count columns."""
    rates = [wilson(float(s), float(t)) for s, t in zip(frame[successes], frame[trials], strict=True)]
    result = frame.copy()
    result[name] = [rate.value for rate in rates]
    result[f"{name}_ci_low"] = [rate.low for rate in rates]
    result[f"{name}_ci_high"] = [rate.high for rate in rates]
    return result
