"""The platform's reaction index: what a nightly check costs once the history is large.

One `kdcube_bench_support` schema with the upstream DDL (tests/support/kdcube.py) holding ROWS reaction rows
in ROWS / 10 conversations, written as the platform writes them (tags, the reaction JSON in `text`, the blob
path in `hosted_uri`). Measured in one run, side by side:

- ours, first load: `ingest reactions --postgres` on an empty warehouse (every row read);
- ours, a check after a night: CHANGED conversations got a new user reaction that replaced their earlier one
  (the platform deletes the old row), and as many were cleared;
- ours, a check with nothing changed;
- bare baseline: the reaction rows read whole into DuckDB with ADBC (what a reader that re-reads the index
  every night to see deletions would pay, before any validation).

    python -m bench.reaction_index [--rows 1000000] [--changed 100] [--repeat 3]

Prints a JSON line and a markdown table (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.kdcube import INDEX_DDL  # noqa: E402
from tests.support.postgres import start_postgres, stop_postgres  # noqa: E402
from tests.support.postgres_tables import pg_execute  # noqa: E402

SCHEMA = "kdcube_bench_support"
CLI = [sys.executable, "-m", "cli"]
REACTION = "'{\"turn_id\": \"t' || n % 10 || '\", \"text\": \"\", \"confidence\": 1.0, \"ts\": \"' || ts || '\", " \
    "\"reaction\": \"' || (array['ok','not_ok','neutral'])[n % 3 + 1] || '\", \"origin\": \"user\"}'"  # fmt: skip


def fill(dsn: str, rows: int) -> None:
    pg_execute(dsn, *[s for s in INDEX_DDL.format(schema=SCHEMA).split(";") if s.strip()])
    pg_execute(
        dsn,
        f"""
        insert into {SCHEMA}.conv_messages
            (user_id, conversation_id, message_id, role, text, hosted_uri, ts, user_type, tags, turn_id)
        select 'user-' || (n / 10 % 5000), 'conv-' || (n / 10), 'artifact-m' || n || '-turn.log.reaction',
               'artifact', {REACTION},
               'file:///data/cb/tenants/bench/projects/support/conversation/user-' || (n / 10 % 5000) || '/conv-'
                   || (n / 10) || '/t' || n % 10 || '/artifact-m' || n || '-turn.log.reaction.json',
               ts::timestamptz, 'registered',
               array['artifact:turn.log.reaction', 'turn:t' || n % 10, 'origin:user'], 't' || n % 10
        from (
            select n, to_char(timestamp '2026-10-01' + n * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as ts
            from generate_series(0, {rows - 1}) as n
        ) as numbered
        """,
    )


def night(dsn: str, changed: int, round_: int) -> None:
    """`changed` conversations get a replacement (old row deleted, new one written), `changed` others a clear."""
    first, second = round_ * 2 * changed, round_ * 2 * changed + changed
    pg_execute(
        dsn,
        f"""
        with gone as (
            delete from {SCHEMA}.conv_messages
            where conversation_id in (select 'conv-' || c from generate_series({first}, {first + changed - 1}) c)
              and turn_id = 't0'
            returning user_id, conversation_id
        )
        insert into {SCHEMA}.conv_messages
            (user_id, conversation_id, message_id, role, text, hosted_uri, ts, user_type, tags, turn_id)
        select user_id, conversation_id, 'artifact-r{round_}-' || conversation_id || '-turn.log.reaction', 'artifact',
               '{{"turn_id": "t0", "text": "", "confidence": 1.0, "ts": "2026-11-20T00:00:00Z", "reaction": "ok", '
               || '"origin": "user"}}',
               'file:///data/cb/tenants/bench/projects/support/conversation/' || user_id || '/' || conversation_id
                   || '/t0/artifact-r{round_}-' || conversation_id || '-turn.log.reaction.json',
               timestamptz '2026-11-20 00:00:00+00', 'registered',
               array['artifact:turn.log.reaction', 'turn:t0', 'origin:user'], 't0'
        from gone
        """,
        f"""
        delete from {SCHEMA}.conv_messages
        where conversation_id in (select 'conv-' || c from generate_series({second}, {second + changed - 1}) c)
          and turn_id = 't1'
        """,
    )


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def bare(dsn: str, db: Path) -> float:
    code = (
        "import adbc_driver_postgresql.dbapi as pg, duckdb, sys\n"
        f"c = pg.connect({dsn!r}); cur = c.cursor()\n"
        f"cur.execute(\"select * from {SCHEMA}.conv_messages where role = 'artifact' and tags && "
        "array['artifact:turn.log.reaction']::text[]\")\n"
        "t = cur.fetch_arrow_table(); d = duckdb.connect(sys.argv[1])\n"
        "d.execute('create or replace table r as select * exclude (embedding, search_tsv) from t')\n"
    )
    return timed([sys.executable, "-c", code, str(db)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-index-"))
    server = start_postgres(base)
    try:
        server.psql("create database bench")
        dsn = server.dsn("bench")
        fill(dsn, args.rows)
        server.psql("vacuum analyze", database="bench")
        db = base / "wh.duckdb"
        ingest = [*CLI, "ingest", "reactions", "--postgres", dsn, "--db", str(db), "--quiet"]
        first = timed(ingest)
        checks, quiet, bares = [], [], []
        for round_ in range(args.repeat):
            night(dsn, args.changed, round_)
            checks.append(timed(ingest))
            quiet.append(timed(ingest))
            bares.append(bare(dsn, base / f"bare-{round_}.duckdb"))
        with duckdb.connect(str(db), read_only=True) as con:
            read, removed = con.execute(
                "select rows_read, rows_removed from raw.load_manifest where rows_removed > 0 "
                "order by finished_at desc limit 1"
            ).fetchall()[0]
        result = {
            "rows": args.rows,
            "conversations": args.rows // 10,
            "changed_conversations": 2 * args.changed,
            "first_load_s": round(first, 2),
            "check_after_a_night_s": round(statistics.median(checks), 2),
            "check_rows_read": read,
            "check_rows_removed": removed,
            "check_nothing_changed_s": round(statistics.median(quiet), 2),
            "bare_full_read_s": round(statistics.median(bares), 2),
        }
        print(json.dumps(result))
        print(
            "| rows | first load | check after a night (rows read, removed) | check, nothing changed "
            "| bare full read |\n|---|---|---|---|---|\n"
            f"| {args.rows:,} in {args.rows // 10:,} conversations | {result['first_load_s']} s "
            f"| {result['check_after_a_night_s']} s ({read:,}, {removed:,}) | {result['check_nothing_changed_s']} s "
            f"| {result['bare_full_read_s']} s |"
        )
    finally:
        stop_postgres(server)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
