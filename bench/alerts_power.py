"""Benchmark: does the default statistical alert rule stay quiet on noise and find a real worsening?

A simulation of the nightly evaluation of `skill_correction_rate_up` (seeds/alert_rules.csv: its
recent_days, baseline_days, significance_level, sustain and min_n are read from the seed), as
docs/alerts.md defines it:

- SUBJECTS = 30 skills + 6 agent configs; each has Poisson(200 / 7) invocations a day, each a correction
  with probability p0 (the base rate: the same for every subject, or `mixed`: the worsening skill at 0.10
  and the others spread over 0.05..0.20; outcomes are 0/1, no partials);
- every night, per subject, the recent window (the recent_days days ending that night) against the
  baseline window (the baseline_days days before it): the one-sided pooled two-proportion z-test in the bad
  direction (statsmodels' `proportions_ztest(..., alternative="larger")`), Benjamini-Hochberg across every
  test of the night (`multipletests(method="fdr_bh")`, the 36 subjects); a subject breaches when
  q <= significance_level and both windows have at least min_n; an alert fires on the sustain-th
  consecutive breach and resolves on the first clear night (too small a window neither counts nor
  resolves);
- stable data: --nights nightly runs after a warm-up that fills the windows; false alarms = new firing
  episodes, per 30 nights (all subjects together);
- a worsening: from one night on, one skill's rate is p0 + 0.10 (its invocations of that night and later);
  night 1 is the first run whose recent window holds worse data; the share of simulations whose alert
  fires by night 7, and the median night it fires (undetected within HORIZON nights counts as later).

Beside it, on the same simulated counts, the plain threshold rule the observability tools offer: the
recent window's average above a bar, firing on the first window above it (no test, no sustain), resolving
when below: the bar is the subject's own baseline-window average + 5 percentage points ("threshold +5 pp"),
and, as the threshold rule at its best, + the smallest margin (0.5 pp steps) whose false alarms on the
stable runs of that base rate are at most 0.5 per 30 nights ("threshold, tuned"; tuned in-sample on the
data it is then scored on, which favours it).

    python bench/alerts_power.py [--simulations 400] [--nights 200] [--seed 20261125]
                                 [--base-rates 0.05,0.10,0.15,0.20,mixed] [--search]

The statistics are vectorised numpy; each run checks them against statsmodels on a sample of nights before
it measures (tests/bench/test_alerts_power.py does too, and against the dbt marts). Prints a Markdown table
(docs/benchmarks.md) and a JSON line. --search also scores other settings (recent_days, baseline_days,
significance_level, sustain) of the statistical rule.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "seeds" / "alert_rules.csv"
RULE_ID = "skill_correction_rate_up"
SKILLS, CONFIGS = 30, 6
SUBJECTS = SKILLS + CONFIGS
INVOCATIONS_PER_WEEK = 200
WORSENING = 0.10
WITHIN_NIGHTS = 7
HORIZON = 28
FALSE_ALARM_BUDGET = 0.5  # new episodes per 30 nights, all subjects
THRESHOLD_MARGIN = 0.05


@dataclass(frozen=True)
class Rule:
    recent_days: int
    baseline_days: int
    significance_level: float
    sustain: int
    min_n: int

    def label(self) -> str:
        return f"{self.recent_days}/{self.baseline_days}/q {self.significance_level:g}/sustain {self.sustain}"


def read_rule(path: Path = RULES, rule_id: str = RULE_ID) -> Rule:
    """The settings of one rule of the seed."""
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["rule_id"] == rule_id:
                return Rule(
                    recent_days=int(row["recent_days"]),
                    baseline_days=int(row["baseline_days"]),
                    significance_level=float(row["significance_level"]),
                    sustain=int(row["sustain"]),
                    min_n=int(row["min_n"]),
                )
    raise SystemExit(f"{path}: no rule {rule_id}")


def one_sided_p(x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """P-value of the pooled two-proportion z-test that rate 1 (recent) is above rate 2 (baseline): Q(z).
    NaN where the test is undefined (an empty window, a pooled rate of 0 or 1), as the SQL gives NULL."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (x1 + x2) / (n1 + n2)
        z = (x1 / n1 - x2 / n2) / np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    defined = (n1 > 0) & (n2 > 0) & (x1 + x2 > 0) & (x1 + x2 < n1 + n2)
    return np.where(defined, norm.sf(np.where(defined, z, 0.0)), np.nan)


