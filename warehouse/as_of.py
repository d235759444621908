"""The report's reference instant (`--as-of`), parsed once into a UTC instant.

`build`, `purge` and `nightly` all take it from here, so the day a purge cuts
at is the day the retention views cut at, whatever offset the user typed:

- a date (`2026-11-15`) means the end of that day in UTC, 23:59:59.999999, so
  the day itself counts (as in the dbt macro `as_of_timestamp`);
- an ISO-8601 timestamp with an offset (`Z`, `+02:00`, `-05:00`) is converted
  to UTC; one without an offset is taken as UTC;
- nothing means now.

dbt receives the instant as an ISO string in UTC (`dbt_var`); the macro
`as_of_timestamp` parses any ISO-8601 form the same way, for analysts who run
`dbt build --vars '{as_of: ...}'` themselves.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

END_OF_DAY = dt.time(23, 59, 59, 999999)


class AsOfError(ValueError):
    """A value that is neither a date nor an ISO-8601 timestamp."""


@dataclass(frozen=True, order=True)
class ReportInstant:
    """One UTC instant (naive, in UTC) that every step of a run uses."""

    instant: dt.datetime

    @property
    def day(self) -> dt.date:
        """The UTC day of the instant: the day purge and the retention views count whole days from."""
        return self.instant.date()

    @property
    def dbt_var(self) -> str:
        """The instant for dbt's `as_of` var, e.g. `2026-11-16T04:30:00.000000Z`."""
        return self.instant.isoformat(timespec="microseconds") + "Z"

    def __str__(self) -> str:
        return self.instant.isoformat(sep=" ", timespec="microseconds") + " UTC"


def is_date_only(value: str) -> bool:
    """A date without a time of day (`2026-11-15`, `2026-W46-7`)."""
    text = value.strip()
    return "T" not in text.upper() and " " not in text


def parse_as_of(value: str | None, *, now: dt.datetime | None = None) -> ReportInstant:
    """Parse `--as-of` (a date, an ISO-8601 timestamp, or None for now) into one UTC instant."""
    if value is None or not value.strip():
        current = now or dt.datetime.now(dt.UTC)
        return ReportInstant(current.astimezone(dt.UTC).replace(tzinfo=None) if current.tzinfo else current)
    text = value.strip()
    try:
        if is_date_only(text):
            return ReportInstant(dt.datetime.combine(dt.date.fromisoformat(text), END_OF_DAY))
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise AsOfError(
            f"{value!r} is not a date (YYYY-MM-DD) or an ISO-8601 timestamp (e.g. 2026-11-15T12:00:00Z)"
        ) from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return ReportInstant(parsed)
