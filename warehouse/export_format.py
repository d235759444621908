"""How exported rows look to other tools, the one definition for `export` and the dashboard's downloads.

Timestamps are UTC to the microsecond (nanoseconds round to the nearest one): in CSV as ISO 8601 text with a `Z`
(`2026-11-20T13:45:07.120000Z`), in Parquet as timestamps with time zone UTC
(pandas reads `datetime64[us, UTC]`, DuckDB `TIMESTAMP WITH TIME ZONE`).
Dates stay dates (`2026-11-20`); numbers and booleans keep their types.
"""

from __future__ import annotations

FORMATS = ("csv", "parquet")
CSV_TIMESTAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # the same directives in DuckDB's strftime and Python's
