"""How exported rows look to other tools, the one definition for `export` and the dashboard's downloads.

Timestamps are UTC to the microsecond (nanoseconds round to the nearest one): in CSV as ISO 8601 text with a `Z`
(`2026-11-20T13:45:07.120000Z`), in Parquet as timestamps with time zone UTC
(pandas reads `datetime64[us, UTC]`, DuckDB `TIMESTAMP WITH TIME ZONE`).
Dates stay dates (`2026-11-20`); numbers and booleans keep their types.

CSV is opened by spreadsheets, which run a cell that begins like a formula. So a text cell whose first character
is one of `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'`, which makes a spreadsheet show it as text
(OWASP, CSV Injection: https://owasp.org/www-community/attacks/CSV_Injection), unless the whole cell is a plain
number (`-3.5`, `+1`, `-2e3`): `=1+1` is written `'=1+1`, `-2+3` `'-2+3`, `-3.5` stays `-3.5`. Columns that are
not text (numbers, booleans, dates, timestamps) are never touched. Every cell holding a separator, a quote, a
carriage return or a line feed is quoted, so no value starts a cell or a row of its own. `export --raw-csv`
writes text cells untouched, for programs rather than people (still quoted as CSV needs). Parquet keeps every
value as it is: its readers are programs.
"""

from __future__ import annotations

import re

from warehouse.sql import sql_literal

FORMATS = ("csv", "parquet")
CSV_TIMESTAMP = "%Y-%m-%dT%H:%M:%S.%fZ"  # the same directives in DuckDB's strftime and Python's
FORMULA_FIRST = "=+-@\t\r"  # OWASP's list: a cell beginning with one of these may run as a formula
NUMBER = r"[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?"  # a plain number: left as it is
TEXT_MARK = "'"
FORMULA_START = r"^[=+\-@\t\r]"  # the same characters, as a pattern both Python's re and DuckDB's RE2 read
_NUMBER = re.compile(NUMBER)
_FORMULA_START = re.compile(FORMULA_START)


def neutralise(value: str) -> str:
    """A text cell as CSV writes it for spreadsheets (see the module's note)."""
    if _FORMULA_START.match(value) and not _NUMBER.fullmatch(value):
        return TEXT_MARK + value
    return value


def neutralise_sql(expression: str) -> str:
    """The same, as DuckDB SQL over a text expression (NULL stays NULL)."""
    return (
        f"case when regexp_matches({expression}, {sql_literal(FORMULA_START)}) "
        f"and not regexp_full_match({expression}, {sql_literal(NUMBER)}) then {sql_literal(TEXT_MARK)} || {expression} "
        f"else {expression} end"
    )
