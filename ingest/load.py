"""Landing one unit of input (a file, a blob folder, a database table) in the warehouse.

One load is one transaction: the batches are validated in DuckDB, bad rows go
to `raw.quarantine` with their reason, valid rows whose natural key is new go
to `raw.<table>`, and a `raw.load_manifest` row records the counts. A process
killed before the commit leaves the warehouse exactly as it was.

For every load: rows read = landed + quarantined + duplicates + skipped (records
that are not the source's own, e.g. the messages beside the reactions of a blob
tree: `Contract.claim`).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from ingest.line_limits import LineLimits, OverLimitLine
from ingest.validation import (
    json_batch_sql,
    lines_parsed_sql,
    read_json_parsed_sql,
    typed_batch_sql,
)
from warehouse.contracts import Contract
from warehouse.pause_points import pause_point
from warehouse.sql import quote, sql_literal


@dataclass
class LoadResult:
    source: str
    table: str
    uri: str
    rows_read: int = 0
    loaded: int = 0
    quarantined: int = 0
    duplicates: int = 0
    skipped: bool = False  # the whole input: unchanged since a committed load
    rows_skipped: int = 0  # records read that are not this source's (Contract.claim): neither landed nor kept
    rows_removed: int = 0  # rows landed before that the source no longer has (the reactions index)
    seconds: float = 0.0
    load_id: str | None = None  # of a committed load (raw.load_manifest, raw.quarantine); None when skipped
    symlinks_skipped: int = 0  # symlinks in the source folder, never followed (ingest.files.folder_files)


@dataclass
class LoadOptions:
    """What a user can ask of a load."""

    blank_fields: tuple[str, ...] = ()  # e.g. user_message_snippet under --no-snippets
    on_rows: Callable[[int], None] | None = None  # progress: rows done in the last batch
    skip_unchanged: bool = True
    # the instant the run stands for (nightly's as_of, taken before its ingest): an index row found gone is
    # stamped removed at it, so that run's build, as of that instant, already counts the clear
    observed_at: datetime | None = None
    limits: LineLimits = field(default_factory=LineLimits)  # a JSON-lines line over them is quarantined unparsed


def _unregister(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop a registered Arrow object; in an aborted transaction the rollback drops it anyway."""
    with suppress(duckdb.Error):
        con.unregister(name)


def _changed(contract: Contract) -> str:
    """SQL: the `fresh` row differs from the `landed` one in some contract column."""
    return " or ".join(f"fresh.{quote(c)} is distinct from landed.{quote(c)}" for c in contract.columns)


@dataclass(frozen=True)
class ReadRange:
    """What a load read of a JSON-lines file: bytes [start_offset, size_bytes) of it; the last complete line
    ends at `end_offset`, line `end_line`; `prefix_fingerprint` covers bytes [0, size_bytes)."""

    start_offset: int
    size_bytes: int
    end_offset: int
    end_line: int
    prefix_fingerprint: str


def last_reads(con: duckdb.DuckDBPyConnection, table: str, uri: str, size: int) -> list[ReadRange]:
    """The last committed read of every JSON-lines file of `table` that covered at most `size` bytes: the
    file at `uri` first, then the others, latest first (a rotated or copied file continues where the file
    it was read as stopped). Loads by versions without offsets have none."""
    rows = con.execute(
        """
        select start_offset, size_bytes, end_offset, end_line, prefix_fingerprint
        from (
            select *, row_number() over (partition by uri order by finished_at desc) as nth
            from raw.load_manifest
            where target_table = ? and end_offset is not null and prefix_fingerprint is not null
        )
        where nth = 1 and size_bytes <= ?
        order by uri = ? desc, finished_at desc
        """,
        [table, size, uri],
    ).fetchall()
    return [ReadRange(*row) for row in rows]


def already_loaded(con: duckdb.DuckDBPyConnection, table: str, checksum: str) -> bool:
    rows = con.execute(
        "select 1 from raw.load_manifest where target_table = ? and checksum = ? limit 1",
        [table, checksum],
    ).fetchall()
    return bool(rows)


def _private(contract: Contract, options: LoadOptions) -> bool:
    """Whether quarantined text must be filtered (a privacy contract, --no-snippets, or a source whose inputs
    also hold records of others: only a record that claims to be the source's keeps its text)."""
    return contract.quarantine_contract_fields_only or bool(options.blank_fields) or bool(contract.claim)


