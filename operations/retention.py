"""`feedback-analytics purge`: apply the retention policies of seeds/retention_policies.csv to the raw tables.

Cutoffs are whole days: with `--as-of D` and `keep_days` N, rows whose date
column falls strictly before the day D - N are removed (upstream's own rule
for session feedback); a row on the cutoff day stays. Golden sessions are
never purged. Analyzer events past the archive window are first written to a
Parquet file next to the warehouse, flushed to disk and renamed into place,
and only then deleted, in the same transaction that logs the policy; a file
left by a killed run (no log row names it) is removed before the next archive.

A row whose date the upstream left empty (an undated analyzer event: the
contract's `empty_is_null` field, NULL in the table) is dated by when it was
first loaded, `_loaded_at`, its only instant: it moves to the archive 90 days
after its load and is deleted 365 days after it, like the retained_* views
and stored_analyzer_events date it (docs/operations.md, "Undated events").

Each policy is one transaction and writes one `raw.purge_log` row; a dry
run only counts, on a read-only connection, and writes nothing. A second run
on the same day removes nothing.

Before touching anything, a run counts what every policy would remove; when
a delete policy would remove more than `max_share` of its table's rows
(default 50%: the first purge of a deployment with a long backlog, or an
as-of far off), it stops with a message saying how to proceed (`--yes`, or
`[purge] yes = true` for `nightly` in the config file).
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.config_file import read_config_file
from warehouse.contracts import ARCHIVED_BY_PURGE, CONTRACTS
from warehouse.durable import fsync
from warehouse.errors import UserError
from warehouse.pause_points import pause_point
from warehouse.private_files import install, make_folder
from warehouse.sql import quote, sql_literal

PROJECT_DIR = Path(__file__).resolve().parents[1]
POLICIES_CSV = PROJECT_DIR / "seeds" / "retention_policies.csv"
ARCHIVE_PREFIX = "analyzer_events-"


@dataclass(frozen=True)
class Policy:
    policy: str
    raw_table: str
    scope: str  # all | golden | replay
    keep_days: int | None
    date_column: str
    action: str  # delete | archive | never


DEFAULT_MAX_SHARE = 0.5


@dataclass
class PolicyResult:
    """What one policy did (or, in a dry run, would do), counted per place the rows live."""

    policy: str
    table: str
    cutoff: dt.date | None
    archived: int = 0  # moved out of the raw table into the archive
    deleted: int = 0  # deleted from the raw table
    deleted_from_archive: int = 0  # deleted from the archive files
    archive_uri: str | None = None
    table_rows: int = 0  # rows of the table (plus, for analyzer events, of the archive) before the policy


class PurgeTooLarge(UserError):
    """A delete policy would remove more than the allowed share of its table: nothing was touched."""


PURGE_KEYS = {"max_share", "yes"}


@dataclass(frozen=True)
class PurgeSettings:
    """The `[purge]` table of the nightly's config file."""

    max_share: float | None = None  # None: the purge's default
    confirmed: bool = False


def read_purge_settings(file: Path | None) -> PurgeSettings:
    """The `[purge]` table of a config file (nightly); defaults without one."""
    if file is None:
        return PurgeSettings()
    table = read_config_file(file).get("purge", {})
    if not isinstance(table, dict):
        raise UserError(f"config file {file}: write [purge] as a table (max_share = 0.5, yes = false)")
    extra = set(table) - PURGE_KEYS
    if extra:
        raise UserError(f"config file {file}, [purge]: unknown key(s) {', '.join(sorted(extra))}; use max_share, yes")
    share, confirmed = table.get("max_share"), table.get("yes", False)
    if share is not None and (isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1):
        raise UserError(f"config file {file}, [purge]: max_share must be a number from 0 to 1, got {share!r}")
    if not isinstance(confirmed, bool):
        raise UserError(f"config file {file}, [purge]: yes must be true or false, got {confirmed!r}")
    return PurgeSettings(None if share is None else float(share), confirmed)


def read_policies(path: Path = POLICIES_CSV) -> list[Policy]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise UserError(f"cannot read the retention policies {path}: {exc.strerror}") from None
    return [
        Policy(
            policy=row["policy"],
            raw_table=row["raw_table"],
            scope=row["scope"],
            keep_days=int(row["keep_days"]) if row["keep_days"] else None,
            date_column=row["date_column"],
            action=row["action"],
        )
        for row in rows
    ]


def default_archive_dir(db: Path) -> Path:
    """Where archived analyzer events go unless told otherwise: a folder next to the warehouse."""
    configured = os.environ.get("FEEDBACK_ARCHIVE_DIR")
    return Path(configured) if configured else db.resolve().parent / f"{db.stem}-archive" / "analyzer_events"


