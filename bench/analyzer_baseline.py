"""The baseline a user has today: the analyzer's own approach to its metrics, in pure Python.

Modelled on the analyzer's scripts/metrics.py as its documentation describes
it (../shared/reference/session-feedback-analyzer.md): load feedback.jsonl
with json.loads line by line, then per skill compute the correction rate
(lookback window), the 30-day trend and the dimension hotspots.

    python bench/analyzer_baseline.py FEEDBACK_JSONL --as-of 2026-11-01
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from collections import Counter
from pathlib import Path

WEIGHTS = {"correction": 1.0, "partial": 0.5, "acceptance": 0.0}


def load_feedback_events(path: Path) -> list[dict]:
    events, seen = [], set()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            event = json.loads(line)
            if event["event_id"] in seen:
                continue
            seen.add(event["event_id"])
            event["_ts"] = dt.datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00"))
            events.append(event)
    return events


def _rate(events: list[dict]) -> float | None:
    if not events:
        return None
    return sum(WEIGHTS[e["outcome"]] for e in events) / len(events)


def compute_correction_rate(events: list[dict], skill: str, as_of: dt.datetime, lookback_days: int = 90) -> dict:
    start = as_of - dt.timedelta(days=lookback_days)
    window = [e for e in events if e["skill_id"] == skill and start <= e["_ts"] <= as_of]
    counts = Counter(e["outcome"] for e in window)
    return {
        "correction_rate": _rate(window),
        "sample_size": len(window),
        "sufficient_data": len(window) >= 5,
        "corrections": counts["correction"],
        "partials": counts["partial"],
        "acceptances": counts["acceptance"],
    }


def compute_correction_trend(events: list[dict], skill: str, as_of: dt.datetime, window_days: int = 30) -> dict:
    recent_start = as_of - dt.timedelta(days=window_days)
    prior_start = as_of - dt.timedelta(days=2 * window_days)
    mine = [e for e in events if e["skill_id"] == skill]
    recent = [e for e in mine if recent_start <= e["_ts"] <= as_of]
    prior = [e for e in mine if prior_start <= e["_ts"] < recent_start]
    recent_rate, prior_rate = _rate(recent), _rate(prior)
    if len(recent) < 5 or len(prior) < 5:
        direction, trend = "insufficient_data", None
    else:
        trend = recent_rate - prior_rate
        direction = "worsening" if trend > 0.05 else "improving" if trend < -0.05 else "stable"
    return {
        "trend": trend,
        "direction": direction,
        "recent_rate": recent_rate,
        "prior_rate": prior_rate,
        "recent_sample": len(recent),
        "prior_sample": len(prior),
    }


def compute_hotspot_dimensions(events: list[dict], skill: str, as_of: dt.datetime, lookback_days: int = 90) -> dict:
    start = as_of - dt.timedelta(days=lookback_days)
    return dict(
        Counter(
            e["dimension_hint"]
            for e in events
            if e["skill_id"] == skill
            and e["outcome"] in ("correction", "partial")
            and e.get("dimension_hint")
            and start <= e["_ts"] <= as_of
        )
    )


def compute_all_skill_metrics(events: list[dict], as_of: dt.datetime) -> dict[str, dict]:
    skills = sorted({e["skill_id"] for e in events})
    return {
        skill: {
            **compute_correction_rate(events, skill, as_of),
            "trend": compute_correction_trend(events, skill, as_of),
            "hotspots": compute_hotspot_dimensions(events, skill, as_of),
        }
        for skill in skills
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", type=Path)
    parser.add_argument("--as-of", required=True)
    args = parser.parse_args()
    as_of = dt.datetime.fromisoformat(args.as_of + "T23:59:59.999999+00:00")
    started = time.perf_counter()
    metrics = compute_all_skill_metrics(load_feedback_events(args.path), as_of)
    print(json.dumps({"skills": len(metrics), "seconds": round(time.perf_counter() - started, 2)}))


if __name__ == "__main__":
    main()