def _quarantine_text(contract: Contract, raw: str, options: LoadOptions) -> str:
    """SQL for the text kept in quarantine: the line as read, less what the contract forbids.

    Under a privacy rule (session feedback's contract, --no-snippets) a line
    that does not parse as a JSON object cannot be filtered, so its text is
    withheld (NULL); the reason and the line number still say what was read.
    """
    text = f"rtrim({raw}, chr(10) || chr(13))"
    is_object = f"(json_valid({text}) and json_type({text}) = 'OBJECT')"
    if contract.quarantine_contract_fields_only:
        pairs = []
        for fld in contract.fields:
            value = f"json_extract({text}, {sql_literal('$.' + fld.name)})"
            if fld.name in contract.redact_in_quarantine and fld.pattern:
                value = (
                    f"case when regexp_full_match({value} ->> '$', {sql_literal(fld.pattern)}) "
                    f"then {value} else to_json('(withheld)') end"
                )
            pairs.append(f"{sql_literal(fld.name)}, {value}")
        text = f"case when {is_object} then json_object({', '.join(pairs)})::varchar end"
    for name in options.blank_fields:
        text = f"case when {is_object} then json_remove({text}, {sql_literal('$.' + name)})::varchar end"
    if contract.claim:  # a line that is no JSON object claims nothing: it may be anyone's message
        text = f"case when {is_object} then {text} end"
    return text


@dataclass
class Outcome:
    keep: bool = True


