"""Benchmark: ingest of a file with a few bad lines, and of a file that grew by appending.

    .venv/bin/python -m bench.ingest_changes [--events 1000000] [--bases 1000000,4000000]
                                             [--day-events 17000] [--repeat 3] [--only bad,append]

bad: a generated analyzer file of --events events, clean, with 100 bad lines spread through it
    (cut in half: invalid JSON), and with one bad line at its end; `ingest analyzer` of each into a new
    warehouse, and for reference the line-by-line path every bad file took before (`load_batches` over
    `read_jsonl`) on the file with 100 bad lines. Goal: 100 bad lines at least 0.8x the clean file's speed.
append: for each base size, a file of that many events is ingested once; then one day of events
    (--day-events) is appended and `ingest analyzer` runs on a copy of that warehouse: ours (reads the
    appended bytes) against the full re-read the previous version did (the same command on a copy whose
    load manifest has no offsets, so the whole grown file is read again and its old rows are duplicates).
    Goal: ours proportional to the new day, not to the file.

Every timing is a fresh process (the command as a user runs it), the sides alternate, medians of --repeat.
Results go to bench/out/ingest_changes.json and are printed as Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from demo import write_analyzer_jsonl

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
OUT = ROOT / "bench" / "out"
AS_OF = dt.date(2026, 11, 1)
LINE_BY_LINE = (
    "import sys; from pathlib import Path; from ingest.jsonl import read_jsonl; "
    "from ingest.load import LoadOptions, load_batches; from warehouse.connection import connect; "
    "from warehouse.contracts import ANALYZER_EVENTS; path = Path(sys.argv[1]).resolve(); "
    "load_batches(connect(sys.argv[2]), ANALYZER_EVENTS, str(path), read_jsonl(path), LoadOptions())"
)


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True)
    return time.perf_counter() - started


def ingest(file: Path, db: Path) -> list[str]:
    return [PYTHON, "-m", "cli", "ingest", "analyzer", str(file), "--db", str(db), "-q"]


def with_bad_lines(clean: Path, target: Path, lines: list[int]) -> Path:
    data = clean.read_bytes().split(b"\n")
    for index in lines:
        data[index] = data[index][: len(data[index]) // 2]
    target.write_bytes(b"\n".join(data))
    return target


def bench_bad_lines(tmp: Path, events: int, repeat: int) -> dict:
    clean = tmp / "clean.jsonl"
    write_analyzer_jsonl(clean, events, seed=5, as_of=AS_OF, days=60)
    spread = with_bad_lines(clean, tmp / "bad-100.jsonl", sorted(random.Random(3).sample(range(events), 100)))
    at_end = with_bad_lines(clean, tmp / "bad-at-end.jsonl", [events - 1])
    sides = {
        "clean": lambda db: ingest(clean, db),
        "100 bad lines": lambda db: ingest(spread, db),
        "1 bad line at the end": lambda db: ingest(at_end, db),
        "100 bad lines, line by line (before)": lambda db: [PYTHON, "-c", LINE_BY_LINE, str(spread), str(db)],
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(repeat):
        for name, command in sides.items():
            db = tmp / f"bad-{round_}-{len(times[name])}-{name.split()[0]}.duckdb"
            times[name].append(timed(command(db)))
            db.unlink()
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "events": events,
        "bytes": clean.stat().st_size,
        "seconds": medians,
        "rows_per_second": {name: events / seconds for name, seconds in medians.items()},
        "ratio_to_clean": {name: medians["clean"] / seconds for name, seconds in medians.items()},
        "runs": times,
    }


def bench_appends(tmp: Path, bases: list[int], day_events: int, repeat: int) -> list[dict]:
    results = []
    for base in bases:
        folder = tmp / f"append-{base}"
        folder.mkdir()
        file, day = folder / "feedback.jsonl", folder / "day.jsonl"
        write_analyzer_jsonl(file, base, seed=11, as_of=AS_OF - dt.timedelta(days=1), days=90)
        write_analyzer_jsonl(day, day_events, seed=12, as_of=AS_OF, days=1)
        loaded = folder / "loaded.duckdb"
        subprocess.run(ingest(file, loaded), check=True, cwd=ROOT, capture_output=True)
        no_offsets = folder / "no-offsets.duckdb"
        shutil.copyfile(loaded, no_offsets)
        subprocess.run(
            [
                PYTHON,
                "-c",
                "import duckdb, sys; duckdb.connect(sys.argv[1]).execute("
                "'update raw.load_manifest set end_offset = null, prefix_fingerprint = null')",
                str(no_offsets),
            ],
            check=True,
        )
        with file.open("ab") as out:
            out.write(day.read_bytes())
        times: dict[str, list[float]] = {"appended bytes (ours)": [], "whole file again (before)": []}
        for _ in range(repeat):
            for name, source in (("appended bytes (ours)", loaded), ("whole file again (before)", no_offsets)):
                db = folder / "run.duckdb"
                shutil.copyfile(source, db)
                times[name].append(timed(ingest(file, db)))
                db.unlink()
        results.append(
            {
                "base_events": base,
                "day_events": day_events,
                "file_bytes": file.stat().st_size,
                "day_bytes": day.stat().st_size,
                "seconds": {name: statistics.median(values) for name, values in times.items()},
                "runs": times,
            }
        )
        shutil.rmtree(folder)
    return results


def markdown(results: dict) -> str:
    lines = [f"Run {results['started']} on {results['machine']} (load average at the start {results['load']:.2f}).", ""]
    if bad := results.get("bad"):
        lines += [
            f"Analyzer file of {bad['events']:,} events ({bad['bytes'] / 1e6:.0f} MB), `ingest analyzer`, "
            f"median of {len(bad['runs']['clean'])}:",
            "",
            "| file | seconds | rows/s | speed vs clean |",
            "|---|---:|---:|---:|",
        ]
        for name, seconds in bad["seconds"].items():
            lines.append(
                f"| {name} | {seconds:.2f} | {bad['rows_per_second'][name]:,.0f} | {bad['ratio_to_clean'][name]:.2f}x |"
            )
        lines.append("")
    if appends := results.get("append"):
        lines += [
            "| file before | one day appended | ingest: appended bytes (ours) | whole file again (before) |",
            "|---:|---:|---:|---:|",
        ]
        for row in appends:
            seconds = row["seconds"]
            lines.append(
                f"| {row['base_events']:,} events ({(row['file_bytes'] - row['day_bytes']) / 1e6:.0f} MB) "
                f"| {row['day_events']:,} events ({row['day_bytes'] / 1e6:.1f} MB) "
                f"| {seconds['appended bytes (ours)']:.2f} s | {seconds['whole file again (before)']:.2f} s |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--bases", default="1000000,4000000")
    parser.add_argument("--day-events", type=int, default=17_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="bad,append")
    args = parser.parse_args()
    only = set(args.only.split(","))
    results: dict = {
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load": os.getloadavg()[0],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as folder:
        tmp = Path(folder)
        if "bad" in only:
            results["bad"] = bench_bad_lines(tmp, args.events, args.repeat)
        if "append" in only:
            bases = [int(b) for b in args.bases.split(",")]
            results["append"] = bench_appends(tmp, bases, args.day_events, args.repeat)
    results["load_after"] = os.getloadavg()[0]
    (OUT / "ingest_changes.json").write_text(json.dumps(results, indent=2))
    print(markdown(results))


if __name__ == "__main__":
    main()
