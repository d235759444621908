"""Words and units for numbers and codes, shared by every page and the report: one place says how a rate, a
change, a count, a p-value or a surface reads.

- A rate is a percentage (`80.9%`); a difference of two rates is in percentage points (`+3.1 pp`), never `%`.
- Counts carry thousands separators (`3,080`).
- Codes from the marts read as words (`cli_end` is "CLI /end"); unknown codes stay as they are (as text:
  dashboards/text.py escapes them where they are drawn).
- A metric whose source has no tenant (session feedback, analyzer events) or no project reads NOT_SPLIT_BY_TENANT
  (NOT_SPLIT_BY_PROJECT) in place of its number while a tenant (project) is selected: see `not_split`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

MISSING = "n/a"
NOT_SPLIT_BY_TENANT = "not split by tenant"
NOT_SPLIT_BY_PROJECT = "not split by project"

# session feedback's end-session surfaces (warehouse/contracts.py SESSION_SOURCES)
SURFACES = {"cli_end": "CLI /end", "cli_exit": "CLI /exit", "api_end": "API session end"}

# turn reactions (the reactions contract): a reaction's value and who gave it
REACTIONS = {"ok": "OK", "not_ok": "not OK", "neutral": "neutral"}
ORIGINS = {"user": "user", "machine": "machine (inferred)"}
# feedback_signals' source systems
SOURCES = {
    "session_feedback": "Session feedback",
    "turn_reactions": "Turn reactions",
    "analyzer": "Skill analyzer events",
    "workspace": "Workspace feedback",
}

P_VALUE_HELP = (
    "p-value: the chance of a change at least this large if nothing had really changed (two-proportion z-test). "
    "Small is evidence of a real change."
)


def q_value_help(level: float | None) -> str:
    """What a q-value is, at the significance level the marts were built with (var trend_significance_level, as
    marts.build_info serves it; None: a build that did not say)."""
    if level is None:
        return (
            "q-value: the p-value adjusted for testing many rows at once (Benjamini-Hochberg). A row is "
            "significant when its q-value is at or below the build's significance level."
        )
    return (
        "q-value: the p-value adjusted for testing many rows at once (Benjamini-Hochberg): among rows with q at or "
        f"below {level:g}, at most {level:.0%} are expected to be chance. A row is significant when its q-value is "
        "at or below that level."
    )


def _missing(*values: object) -> bool:
    return any(value is None or (isinstance(value, float) and math.isnan(value)) for value in values) or any(
        type(value).__name__ in {"NAType", "NaTType"} for value in values
    )


def count(value: object) -> str:
    """A count with thousands separators: 3080 -> `3,080`."""
    return MISSING if _missing(value) else f"{int(value):,}"


def percent(rate: object, digits: int = 1) -> str:
    """A rate (a fraction) as a percentage: 0.809 -> `80.9%`."""
    return MISSING if _missing(rate) else f"{float(rate):.{digits}%}"


def points(change: object, digits: int = 1) -> str:
    """A difference of two rates (fractions) in percentage points, signed: 0.031 -> `+3.1 pp`; zero is `0.0 pp`."""
    if _missing(change):
        return MISSING
    value = round(float(change) * 100, digits)
    return f"{0:.{digits}f} pp" if value == 0 else f"{value:+.{digits}f} pp"


def rate_interval(low: object, high: object) -> str:
    """A rate's interval: `78.0% to 83.1%`."""
    return MISSING if _missing(low, high) else f"{percent(low)} to {percent(high)}"


def points_interval(low: object, high: object) -> str:
    """A change's interval in percentage points: `+1.0 to +5.2 pp`."""
    if _missing(low, high):
        return MISSING
    return f"{float(low) * 100:+.1f} to {float(high) * 100:+.1f} pp"


def probability(value: object) -> str:
    """A p- or q-value: two significant digits, and below 0.0001 only that (a double underflows to 0)."""
    return MISSING if _missing(value) else ("< 0.0001" if float(value) < 1e-4 else f"{float(value):.2g}")


def dimension(code: object) -> str:
    """An analyzer dimension (seed analyzer_dimensions) in words: `trigger_quality` -> "trigger quality"."""
    return "" if code is None else str(code).replace("_", " ")