class Load:
    """One transaction that lands batches of one unit of input in one raw table."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        contract: Contract,
        uri: str,
        options: LoadOptions,
        *,
        checksum: str | None = None,
        size_bytes: int | None = None,
        read_range: ReadRange | None = None,
    ) -> None:
        self.con = con
        self.read_range = read_range
        self.contract = contract
        self.options = options
        self.checksum = checksum
        self.size_bytes = size_bytes
        self.load_id = uuid.uuid4().hex
        self.result = LoadResult(contract.source, contract.table, uri, load_id=self.load_id)
        self.started_at = datetime.now(UTC).replace(tzinfo=None)
        self._clock = time.perf_counter()
        self.contract_breach = False  # why `stream_clean` refused: a row broke the contract (else: a bad line)
        self.observed_at: datetime | None = None  # a check of the reaction index: the instant it stands for
        self.over_limits: list[OverLimitLine] = []  # lines never parsed: quarantined when the load commits

    # -- the transaction ---------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Outcome]:
        """Begin; commit with the manifest row if `outcome.keep` stays true, else roll back.

        An exception (or a killed process) rolls everything back.
        """
        outcome = Outcome()
        self.con.execute("begin transaction")
        try:
            target = f"raw.{self.contract.table}"
            self._target_had_rows = bool(self.con.execute(f"select 1 from {target} limit 1").fetchall())
            yield outcome
            if outcome.keep:
                self._quarantine_over_limits()
                self._settle_duplicates()
        except BaseException:
            self.con.execute("rollback")
            raise
        if outcome.keep:
            self._write_manifest()
            pause_point("load-before-commit")
            self.con.execute("commit")
            self.result.seconds = time.perf_counter() - self._clock
        else:
            self.con.execute("rollback")
            self.result = LoadResult(self.contract.source, self.contract.table, self.result.uri)

    # -- batches -------------------------------------------------------------
    def add_json_batch(self, batch: pa.Table) -> None:
        """A batch from `ingest.jsonl` (`_line`, `_uri`, `_raw`, `_utf8_ok`, `_raw_bytes`)."""
        sql = json_batch_sql(self.contract, lines_parsed_sql(self.contract, "_chunk"))
        self._land(batch, sql, raw_sql=None)

    def add_typed_batch(self, batch: pa.Table) -> None:
        """A batch whose columns are named as the contract's fields, plus `_line` and `_uri`."""
        self.con.register("_chunk", batch)
        try:
            types = {row[0]: row[1] for row in self.con.execute("describe select * from _chunk").fetchall()}
        finally:
            _unregister(self.con, "_chunk")
        originals = [c for c in batch.column_names if not c.startswith("_")]
        raw_sql = "to_json(struct_pack(" + ", ".join(f"{quote(c)} := c.{quote(c)}" for c in originals) + "))::varchar"
        self._land(batch, typed_batch_sql(self.contract, "_chunk", types), raw_sql=raw_sql)

    def stream_clean_jsonl(self, path: str, uri: str | None = None) -> bool:
        """Land a JSON-lines file in one pass with DuckDB's own parallel reader, if it is clean (`uri`: the file
        whose part `path` holds)."""
        return self.stream_clean(json_batch_sql(self.contract, read_json_parsed_sql(self.contract, path, uri)))

    def land_apart(self, path: str, uri: str, rows: int, apart: pa.Table) -> bool:
        """Land a JSON-lines file some lines of which were set apart (`ingest.bad_lines`): `path` holds the
        others, `rows` rows by the line path's count, landed in one pass of DuckDB's reader; `apart` holds the
        lines set apart (an `ingest.jsonl` batch with their physical line numbers), validated line by line to
        land or be quarantined. False (the caller rolls back) when DuckDB's reader refuses a row of `path` or
        counts other than `rows` rows in it."""
        if rows and not (self.stream_clean_jsonl(path, uri) and self.result.rows_read == rows):
            return False
        if apart.num_rows:
            self.add_json_batch(apart)
        return True

    def stream_clean_typed(self, relation: str, column_types: dict[str, str]) -> bool:
        """Land a typed relation (e.g. a registered Arrow stream from ADBC) in one pass, if it is clean."""
        return self.stream_clean(typed_batch_sql(self.contract, relation, column_types))

    def stream_clean(self, validated: str) -> bool:
        """Land a validated relation in one streaming pass, if every row is valid.

        Every row is inserted as read; the statement raises at the first row
        that breaks the contract (or that a reader refuses), and the caller
        then rolls back and reads the input again batch by batch, for exact
        line numbers and raw text in the quarantine. Duplicates are settled
        when the load ends (`_settle_duplicates`).
        """
        try:
            refuse_bad_rows = "case when _reason <> '' then error('row breaks the contract') else true end"
            inserted = self._insert_valid(f"({validated}) as checked where {refuse_bad_rows} and not _skip")
            skipped = 0
            if self.contract.claim:  # the records of others were read too: count them (a second pass)
                (skipped,) = self.con.execute(f"select count(*) from ({validated}) where _skip").fetchall()[0]
        except (duckdb.InvalidInputException, duckdb.ConversionException) as exc:
            self.contract_breach = "row breaks the contract" in str(exc)
            return False  # a malformed line, or a row that breaks the contract: read it again batch by batch
        self._count(inserted + skipped, 0, inserted, skipped=skipped)
        return True

    def _land(self, batch: pa.Table, validate_sql: str, raw_sql: str | None) -> None:
        con = self.con
        con.register("_chunk", batch)
        try:
            con.execute(f"create or replace temp table _batch as {validate_sql}")
            read, bad, skipped = con.execute(
                "select count(*), count(*) filter (where _reason <> ''), count(*) filter (where _skip) from _batch"
            ).fetchall()[0]
            quarantined = self._quarantine(raw_sql) if bad else 0
            inserted = self._insert_valid("_batch where _reason = '' and not _skip")
        finally:
            _unregister(con, "_chunk")
        self._count(read, quarantined, inserted, already_quarantined=bad - quarantined, skipped=skipped)

    def _count(
        self, read: int, quarantined: int, inserted: int, already_quarantined: int = 0, skipped: int = 0
    ) -> None:
        """Rows read, quarantined, inserted and skipped so far; duplicates of landed rows are settled when the load
        ends."""
        self.result.rows_read += read
        self.result.rows_skipped += skipped
        self.result.quarantined += quarantined
        self.result.duplicates += already_quarantined  # a bad row seen before: quarantined once only
        self.result.loaded += inserted
        if self.options.on_rows:
            self.options.on_rows(read)

    def _insert_valid(self, rows: str) -> int:
        """Insert valid rows (`from {rows}`) as they come, stamped with this load's id."""
        columns = [quote(c) for c in self.contract.columns]
        values = ["null" if c in self.options.blank_fields else quote(c) for c in self.contract.columns]
        (count,) = self.con.execute(
            f"""
            insert into raw.{self.contract.table} ({", ".join(columns)}, _source_uri, _loaded_at, _load_id)
            select {", ".join(values)}, _uri, ?, ?
            from {rows}
            """,
            [self.started_at, self.load_id],
        ).fetchall()[0]
        return int(count)

    def _settle_duplicates(self) -> None:
        """Take out what this load inserted but the table already had, and repeats within this load.

        A key landed before stays (its new copy is a duplicate), unless the
        contract is mutable and the new copy differs: then the new row
        replaces the old one. Within the load the first copy read wins.
        """
        contract = self.contract
        key = quote(contract.key)
        target = f"raw.{contract.table}"
        ids = [self.load_id, self.load_id]
        duplicates = 0
        if self._target_had_rows and contract.mutable:
            self.con.execute(
                f"""
                delete from {target} as landed
                where landed._load_id <> ? and exists (
                    select 1 from {target} as fresh
                    where fresh._load_id = ? and fresh.{key} = landed.{key} and ({_changed(contract)})
                )
                """,
                ids,
            )
        if self._target_had_rows:
            (removed,) = self.con.execute(
                f"""
                delete from {target}
                where _load_id = ? and {key} in (select {key} from {target} where _load_id <> ?)
                """,
                ids,
            ).fetchall()[0]
            duplicates += removed
        archives = self._archive_files() if contract.archived_by_purge else []
        if archives:  # already moved to the archive by a purge: landing it again would archive it twice
            files = "[" + ", ".join(sql_literal(a) for a in archives) + "]"
            (removed,) = self.con.execute(
                f"""
                delete from {target}
                where _load_id = ? and {key} in (select {key} from read_parquet({files}))
                """,
                [self.load_id],
            ).fetchall()[0]
            duplicates += removed
        (copies,) = self.con.execute(
            f"select count(*) - count(distinct {key}) from {target} where _load_id = ?", [self.load_id]
        ).fetchall()[0]
        if copies:
            (removed,) = self.con.execute(
                f"""
                delete from {target}
                where _load_id = ?
                  and rowid not in (select min(rowid) from {target} where _load_id = ? group by {key})
                """,
                ids,
            ).fetchall()[0]
            duplicates += removed
        self.result.loaded -= duplicates
        self.result.duplicates += duplicates

    def _archive_files(self) -> list[str]:
        """Parquet archives written by committed purges of this table that still exist."""
        rows = self.con.execute(
            "select distinct archive_uri from raw.purge_log where table_name = ? and archive_uri is not null",
            [self.contract.table],
        ).fetchall()
        return sorted(uri for (uri,) in rows if os.path.exists(uri))

    def _quarantine(self, raw_sql: str | None) -> int:
        """Quarantine the batch's bad rows; a row already quarantined for the same reason is a duplicate."""
        contract = self.contract
        raw = "c._raw" if raw_sql is None else raw_sql
        text = _quarantine_text(contract, raw, self.options)
        # exact bytes only where they are not UTF-8, and never under a privacy rule
        raw_bytes = "c._raw_bytes" if raw_sql is None and not _private(contract, self.options) else "null"
        key = quote(contract.key)
        key_text = f"cast(b.{key} as varchar)" if contract.key not in contract.redact_in_quarantine else "null"
        uri = "b._uri"
        if contract.claim:  # a record that claims nothing (no JSON object) may be anyone's: not even its path
            claims = "coalesce(case when json_valid(c._raw) then json_type(c._raw) = 'OBJECT' end, false)"
            uri = f"case when {claims} then b._uri else {sql_literal(self.result.uri)} end"
            # the file found again by its content: sha256sum over the folder
            key_text = f"case when {claims} then {key_text} else 'sha256:' || sha256(coalesce(c._raw, '')) end"
        row = self.con.execute(
            f"""
            insert into raw.quarantine
            select ?, ?, ?, {uri}, b._line, {key_text}, {text}, {raw_bytes}, b._reason, ?
            from _batch as b
            join _chunk as c on c._uri = b._uri and c._line is not distinct from b._line
            where b._reason <> ''
              and not exists (
                  select 1 from raw.quarantine as q
                  where q.target_table = ? and q.source_uri = {uri}
                    and q.line_number is not distinct from b._line
                    and q.record_key is not distinct from {key_text}
                    and q.reason = b._reason
              )
            """,
            [self.load_id, contract.source, contract.table, self.started_at, contract.table],
        ).fetchall()[0]
        return int(row[0])

    def _quarantine_over_limits(self) -> None:
        """Quarantine the lines over the limits (`ingest.line_limits`): reason and length, the SHA-256 of the
        line as its key, its text cut to TEXT_CAP bytes (none under a privacy rule: a cut line cannot be
        filtered); one quarantined before for the same reason is a duplicate."""
        private = _private(self.contract, self.options)
        quarantined = 0
        for line in self.over_limits:
            key = "sha256:" + line.sha256
            reason = f"{line.reason} ({line.length:,} bytes, sha256 {line.sha256[:16]}...)"
            text = None if private else line.head.decode("utf-8", errors="replace")
            (count,) = self.con.execute(
                """
                insert into raw.quarantine
                select $load, $source, $table, $uri, $line, $key, $text, null, $reason, $at
                where not exists (
                    select 1 from raw.quarantine
                    where target_table = $table and source_uri = $uri and line_number = $line
                      and record_key = $key and reason = $reason
                )
                """,
                {
                    "load": self.load_id,
                    "source": self.contract.source,
                    "table": self.contract.table,
                    "uri": self.result.uri,
                    "line": line.number,
                    "key": key,
                    "text": text,
                    "reason": reason,
                    "at": self.started_at,
                },
            ).fetchall()[0]
            quarantined += int(count)
        if self.over_limits:
            self._count(len(self.over_limits), quarantined, 0, already_quarantined=len(self.over_limits) - quarantined)

    def _write_manifest(self) -> None:
        r = self.result
        span = self.read_range
        self.con.execute(
            """
            insert into raw.load_manifest (load_id, source, target_table, uri, checksum, size_bytes, rows_read,
                rows_loaded, rows_quarantined, rows_duplicate, started_at, finished_at,
                start_offset, end_offset, end_line, prefix_fingerprint, rows_skipped, rows_removed, observed_at)
            values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                self.load_id,
                r.source,
                r.table,
                r.uri,
                self.checksum,
                self.size_bytes,
                r.rows_read,
                r.loaded,
                r.quarantined,
                r.duplicates,
                self.started_at,
                datetime.now(UTC).replace(tzinfo=None),
                span and span.start_offset,
                span and span.end_offset,
                span and span.end_line,
                span and span.prefix_fingerprint,
                r.rows_skipped,
                r.rows_removed,
                self.observed_at,
            ],
        )


def load_batches(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    uri: str,
    batches: Iterable[pa.Table],
    options: LoadOptions,
    *,
    typed: bool = False,
    checksum: str | None = None,
    size_bytes: int | None = None,
    read_range: ReadRange | None = None,
    over_limits: Iterable[OverLimitLine] = (),
) -> LoadResult:
    """Land every batch of one unit of input in one transaction (or skip it if unchanged); `over_limits`: the
    input's lines never parsed, quarantined in the same load."""
    if checksum and options.skip_unchanged and already_loaded(con, contract.table, checksum):
        return LoadResult(contract.source, contract.table, uri, skipped=True)
    load = Load(con, contract, uri, options, checksum=checksum, size_bytes=size_bytes, read_range=read_range)
    load.over_limits = list(over_limits)
    with load.transaction():
        for batch in batches:
            if typed:
                load.add_typed_batch(batch)
            else:
                load.add_json_batch(batch)
    return load.result


def unusable_inputs(con: duckdb.DuckDBPyConnection, results: list[LoadResult]) -> list[str]:
    """One line per input of which nothing could land: every row it had broke the contract (the wrong file,
    most likely). Its rows are in the quarantine, as always."""
    lines = []
    for r in results:
        claimed = r.rows_read - r.rows_skipped  # the records that are this source's
        if r.skipped or not claimed or r.loaded or r.duplicates or r.quarantined < claimed:
            continue
        first = con.execute(
            "select reason from raw.quarantine where load_id = ? order by line_number nulls last, record_key limit 1",
            [r.load_id],
        ).fetchall()
        reason = first[0][0] if first else "unknown"
        lines.append(
            f"{r.uri}: none of its {claimed:,} row(s) matched the {r.source} contract of raw.{r.table} "
            f"(first: {reason}); is it the right file for this source?"
        )
    return lines
