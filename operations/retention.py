"""`feedback-analytics purge`: apply the retention policies of seeds/retention_policies.csv to the raw tables.

Cutoffs are whole days: with `--as-of D` and `keep_days` N, rows whose date
column falls strictly before the day D - N are removed (upstream's own rule
for session feedback); a row on the cutoff day stays. Golden sessions are
never purged. Analyzer events past the archive window are first written to a
Parquet file next to the warehouse, flushed to disk and renamed into place,
and only then deleted, in the same transaction that logs the policy; a file
left by a killed run (no log row names it) is removed before the next archive.

Each policy is one transaction and writes one `raw.purge_log` row (dry runs
too, flagged). A second run on the same day removes nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest.errors import UserError
from ingest.validation import quote, sql_literal

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


@dataclass
class PolicyResult:
    policy: str
    table: str
    cutoff: dt.date | None
    archived: int = 0
    deleted: int = 0
    archive_uri: str | None = None


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


def _expired_sql(policy: Policy) -> str:
    """Rows past the policy's cutoff day (parameter 1: the cutoff date)."""
    return f"cast({quote(policy.date_column)} as date) < ? and {_scope_sql(policy)}"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
    """One purge run: every policy as of a day, each in its own transaction."""

    def __init__(self, con: duckdb.DuckDBPyConnection, as_of: dt.date, archive_dir: Path, dry_run: bool) -> None:
        self.con = con
        self.as_of = as_of
        self.archive_dir = archive_dir.resolve()  # logged and compared as absolute paths
        self.dry_run = dry_run
        self.purge_id = uuid.uuid4().hex

    def run(self, policies: list[Policy]) -> list[PolicyResult]:
        return [self.apply(policy) for policy in policies]

    def apply(self, policy: Policy) -> PolicyResult:
        cutoff = None if policy.keep_days is None else self.as_of - dt.timedelta(days=policy.keep_days)
        result = PolicyResult(policy.policy, policy.raw_table, cutoff)
        if policy.action == "never" or cutoff is None:
            self._log(result)
            return result
        table = f"raw.{policy.raw_table}"
        (expired,) = self.con.execute(
            f"select count(*) from {table} where {_expired_sql(policy)}", [cutoff]
        ).fetchall()[0]
        if policy.action == "archive":
            result.archived = expired
        else:
            result.deleted = expired + (
                self._expired_in_archive(policy, cutoff) if policy.raw_table == "analyzer_events" else 0
            )
        if self.dry_run:
            self._log(result)
            return result
        if policy.action == "archive" and expired:
            result.archive_uri = self._write_archive(policy, cutoff)
        archive_deleted = 0
        if policy.action == "delete" and policy.raw_table == "analyzer_events":
            archive_deleted = self._delete_from_archive(policy, cutoff)
        self.con.execute("begin transaction")
        try:
            (removed,) = self.con.execute(f"delete from {table} where {_expired_sql(policy)}", [cutoff]).fetchall()[0]
            if policy.action == "archive":
                result.archived = removed
            else:
                result.deleted = removed + archive_deleted
            self._log(result)
            self.con.execute("commit")
        except BaseException:
            self.con.execute("rollback")
            raise
        return result

    def _write_archive(self, policy: Policy, cutoff: dt.date) -> str:
        """Write the expired rows to Parquet, flushed and renamed into place, before they are deleted."""
        self.archive_dir.mkdir(parents=True, exist_ok=True)
        _remove_orphans(self.con, self.archive_dir)
        final = self.archive_dir / f"{ARCHIVE_PREFIX}{cutoff:%Y%m%d}-{self.purge_id}.parquet"
        partial = final.with_suffix(".parquet.tmp")
        expired = _expired_sql(policy).replace("?", sql_literal(str(cutoff)))
        rows = f"select * from raw.{policy.raw_table} where {expired} order by {quote(policy.date_column)}"
        self.con.execute(f"copy ({rows}) to {sql_literal(str(partial))} (format parquet, compression zstd)")
        _fsync(partial)
        partial.rename(final)
        _fsync(final.parent)
        return str(final)

    def _expired_in_archive(self, policy: Policy, cutoff: dt.date) -> int:
        total = 0
        for path in archive_files(self.archive_dir):
            source = sql_literal(str(path))
            (count,) = self.con.execute(
                f"select count(*) from read_parquet({source}) where cast({quote(policy.date_column)} as date) < ?",
                [cutoff],
            ).fetchall()[0]
            total += count
        return total

    def _delete_from_archive(self, policy: Policy, cutoff: dt.date) -> int:
        """Rewrite each archive file without its expired rows (a new file renamed over the old one)."""
        deleted = 0
        column = quote(policy.date_column)
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
                _fsync(partial)
                partial.replace(path)
            deleted += expired
        if deleted:
            _fsync(self.archive_dir)
        return deleted

    def _log(self, result: PolicyResult) -> None:
        self.con.execute(
            "insert into raw.purge_log values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                self.purge_id,
                result.policy,
                result.table,
                None if result.cutoff is None else dt.datetime.combine(result.cutoff, dt.time()),
                result.archived,
                result.deleted,
                dt.datetime.now(dt.UTC).replace(tzinfo=None),
                self.dry_run,
                result.archive_uri,
            ],
        )
