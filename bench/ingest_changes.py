"""Benchmark: ingest of a file with a few bad lines, and of a file that grew by appending.

    .venv/bin/python -m bench.ingest_changes [--events 1000000] [--bases 1000000,4000000]
                                             [--day-events 17000] [--repeat 3] [--only bad,append]

bad: a generated analyzer file of --events events, clean, and with 100 bad lines of one kind spread through
    it, for each kind: unshaped (cut in half: no closing brace), invalid JSON shaped like an object (cut in
    half, closed by `, }`), valid JSON that breaks the contract (in turn a missing required field, a
    string where a number is due, an object where a string is due, an unparseable timestamp, a value
    outside the enum); `ingest analyzer` of each into a new warehouse. Goal: each kind at least 0.8x the
    clean file's speed.
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
from collections.abc import Callable
from pathlib import Path

from demo import write_analyzer_jsonl

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
OUT = ROOT / "bench" / "out"
AS_OF = dt.date(2026, 11, 1)


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True)
    return time.perf_counter() - started


def ingest(file: Path, db: Path) -> list[str]:
    return [PYTHON, "-m", "cli", "ingest", "analyzer", str(file), "--db", str(db), "-q"]


def _breach(line: bytes, nth: int) -> bytes:
    """Valid JSON that breaks the analyzer contract, a different way by `nth`."""
    record = json.loads(line)
    way = nth % 5
    if way == 0:
        del record["event_id"]
    elif way == 1:
        record["confidence"] = "high"
    elif way == 2:
        record["skill_id"] = {"name": record["skill_id"]}
    elif way == 3:
        record["timestamp"] = "yesterday at noon"
    else:
        record["outcome"] = "maybe"
    return json.dumps(record).encode()


BAD_KINDS = {
    "100 unshaped lines": lambda line, nth: line[: len(line) // 2],
    "100 invalid JSON lines shaped like an object": lambda line, nth: line[: len(line) // 2] + b", }",
    "100 valid JSON lines breaking the contract": _breach,
}


def with_bad_lines(clean: Path, target: Path, lines: list[int], spoil: Callable[[bytes, int], bytes]) -> Path:
    data = clean.read_bytes().split(b"\n")
    for nth, index in enumerate(lines):
        data[index] = spoil(data[index], nth)
    target.write_bytes(b"\n".join(data))
    return target


def bench_bad_lines(tmp: Path, events: int, repeat: int) -> dict:
    clean = tmp / "clean.jsonl"
    write_analyzer_jsonl(clean, events, seed=5, as_of=AS_OF, days=60)
    spread = sorted(random.Random(3).sample(range(events), 100))
    files = {"clean": clean}
    for number, (name, spoil) in enumerate(BAD_KINDS.items()):
        files[name] = with_bad_lines(clean, tmp / f"bad-{number}.jsonl", spread, spoil)
    size = clean.stat().st_size
    times: dict[str, list[float]] = {name: [] for name in files}
    for round_ in range(repeat):
        for number, (name, file) in enumerate(files.items()):
            db = tmp / f"bad-{round_}-{number}.duckdb"
            times[name].append(timed(ingest(file, db)))
            db.unlink()
    for file in files.values():
        file.unlink()
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "events": events,
        "bytes": size,
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