def bh_q_values(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q-values along the last axis, each row one family; NaN p-values are not tests."""
    tests = np.sum(~np.isnan(p), axis=-1, keepdims=True)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    rank = np.arange(1, p.shape[-1] + 1)
    with np.errstate(invalid="ignore"):
        scaled = ranked * tests / rank
    scaled = np.where(np.isnan(scaled), np.inf, scaled)
    q_sorted = np.minimum(1.0, np.minimum.accumulate(scaled[..., ::-1], axis=-1)[..., ::-1])
    q = np.empty_like(q_sorted)
    np.put_along_axis(q, order, q_sorted, axis=-1)
    return np.where(np.isnan(p), np.nan, q)


def night_statsmodels(x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One night's (p, q) per subject, by statsmodels: the independent implementation."""
    p = np.full(len(x1), np.nan)
    for i in range(len(x1)):
        if n1[i] > 0 and n2[i] > 0 and 0 < x1[i] + x2[i] < n1[i] + n2[i]:
            p[i] = proportions_ztest([x1[i], x2[i]], [n1[i], n2[i]], alternative="larger")[1]
    q = np.full(len(x1), np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        q[tested] = multipletests(p[tested], method="fdr_bh")[1]
    return p, q


@dataclass
class Counts:
    """Daily invocations and corrections, [simulation, day, subject], and the first night evaluated."""

    trials: np.ndarray
    successes: np.ndarray
    first_night: int


def simulate(
    rng: np.random.Generator, simulations: int, days: int, base_rates: np.ndarray, change_day: int | None = None
) -> Counts:
    """Poisson(200/7) invocations a day per subject, each a correction with its subject's base rate; subject 0
    (a skill) worsens by WORSENING from change_day."""
    trials = rng.poisson(INVOCATIONS_PER_WEEK / 7, size=(simulations, days, SUBJECTS))
    rate = np.tile(base_rates, (1, days, 1)).astype(float)
    if change_day is not None:
        rate[0, change_day:, 0] += WORSENING
    return Counts(trials, rng.binomial(trials, rate), first_night=0)


def windows(values: np.ndarray, rule: Rule, nights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums over the recent window (recent_days ending on each night) and the baseline window before it."""
    cumulative = np.concatenate([np.zeros_like(values[:, :1]), np.cumsum(values, axis=1)], axis=1)
    recent = cumulative[:, nights + 1] - cumulative[:, nights + 1 - rule.recent_days]
    start = nights + 1 - rule.recent_days
    baseline = cumulative[:, start] - cumulative[:, start - rule.baseline_days]
    return recent, baseline


def evaluate(counts: Counts, rule: Rule, nights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(breach, sufficient) per [simulation, night, subject] of the statistical rule."""
    x1, x2 = windows(counts.successes, rule, nights)
    n1, n2 = windows(counts.trials, rule, nights)
    sufficient = (n1 >= rule.min_n) & (n2 >= rule.min_n)
    p = np.where(sufficient, one_sided_p(x1, n1, x2, n2), np.nan)
    q = bh_q_values(p)
    return sufficient & (q <= rule.significance_level), sufficient


def threshold_breach(counts: Counts, rule: Rule, nights: np.ndarray, margin: float) -> np.ndarray:
    """The plain rule: the recent window's average above the subject's baseline-window average + margin."""
    x1, x2 = windows(counts.successes, rule, nights)
    n1, n2 = windows(counts.trials, rule, nights)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(x1 / n1) > np.nan_to_num(x2 / n2) + margin


def episodes(breach: np.ndarray, sufficient: np.ndarray, sustain: int) -> tuple[np.ndarray, np.ndarray]:
    """(new firing episodes per [simulation, subject], the first night index each subject fired or -1)."""
    simulations, nights, subjects = breach.shape
    streak = np.zeros((simulations, subjects), dtype=np.int64)
    firing = np.zeros((simulations, subjects), dtype=bool)
    started = np.zeros((simulations, subjects), dtype=np.int64)
    first = np.full((simulations, subjects), -1)
    for night in range(nights):
        hit, seen = breach[:, night], sufficient[:, night]
        streak = np.where(seen, np.where(hit, streak + 1, 0), streak)
        fires = ~firing & seen & hit & (streak >= sustain)
        started += fires
        first = np.where(fires & (first < 0), night, first)
        firing = (firing & ~(seen & ~hit)) | fires
    return started, first


@dataclass
class Scenario:
    """One base rate's simulated data: the stable runs and the runs with a worsening."""

    base_rate: str
    stable: Counts
    stable_nights: np.ndarray
    worse: Counts
    worse_nights: np.ndarray


def subject_rates(base_rate: str) -> np.ndarray:
    """Every subject's base rate: one rate for all, or `mixed`: the worsening skill at 0.10, the other 35 spread
    evenly over 0.05..0.20 (as real skills differ; one bar then has to serve them all)."""
    if base_rate == "mixed":
        return np.concatenate([[0.10], np.linspace(0.05, 0.20, SUBJECTS - 1)])
    try:
        rate = float(base_rate)
    except ValueError:
        raise SystemExit(f"--base-rates: {base_rate!r} is neither a rate nor 'mixed'") from None
    if not 0 < rate < 1 - WORSENING:
        raise SystemExit(f"--base-rates: {base_rate} is not between 0 and {1 - WORSENING:g}")
    return np.full(SUBJECTS, rate)


def scenario(rng: np.random.Generator, base_rate: str, simulations: int, nights: int, warm_up: int) -> Scenario:
    rates = subject_rates(base_rate)
    stable = simulate(rng, simulations, warm_up + nights, rates)
    worse = simulate(rng, simulations, warm_up + HORIZON, rates, change_day=warm_up)
    return Scenario(
        base_rate, stable, np.arange(warm_up, warm_up + nights), worse, np.arange(warm_up, warm_up + HORIZON)
    )


def score(false_alarms: np.ndarray, nights: int, first: np.ndarray) -> dict:
    """False alarms per 30 nights (mean over simulations), detection by night 7, median delay in nights."""
    per_30 = false_alarms.sum(axis=1) * 30 / nights
    delay = np.where(first[:, 0] >= 0, first[:, 0] + 1, HORIZON + 1)  # night 1 = the first with worse data
    median = float(np.median(delay))
    return {
        "false_alarms_per_30_nights": round(float(per_30.mean()), 3),
        "false_alarms_se": round(float(per_30.std(ddof=1) / np.sqrt(len(per_30))), 3) if len(per_30) > 1 else 0.0,
        "detected_within_7": round(float(np.mean(delay <= WITHIN_NIGHTS)), 3),
        "median_delay_nights": median if median <= HORIZON else None,
    }


def statistical(s: Scenario, rule: Rule) -> dict:
    breach, sufficient = evaluate(s.stable, rule, s.stable_nights)
    false_alarms, _ = episodes(breach, sufficient, rule.sustain)
    breach, sufficient = evaluate(s.worse, rule, s.worse_nights)
    _, first = episodes(breach, sufficient, rule.sustain)
    return score(false_alarms, len(s.stable_nights), first)


def threshold(s: Scenario, rule: Rule, margin: float) -> dict:
    breach = threshold_breach(s.stable, rule, s.stable_nights, margin)
    false_alarms, _ = episodes(breach, np.ones_like(breach), 1)
    breach = threshold_breach(s.worse, rule, s.worse_nights, margin)
    _, first = episodes(breach, np.ones_like(breach), 1)
    return {**score(false_alarms, len(s.stable_nights), first), "margin": margin}


def tuned_threshold(s: Scenario, rule: Rule) -> dict:
    """The smallest margin (0.5 pp steps) whose false alarms are within the budget on the stable runs."""
    for margin in np.arange(0.0, 0.305, 0.005):
        breach = threshold_breach(s.stable, rule, s.stable_nights, round(float(margin), 3))
        false_alarms, _ = episodes(breach, np.ones_like(breach), 1)
        if false_alarms.sum() * 30 / breach.shape[1] / breach.shape[0] <= FALSE_ALARM_BUDGET:
            return threshold(s, rule, round(float(margin), 3))
    return threshold(s, rule, 0.3)


def check_against_statsmodels(s: Scenario, rule: Rule, samples: int = 20) -> float:
    """The vectorised p and q against statsmodels on `samples` (simulation, night) families: the largest gap."""
    x1, x2 = windows(s.worse.successes, rule, s.worse_nights)
    n1, n2 = windows(s.worse.trials, rule, s.worse_nights)
    p = one_sided_p(x1, n1, x2, n2)
    q = bh_q_values(p)
    worst = 0.0
    for sim, night in itertools.islice(itertools.product(range(p.shape[0]), range(p.shape[1])), 0, None, 7):
        if samples == 0:
            break
        samples -= 1
        p_ref, q_ref = night_statsmodels(x1[sim, night], n1[sim, night], x2[sim, night], n2[sim, night])
        worst = max(
            worst, float(np.nanmax(np.abs(p[sim, night] - p_ref))), float(np.nanmax(np.abs(q[sim, night] - q_ref)))
        )
    if worst > 1e-12:
        raise SystemExit(f"the vectorised statistics differ from statsmodels by {worst:.3g}")
    return worst


def search(scenarios: list[Scenario], seed_rule: Rule) -> list[dict]:
    """Other settings of the statistical rule, scored on the same data: those within the budget everywhere."""
    rows = []
    grid = itertools.product((7, 14), (56, 84), (0.002, 0.005, 0.01, 0.02, 0.05), (1, 2, 3))
    for recent, baseline, level, sustain in grid:
        rule = replace(seed_rule, recent_days=recent, baseline_days=baseline, significance_level=level, sustain=sustain)
        results = {s.base_rate: statistical(s, rule) for s in scenarios}
        if all(r["false_alarms_per_30_nights"] <= FALSE_ALARM_BUDGET for r in results.values()):
            rows.append({"settings": rule.label(), **{str(k): v for k, v in results.items()}})
    rows.sort(key=lambda row: -sum(v["detected_within_7"] for k, v in row.items() if k != "settings"))
    return rows


def searched(base_rate: str, result: dict) -> str:
    return (
        f"p0 {base_rate}: FA {result['false_alarms_per_30_nights']:.2f},"
        f" {result['detected_within_7']:.0%} by 7, median {result['median_delay_nights']}"
    )


def table(rows: list[dict]) -> str:
    lines = [
        "| method | base rate | false alarms per 30 nights (36 subjects)"
        " | detected within 7 nights | median delay (nights) |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        delay = row["median_delay_nights"]
        lines.append(
            f"| {row['method']} | {row['base_rate']} | {row['false_alarms_per_30_nights']:.2f}"
            f" (± {row['false_alarms_se']:.2f}) | {row['detected_within_7']:.0%} |"
            f" {f'{delay:g}' if delay is not None else f'> {HORIZON}'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=400, help="simulations per base rate and scenario")
    parser.add_argument("--nights", type=int, default=200, help="nightly runs of each stable simulation")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument(
        "--base-rates", default="0.05,0.10,0.15,0.20,mixed", help="comma-separated correction rates, or mixed"
    )
    parser.add_argument("--search", action="store_true", help="also score other settings of the statistical rule")
    args = parser.parse_args(argv)
    if args.simulations < 1 or args.nights < 1:
        raise SystemExit("--simulations and --nights must be at least 1")
    rule = read_rule()
    warm_up = max(84, rule.baseline_days) + max(14, rule.recent_days)  # room for every setting --search tries
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    scenarios = [
        scenario(rng, rate.strip(), args.simulations, args.nights, warm_up) for rate in args.base_rates.split(",")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gap = check_against_statsmodels(scenarios[0], rule)
    rows = []
    for s in scenarios:
        rows.append({"method": f"statistical rule ({rule.label()})", "base_rate": s.base_rate, **statistical(s, rule)})
        plain = threshold(s, rule, THRESHOLD_MARGIN)
        rows.append(
            {"method": f"threshold: baseline + {THRESHOLD_MARGIN * 100:g} pp", "base_rate": s.base_rate, **plain}
        )
        tuned = tuned_threshold(s, rule)
        rows.append(
            {"method": f"threshold, tuned: baseline + {tuned['margin'] * 100:g} pp", "base_rate": s.base_rate, **tuned}
        )
    print(table(rows))
    found = search(scenarios, rule) if args.search else []
    for row in found[:10]:
        print(f"\n{row['settings']}: " + "; ".join(searched(k, v) for k, v in row.items() if k != "settings"))
    summary = {
        "rule": rule.label(),
        "simulations": args.simulations,
        "nights": args.nights,
        "seed": args.seed,
        "statsmodels_gap": gap,
        "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
        "search": found,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
