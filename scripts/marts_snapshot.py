"""Snapshot every mart of a warehouse, and compare two snapshots: the check that a refactoring kept the numbers.

    python scripts/marts_snapshot.py dump feedback.duckdb before/     # one Parquet file per mart, rows sorted
    python scripts/marts_snapshot.py compare before/ after/           # exit 1 when a shared mart differs
    python scripts/marts_snapshot.py digest feedback.duckdb           # one line per mart: columns, rows, hash
    python scripts/marts_snapshot.py digest feedback.duckdb --check tests/artifacts/demo_marts.digest

`compare` leaves out the columns that differ between any two runs (load and
build ids, times and durations, the demo folder's path) and rounds doubles to 9 decimals
(a parallel sum's last bits depend on the order DuckDB's threads add in). A
mart only one side has is listed, not counted as a difference.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

RUN_SPECIFIC = {
    "built_at",
    "invocation_id",
    "loaded_at",
    "load_id",
    "source_uri",
    "last_loaded_at",
    "last_seen_at",
    "last_load_at",
    "last_blob_load_at",
    "last_index_load_at",
    "started_at",
    "finished_at",
    "uri",
    "seconds",
    "load_date",  # the UTC day a load ran (warehouse_loaded_rows_daily): the day the demo was ingested
}


def dump(db: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    relations = con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts' order by 1"
    ).fetchall()
    for (name,) in relations:
        columns = con.execute(
            "select column_name from information_schema.columns where table_schema = 'marts' and table_name = ? "
            "order by ordinal_position",
            [name],
        ).fetchall()
        order = ", ".join(f'"{column}"' for (column,) in columns)
        target = str(out / f"{name}.parquet").replace("'", "''")
        con.execute(f"copy (select * from marts.\"{name}\" order by {order}) to '{target}' (format parquet)")
    print(f"{len(relations)} marts of {db} in {out}")
    return 0


def compare(before: Path, after: Path) -> int:
    first = {p.name for p in before.glob("*.parquet")}
    second = {p.name for p in after.glob("*.parquet")}
    for name in sorted(first - second):
        print(f"only in {before}: {name.removesuffix('.parquet')}")
    for name in sorted(second - first):
        print(f"only in {after}: {name.removesuffix('.parquet')}")
    con = duckdb.connect()
    differing = 0
    for name in sorted(first & second):
        a, b = before / name, after / name
        shape_a = con.execute(f"describe select * from '{a}'").fetchall()
        shape_b = con.execute(f"describe select * from '{b}'").fetchall()
        if [row[:2] for row in shape_a] != [row[:2] for row in shape_b]:
            print(f"{name.removesuffix('.parquet')}: columns differ")
            differing += 1
            continue
        select = ", ".join(_kept([(column, kind) for column, kind, *_ in shape_a]))
        missing = con.execute(
            f"select count(*) from (select {select} from '{a}' except all select {select} from '{b}')"
        )
        missing = missing.fetchall()[0][0]
        extra = con.execute(f"select count(*) from (select {select} from '{b}' except all select {select} from '{a}')")
        extra = extra.fetchall()[0][0]
        if missing or extra:
            print(f"{name.removesuffix('.parquet')}: {missing} row(s) only before, {extra} only after")
            differing += 1
    print(f"compared {len(first & second)} marts: {differing} differ")
    return 1 if differing else 0


def _kept(columns: list[tuple[str, str]]) -> list[str]:
    """The columns a comparison keeps, as SQL: run-specific ones left out, doubles rounded to 9 decimals."""
    return [
        f'round("{column}", 9)' if kind in ("DOUBLE", "FLOAT") else f'"{column}"'
        for column, kind in columns
        if column not in RUN_SPECIFIC
    ]


def digests(db: Path) -> list[str]:
    """One line per mart: name, its columns and types, its row count, and an md5 of its rows (sorted, run-specific
    columns left out, doubles rounded as `compare` rounds them): equal lines mean equal marts."""
    con = duckdb.connect(str(db), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    lines = []
    relations = con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts' order by 1"
    ).fetchall()
    for (name,) in relations:
        columns = con.execute(
            "select column_name, data_type from information_schema.columns where table_schema = 'marts' "
            "and table_name = ? order by ordinal_position",
            [name],
        ).fetchall()
        row = " || '|' || ".join(f"coalesce(cast({column} as varchar), '<null>')" for column in _kept(columns))
        rows, digest = con.execute(
            f"select count(*), md5(coalesce(string_agg(r, chr(10) order by r), '')) "
            f'from (select {row} as r from marts."{name}")'
        ).fetchall()[0]
        shape = ",".join(f"{column}:{kind}" for column, kind in columns)
        lines.append(f"{name} rows={rows} md5={digest} columns={shape}")
    con.close()
    return lines


def check(db: Path, expected: Path) -> int:
    """Compare a warehouse's digests with a stored list; exit 1 naming every mart that differs."""
    want = {line.split(" ", 1)[0]: line for line in expected.read_text().splitlines() if line.strip()}
    have = {line.split(" ", 1)[0]: line for line in digests(db)}
    differing = sorted(name for name in want.keys() | have.keys() if want.get(name) != have.get(name))
    for name in differing:
        print(f"{name}:\n  expected {want.get(name, '(no such mart)')}\n  found    {have.get(name, '(no such mart)')}")
    print(f"checked {len(want.keys() | have.keys())} marts: {len(differing)} differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    dumping = verbs.add_parser("dump", help="write every mart of a warehouse to OUT/<mart>.parquet")
    dumping.add_argument("db", type=Path)
    dumping.add_argument("out", type=Path)
    comparing = verbs.add_parser("compare", help="compare two snapshots; exit 1 when a shared mart differs")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    digesting = verbs.add_parser("digest", help="print one line per mart (columns, rows, md5), or --check a list")
    digesting.add_argument("db", type=Path)
    digesting.add_argument("--check", type=Path, default=None, help="a stored digest list; exit 1 when one differs")
    args = parser.parse_args()
    if args.verb == "dump":
        return dump(args.db, args.out)
    if args.verb == "compare":
        return compare(args.before, args.after)
    if args.check is not None:
        return check(args.db, args.check)
    print("\n".join(digests(args.db)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