def _scope_sql(policy: Policy) -> str:
    golden = (
        "json_extract(metadata, '$.golden') is not null and json_type(json_extract(metadata, '$.golden')) = 'OBJECT'"
    )
    if policy.scope == "replay":
        return f"(json_extract_string(metadata, '$.eval_source') is not null and not coalesce({golden}, false))"
    if policy.scope == "golden":
        return f"coalesce({golden}, false)"
    return "true"


# (raw table, date column) whose empty upstream value lands as NULL: such a row is dated by its load
_UNDATED_BY_LOAD = {
    (contract.table, field.name) for contract in CONTRACTS for field in contract.fields if field.empty_is_null
}


def _dated_sql(policy: Policy) -> str:
    """What the policy dates a row by: its date column, or for an undated row when it was loaded."""
    column = quote(policy.date_column)
    return f"coalesce({column}, _loaded_at)" if (policy.raw_table, policy.date_column) in _UNDATED_BY_LOAD else column


def _expired_sql(policy: Policy) -> str:
    """Rows past the policy's cutoff day (parameter 1: the cutoff date)."""
    return f"cast({_dated_sql(policy)} as date) < ? and {_scope_sql(policy)}"


def logged_archives(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Archive files that a committed purge wrote (absolute paths)."""
    rows = con.execute("select archive_uri from raw.purge_log where archive_uri is not null").fetchall()
    return {str(Path(row[0]).resolve()) for row in rows}


def archive_files(archive_dir: Path) -> list[Path]:
    return sorted(archive_dir.glob(f"{ARCHIVE_PREFIX}*.parquet")) if archive_dir.is_dir() else []


def _remove_orphans(con: duckdb.DuckDBPyConnection, archive_dir: Path) -> None:
    """Files a killed run wrote but never logged: their rows are still in the table."""
    logged = logged_archives(con)
    for path in archive_dir.glob(f"{ARCHIVE_PREFIX}*.parquet*"):
        if path.suffix == ".tmp" or str(path.resolve()) not in logged:
            path.unlink()


class Purge:
    """One purge run: every policy as of a day, each in its own transaction (a dry run only counts)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        as_of: dt.date,
        archive_dir: Path,
        dry_run: bool,
        *,
        max_share: float = DEFAULT_MAX_SHARE,
        confirmed: bool = False,
    ) -> None:
        self.con = con
        self.as_of = as_of
        self.archive_dir = archive_dir.resolve()  # logged and compared as absolute paths
        self.dry_run = dry_run
        self.max_share = max_share
        self.confirmed = confirmed
        self.purge_id = uuid.uuid4().hex

    def run(self, policies: list[Policy]) -> list[PolicyResult]:
        plan, moved_before = [], {}
        for policy in policies:  # in order: rows an archive policy moves are in the archive for the next policies
            plan.append(self.count(policy, moved_before.get(policy.raw_table)))
            if policy.action == "archive" and plan[-1].cutoff is not None:
                moved_before[policy.raw_table] = plan[-1].cutoff
        if self.dry_run:
            return plan
        self._check_shares(plan)
        return [self.apply(policy) for policy in policies]

    def _cutoff(self, policy: Policy) -> dt.date | None:
        return None if policy.keep_days is None else self.as_of - dt.timedelta(days=policy.keep_days)

    def count(self, policy: Policy, moved_before: dt.date | None = None) -> PolicyResult:
        """What the policy would remove, read only; `moved_before`: an earlier policy of this run moves the table's
        rows dated before that day to the archive, so this one would find them there."""
        cutoff = self._cutoff(policy)
        result = PolicyResult(policy.policy, policy.raw_table, cutoff)
        table = f"raw.{policy.raw_table}"
        (expired, total) = self.con.execute(
            f"select count(*) filter (where {_expired_sql(policy)}), count(*) from {table}",
            [cutoff or dt.date.min],
        ).fetchall()[0]
        result.table_rows = total
        if policy.action == "never" or cutoff is None:
            return result
        if policy.action == "archive":
            result.archived = expired
            return result
        moved = 0
        if moved_before is not None:
            (moved,) = self.con.execute(
                f"select count(*) from {table} where {_expired_sql(policy)} and cast({_dated_sql(policy)} as date) < ?",
                [cutoff, moved_before],
            ).fetchall()[0]
        result.deleted = expired - moved
        result.deleted_from_archive = moved
        if policy.raw_table == ARCHIVED_BY_PURGE.table:
            expired_archived, archived_total = self._archive_counts(policy, cutoff)
            result.deleted_from_archive += expired_archived
            result.table_rows += archived_total
        return result

    def _check_shares(self, plan: list[PolicyResult]) -> None:
        if self.confirmed:
            return
        large = [
            r for r in plan if r.table_rows and (r.deleted + r.deleted_from_archive) / r.table_rows > self.max_share
        ]
        if large:
            said = "; ".join(
                f"{r.policy} would delete {r.deleted + r.deleted_from_archive:,} of {r.table_rows:,} rows "
                f"of raw.{r.table} (before {r.cutoff})"
                for r in large
            )
            raise PurgeTooLarge(
                f"purge stopped before touching anything: {said}, more than {self.max_share:.0%}. "
                "Check --as-of; if this is right (the first purge of a long backlog is the usual case), "
                "run `purge --yes`, or set `[purge] yes = true` for nightly in the config file"
            )

    def apply(self, policy: Policy) -> PolicyResult:
        cutoff = self._cutoff(policy)
        result = PolicyResult(policy.policy, policy.raw_table, cutoff)
        if policy.action == "never" or cutoff is None:
            self._log(result)
            return result
        table = f"raw.{policy.raw_table}"
        (expired,) = self.con.execute(
            f"select count(*) from {table} where {_expired_sql(policy)}", [cutoff]
        ).fetchall()[0]
        if policy.action == "archive" and expired:
            result.archive_uri = self._write_archive(policy, cutoff)
            pause_point("purge-archive-renamed")
        if policy.action == "delete" and policy.raw_table == ARCHIVED_BY_PURGE.table:
            result.deleted_from_archive = self._delete_from_archive(policy, cutoff)
        self.con.execute("begin transaction")
        try:
            (removed,) = self.con.execute(f"delete from {table} where {_expired_sql(policy)}", [cutoff]).fetchall()[0]
            if policy.action == "archive":
                result.archived = removed
            else:
                result.deleted = removed
            self._log(result)
            pause_point("purge-rows-deleted")
            self.con.execute("commit")
        except BaseException:
            self.con.execute("rollback")
            raise
        pause_point(f"purge-committed:{policy.policy}")
        return result

    def _write_archive(self, policy: Policy, cutoff: dt.date) -> str:
        """Write the expired rows to Parquet, flushed and renamed into place, before they are deleted."""
        make_folder(self.archive_dir)
        _remove_orphans(self.con, self.archive_dir)
        final = self.archive_dir / f"{ARCHIVE_PREFIX}{cutoff:%Y%m%d}-{self.purge_id}.parquet"
        partial = final.with_suffix(".parquet.tmp")
        expired = _expired_sql(policy).replace("?", sql_literal(str(cutoff)))
        rows = f"select * from raw.{policy.raw_table} where {expired} order by {_dated_sql(policy)}"
        self.con.execute(f"copy ({rows}) to {sql_literal(str(partial))} (format parquet, compression zstd)")
        fsync(partial)
        pause_point("purge-archive-written")
        install(partial, final)
        fsync(final.parent)
        return str(final)

    def _archive_counts(self, policy: Policy, cutoff: dt.date) -> tuple[int, int]:
        """(rows of the archive past the cutoff, all rows of the archive)."""
        expired = total = 0
        for path in archive_files(self.archive_dir):
            source = sql_literal(str(path))
            (past, rows) = self.con.execute(
                f"select count(*) filter (where cast({_dated_sql(policy)} as date) < ?), count(*) "
                f"from read_parquet({source})",
                [cutoff],
            ).fetchall()[0]
            expired, total = expired + past, total + rows
        return expired, total

    def _delete_from_archive(self, policy: Policy, cutoff: dt.date) -> int:
        """Rewrite each archive file without its expired rows (a new file renamed over the old one)."""
        deleted = 0
        column = _dated_sql(policy)
        for path in archive_files(self.archive_dir):
            source = sql_literal(str(path))
            (expired, total) = self.con.execute(
                f"select count(*) filter (where cast({column} as date) < ?), count(*) from read_parquet({source})",
                [cutoff],
            ).fetchall()[0]
            if not expired:
                continue
            if expired == total:
                path.unlink()
            else:
                partial = path.with_suffix(".parquet.tmp")
                kept = (
                    f"select * from read_parquet({source}) where cast({column} as date) >= {sql_literal(str(cutoff))}"
                )
                self.con.execute(f"copy ({kept}) to {sql_literal(str(partial))} (format parquet, compression zstd)")
                fsync(partial)
                partial.replace(path)
            deleted += expired
        if deleted:
            fsync(self.archive_dir)
        return deleted

    def _log(self, result: PolicyResult) -> None:
        self.con.execute(
            """
            insert into raw.purge_log (
                purge_id, policy, table_name, cutoff, rows_archived, rows_deleted, applied_at, is_dry_run,
                archive_uri, rows_deleted_from_archive
            )
            values (?, ?, ?, ?, ?, ?, ?, false, ?, ?)
            """,
            [
                self.purge_id,
                result.policy,
                result.table,
                None if result.cutoff is None else dt.datetime.combine(result.cutoff, dt.time()),
                result.archived,
                result.deleted,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                result.archive_uri,
                result.deleted_from_archive,
            ],
        )