def surface(code: object) -> str:
    """An end-session surface in words (`cli_end` -> "CLI /end"); an unknown code as it is."""
    return SURFACES.get(str(code), "" if code is None else str(code))


def reaction(code: object) -> str:
    """A turn reaction's value in words (`not_ok` -> "not OK"); a machine reaction without one "no value"."""
    return "no value" if _missing(code) else REACTIONS.get(str(code), str(code))


def origin(code: object) -> str:
    """Who gave a turn reaction, in words: "user" or "machine (inferred)"; an unknown code as it is."""
    return MISSING if _missing(code) else ORIGINS.get(str(code), str(code))


def source(code: object) -> str:
    """A feedback_signals source system in words (`turn_reactions` -> "Turn reactions"); an unknown code as it is."""
    return SOURCES.get(str(code), "" if code is None else str(code))


def segment(segment_type: object, label: object, quote: Callable[[str], str] = str) -> str:
    """A segment of metric_rates_by_period in words, from its type and its segment_label: `surface` cli_end ->
    "surface CLI /end", `turn_count_bucket` 3-5 -> "sessions of 3-5 turns", `origin` user -> "user reactions",
    `skill` deslop -> "skill deslop"; an eval segment's label names its agent config, golden set and tenant.
    `quote` shows a value from upstream (a surface, modality, origin, skill, name) in its medium, e.g.
    dashboards/text.py `markdown`; the buckets and the words around are the project's own."""
    value = "" if label is None else str(label)
    kind = str(segment_type)
    if kind == "turn_count_bucket":
        return f"sessions of {value} turns"
    if kind == "surface":
        return f"surface {quote(surface(value))}"
    if kind == "modality":
        return f"{quote(value)} answers"
    if kind == "origin":
        return f"{quote(value)} reactions"
    if kind == "skill":
        return f"skill {quote(value)}"
    return quote(value)


def not_split(tenant: str | None, project: str | None) -> str | None:
    """What a metric without a tenant (and project) reads in place of its number under these filters, or None
    when no tenant or project is selected (then its all-tenant number is the right one)."""
    if tenant:
        return NOT_SPLIT_BY_TENANT
    if project:
        return NOT_SPLIT_BY_PROJECT
    return None


# -- alerts (docs/alerts.md): severities, metrics, operational readings ------------------------------------------
SEVERITY_COLOURS = {"critical": "red", "warning": "orange", "info": "blue"}  # Streamlit markdown badge colours
ALERT_METRICS = {
    "correction_rate": "Correction rate",
    "session_positive_rate": "Session positive rate",
    "reaction_satisfaction": "Reaction satisfaction",
    "eval_pass_rate": "Eval pass rate",
}


def severity_badge(severity: object) -> str:
    """An alert's severity as a Streamlit markdown badge (`:red-badge[critical]`); an unknown one in grey, as
    letters only (it comes from the seed, which an analyst edits)."""
    name = "".join(character for character in str(severity) if character.isalnum()) or "unknown"
    return f":{SEVERITY_COLOURS.get(name, 'gray')}-badge[{name}]"


def days(value: object) -> str:
    """A number of days: `1 day`, `12 days`."""
    return MISSING if _missing(value) else f"{int(value):,} {'day' if int(value) == 1 else 'days'}"


def alert_metric(code: object) -> str:
    """An alert rule's metric in words (`correction_rate` -> "Correction rate"); an unknown code as it is."""
    return ALERT_METRICS.get(str(code), "" if code is None else str(code))


def operational_reading(metric: object, value: object, threshold: object) -> str:
    """An operational alert's value against its threshold, in words (no chart has it)."""
    kind = str(metric)
    if kind == "source_silent":
        hours = MISSING if _missing(value) else f"{float(value):,.0f}"
        limit = MISSING if _missing(threshold) else f"{float(threshold):g}"
        return f"No signal for {hours} hours; the rule allows {limit} hours of silence."
    if kind == "quarantine_share":
        return f"A load quarantined {percent(value)} of the rows it read; the rule allows {percent(threshold)}."
    if kind == "nightly_failed":
        return "The latest nightly run failed a step or never finished."
    return f"Value {value} against the threshold {threshold}."
