"""The days of the incremental publish (operations/serving.py): which days of a large relation changed since the
last publish, found by their row counts and digests, and the rows of those days, found by ranges of their
timestamps. The serving file keeps each relation's day digests as published (DIGESTS), so the served side is
not read whole again."""

from __future__ import annotations

import datetime as dt
import re

import duckdb

from warehouse.sql import quote

# The day of each BY_KEY relation's rows that narrows its difference: per day, the row count and a digest of the
# rows (the XOR of their row hashes, each hashed again: `changed_days`) are compared first, a pass that groups
# into a few hundred days where the keyed comparison builds a hash table of every key; the keys are then
# compared only within the days whose count or digest differs (a night's new day, the days whose retention flags
# moved, a purged day, the day of a row corrected in place). A row whose day changed changes both days. Any
# column gives the same result; a column that dates the row keeps the changed days few.
BY_DAY: dict[str, str] = {
    "feedback_signals": "occurred_at",
    "stored_analyzer_events": "invoked_at",
    "stored_turn_reactions": "reacted_at",
    "turn_reactions_active": "reacted_at",
    "retained_session_feedback": "recorded_at",
    "retained_workspace_feedback": "created_at",
    "retained_workspace_sessions": "created_at",
    "retained_eval_runs": "started_at",
}
# Per BY_KEY relation and day, the row count and digest (changed_days) of what the serving file holds, written by
# every publish with the relations themselves: the next incremental publish reads the served side's digests here
# instead of computing them from every published row (a file without it, from before incremental-2, is published
# in full once).
DIGESTS = "serving.publish_digests"
UNDATED = dt.date(1, 1, 1)  # the day of the rows without one
# Beyond this many runs of consecutive changed days, the rows of the changed days are found by their day's
# membership in temp.publish_days (a scan of every row) instead of by ranges of their timestamps.
MAX_DAY_RANGES = 64
PLAIN_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def day_of(name: str, alias: str) -> str:
    """SQL: the day (BY_DAY) of row `alias` of relation `name`; UNDATED for the rows without one."""
    return f"coalesce(cast({alias}.{quote(BY_DAY[name])} as date), date '{UNDATED.isoformat()}')"


def on_changed_days(con: duckdb.DuckDBPyConnection, name: str, alias: str) -> str:
    """SQL: whether row `alias` of relation `name` is of a day in temp.publish_days. As half-open ranges of its
    timestamp (BY_DAY) over the runs of consecutive days, which DuckDB checks against each row group's min and
    max, so the row groups of other days are skipped where a relation is stored in about the order of its days;
    by the day's membership beyond MAX_DAY_RANGES runs, and when a changed day is not a plain calendar day of
    years 1 to 9998 (an infinite timestamp, a year beyond 9999 or before 1: `try_cast` lets them through)."""
    membership = f"{day_of(name, alias)} in (select day from temp.publish_days)"
    texts = [
        text for (text,) in con.execute("select cast(day as varchar) from temp.publish_days order by day").fetchall()
    ]
    if not all(PLAIN_DAY.fullmatch(text) and text < "9999" for text in texts):
        return membership
    runs: list[list[dt.date]] = []
    for day in map(dt.date.fromisoformat, texts):
        if runs and day == runs[-1][1] + dt.timedelta(days=1):
            runs[-1][1] = day
        else:
            runs.append([day, day])
    if len(runs) > MAX_DAY_RANGES:
        return membership
    column = f"{alias}.{quote(BY_DAY[name])}"
    ranges = [
        f"({column} >= timestamp '{first}' and {column} < timestamp '{last + dt.timedelta(days=1)}')"
        for first, last in runs
    ]
    if UNDATED.isoformat() in texts:
        ranges.append(f"{column} is null")
    return "(" + " or ".join(ranges) + ")" if ranges else "false"


def digest(name: str, relation: str, alias: str) -> str:
    """SQL: per day (BY_DAY) of `relation` (relation `name`'s rows), its row count and digest (see changed_days)."""
    return (
        f"select {day_of(name, alias)} as day, count(*) as row_count, bit_xor(hash(hash({alias}))) as digest "
        f"from {relation} as {alias} group by all"
    )


def changed_days(
    con: duckdb.DuckDBPyConnection, name: str, built: str, served: str, *, served_digests: str | None = None
) -> int:
    """Fill temp.publish_days with the days (BY_DAY) whose row count or digest differs between the warehouse's
    relation `built` and the published `served`; how many. The digest XORs each row's hash hashed again: DuckDB's
    hash of a row is XOR-linear in its last column, so an even number of rows of one day whose last column changed
    alike (the retention flag of a day leaving the window) would otherwise cancel out in the XOR. The built side's
    digests stay in temp.publish_built_days; the served side's are read from `served_digests` (a relation of
    day, row_count, digest: what the last publish stored, DIGESTS) when given, else computed from `served`."""
    con.execute(f"create or replace temp table publish_built_days as {digest(name, built, 'built_row')}")
    served_side = f"({served_digests or digest(name, served, 'served_row')})"
    con.execute(
        "create or replace temp table publish_days as select coalesce(built.day, served.day) as day "
        f"from temp.publish_built_days as built full join {served_side} as served on built.day = served.day "
        "where built.row_count is distinct from served.row_count or built.digest is distinct from served.digest"
    )
    return con.execute("select count(*) from temp.publish_days").fetchall()[0][0]


def has_digests(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the serving file being written (current catalog) holds DIGESTS."""
    found = "select count(*) from duckdb_tables() where database_name = current_database() "
    found += "and schema_name = ? and table_name = ?"
    return con.execute(found, DIGESTS.split(".")).fetchall()[0][0] > 0


def covers(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether DIGESTS (current catalog) speaks for published relation `name`: it has its rows, or the relation
    has none (a relation without digests, e.g. one published before it was in BY_KEY, is digested again)."""
    has = f"select exists (select 1 from {DIGESTS} where relation = ?) or not exists (from marts.{quote(name)})"
    return con.execute(has, [name]).fetchall()[0][0]


def store_digests(con: duckdb.DuckDBPyConnection, name: str, digests: str) -> None:
    """Replace relation `name`'s rows of DIGESTS (current catalog) by `digests` (SQL of day, row_count, digest)."""
    con.execute(f"create schema if not exists {DIGESTS.split('.')[0]}")
    con.execute(f"create table if not exists {DIGESTS} (relation varchar, day date, row_count bigint, digest ubigint)")
    con.execute(f"delete from {DIGESTS} where relation = ?", [name])
    con.execute(f"insert into {DIGESTS} select ?, day, row_count, digest from ({digests})", [name])
