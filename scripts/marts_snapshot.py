"""Snapshot every mart of a warehouse, and compare two snapshots: the check that a refactoring kept the numbers.

    python scripts/marts_snapshot.py dump feedback.duckdb before/     # one Parquet file per mart, rows sorted
    python scripts/marts_snapshot.py compare before/ after/           # exit 1 when a shared mart differs

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
    "started_at",
    "finished_at",
    "uri",
    "seconds",
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
        kept = [
            f'round("{column}", 9)' if kind in ("DOUBLE", "FLOAT") else f'"{column}"'
            for column, kind, *_ in shape_a
            if column not in RUN_SPECIFIC
        ]
        select = ", ".join(kept)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    dumping = verbs.add_parser("dump", help="write every mart of a warehouse to OUT/<mart>.parquet")
    dumping.add_argument("db", type=Path)
    dumping.add_argument("out", type=Path)
    comparing = verbs.add_parser("compare", help="compare two snapshots; exit 1 when a shared mart differs")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    return dump(args.db, args.out) if args.verb == "dump" else compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
