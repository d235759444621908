"""Benchmark: the nightly build after one new day, against a full build of the same warehouse.

    .venv/bin/python -m bench.nightly_build [--scale 100] [--repeat 3] [--events 1000000] [--only nightly,analyzer]
                                            [--work DIR]

nightly: demo data at --scale as of AS_OF is ingested and built (last night's state); one new day
    (`demo-data --days 1`, another seed) is ingested. Then, on fresh copies of that warehouse, alternating:
    `feedback-analytics build --as-of <the new day>` (ours: the incremental models add the new day, the
    rest is rebuilt, the serving file published) against the same command with `-- --full-refresh` (the
    whole history recomputed, what every build did before). Goals: ours at most 15 s and at most 0.3x the
    full build. Each run's dbt time and publish time are reported apart (from the command's own output and
    dbt's run_results.json).
analyzer: a --events analyzer history (feedback.jsonl) ingested and built (the analyzer marts and what they
    need); one new day is appended to the same file. Ours: `ingest analyzer` (reads the appended bytes) +
    `build --select +skill_correction_rates +skill_correction_trends +skill_dimension_hotspots` on a copy;
    baseline: the analyzer's own way (bench/analyzer_baseline.py: json.loads of the whole grown file, metrics
    in pure Python). Goal: ours at least 10x faster.

Every timing is a fresh process (the command as a user runs it), the sides alternate, medians of --repeat.
Results go to bench/out/nightly_build.json and are printed as Markdown for docs/benchmarks.md. --work keeps
the generated data between runs (the scale-100 demo takes minutes to generate and ingest).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
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
CLI = [PYTHON, "-m", "cli"]
OUT = ROOT / "bench" / "out"
AS_OF = dt.date(2026, 11, 20)
NEW_DAY = AS_OF + dt.timedelta(days=1)
# the analyzer marts and what they read, with the tests of those models only (a test that also reads an
# unselected model, say a seed of a relationships test, waits for a full build: cautious indirect selection)
ANALYZER_MARTS = [
    "+skill_correction_rates",
    "+skill_correction_trends",
    "+skill_dimension_hotspots",
    "--indirect-selection",
    "cautious",
]
PUBLISHED = re.compile(r"published \d+ marts \([\d,]+ rows\) to .* in (?P<seconds>[\d.]+) s")


def run(command: list[str], work: Path) -> tuple[float, str]:
    """A command in a fresh process, dbt's target/ and logs/ in `work`: (seconds, its output)."""
    env = {**os.environ, "DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs")}
    env.pop("FEEDBACK_DB", None)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds, done.stdout + done.stderr


def build(db: Path, as_of: dt.date, work: Path, *dbt_args: str) -> dict:
    seconds, output = run([*CLI, "build", "--db", str(db), "--as-of", as_of.isoformat(), "--", *dbt_args], work)
    published = PUBLISHED.search(output)
    dbt = json.loads((work / "target" / "run_results.json").read_text())["elapsed_time"]
    return {
        "seconds": round(seconds, 2),
        "dbt_elapsed": round(dbt, 2),
        "publish": float(published["seconds"]) if published else None,
    }


def prepare_nightly(data: Path, scale: float, work: Path) -> Path:
    """last night's warehouse plus the new day's loads: `tonight.duckdb` in `data` (kept for the next run)."""
    tonight = data / "tonight.duckdb"
    if tonight.exists():
        return tonight
    night = data / "night.duckdb"
    run([*CLI, "demo-data", str(data / "history"), "--scale", str(scale), "--as-of", AS_OF.isoformat(), "-q"], work)
    run([*CLI, "ingest", "--config", str(data / "history" / "sources.toml"), "--db", str(night), "-q"], work)
    build(night, AS_OF, work)
    new_day = data / "new-day"
    run([*CLI, "demo-data", str(new_day), "--scale", str(scale), "--as-of", NEW_DAY.isoformat(), "--days", "1",
         "--seed", "1021", "-q"], work)  # fmt: skip
    run([*CLI, "ingest", "--config", str(new_day / "sources.toml"), "--db", str(night), "-q"], work)
    night.rename(tonight)
    return tonight


def bench_nightly(data: Path, scale: float, repeat: int, work: Path) -> dict:
    tonight = prepare_nightly(data, scale, work)
    runs: dict[str, list[dict]] = {"nightly (ours)": [], "full refresh": []}
    for _ in range(repeat):
        for name, dbt_args in (("nightly (ours)", ()), ("full refresh", ("--full-refresh",))):
            db = work / "run.duckdb"
            shutil.copyfile(tonight, db)
            runs[name].append(build(db, NEW_DAY, work, *dbt_args))
            for leftover in work.glob("run.*"):
                leftover.unlink()
    medians = {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for name, rs in runs.items()}
    ours, full = medians["nightly (ours)"]["seconds"], medians["full refresh"]["seconds"]
    return {"scale": scale, "medians": medians, "ratio": round(ours / full, 2), "runs": runs}


def bench_analyzer(data: Path, events: int, repeat: int, work: Path) -> dict:
    folder = data / f"analyzer-{events}"
    history, file, built = folder / "history.jsonl", folder / "feedback.jsonl", folder / "built.duckdb"
    day_events = max(1, events // 90)  # the history spans 90 days
    if not built.exists():
        folder.mkdir(parents=True, exist_ok=True)
        write_analyzer_jsonl(history, events, seed=7, as_of=AS_OF, days=90)
        shutil.copyfile(history, file)
        db = folder / "building.duckdb"
        run([*CLI, "ingest", "analyzer", str(file), "--db", str(db), "-q"], work)
        run([*CLI, "build", "--db", str(db), "--as-of", AS_OF.isoformat(), "--", "--select", *ANALYZER_MARTS], work)
        db.rename(built)
        write_analyzer_jsonl(folder / "day.jsonl", day_events, seed=8, as_of=NEW_DAY, days=1)
    shutil.copyfile(history, file)  # the file as last night's ingest read it, then the new day appended
    with file.open("ab") as grown:
        grown.write((folder / "day.jsonl").read_bytes())
    runs: dict[str, list[float]] = {"ours": [], "ingest": [], "build": [], "analyzer's own way": []}
    for _ in range(repeat):
        db = work / "run.duckdb"
        shutil.copyfile(built, db)
        ingest_s, _ = run([*CLI, "ingest", "analyzer", str(file), "--db", str(db), "-q"], work)
        build_s, _ = run(
            [*CLI, "build", "--db", str(db), "--as-of", NEW_DAY.isoformat(), "--", "--select", *ANALYZER_MARTS], work
        )
        baseline_s, _ = run(
            [PYTHON, str(ROOT / "bench" / "analyzer_baseline.py"), str(file), "--as-of", NEW_DAY.isoformat()], work
        )
        for name, seconds in (
            ("ours", ingest_s + build_s),
            ("ingest", ingest_s),
            ("build", build_s),
            ("analyzer's own way", baseline_s),
        ):
            runs[name].append(round(seconds, 2))
        for leftover in work.glob("run.*"):
            leftover.unlink()
    medians = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "events": events,
        "day_events": day_events,
        "medians": medians,
        "speedup": round(medians["analyzer's own way"] / medians["ours"], 1),
        "runs": runs,
    }


def markdown(results: dict) -> str:
    lines = [f"Run {results['started']} on {results['machine']} (load average at the start {results['load']:.2f}).", ""]
    if nightly := results.get("nightly"):
        lines += [
            f"Demo scale {nightly['scale']:g}, one new day, `build`, median of {len(nightly['runs']['full refresh'])}:",
            "",
            "| build | end to end | of which dbt | of which publish |",
            "|---|---:|---:|---:|",
        ]
        for name, m in nightly["medians"].items():
            lines.append(f"| {name} | {m['seconds']:.1f} s | {m['dbt_elapsed']:.1f} s | {m['publish'] or 0:.1f} s |")
        lines += ["", f"Ratio nightly / full: {nightly['ratio']:.2f} (goal: at most 15 s and at most 0.3x).", ""]
    if analyzer := results.get("analyzer"):
        m = analyzer["medians"]
        theirs = m["analyzer's own way"]
        lines += [
            f"Analyzer history of {analyzer['events']:,} events plus one new day ({analyzer['day_events']:,} events "
            "appended), median of 3:",
            "",
            "| ours: ingest + build | of which ingest | of which build | analyzer's own way | speedup (goal >= 10x) |",
            "|---:|---:|---:|---:|---:|",
            f"| {m['ours']:.2f} s | {m['ingest']:.2f} s | {m['build']:.2f} s | {theirs:.2f} s "
            f"| {analyzer['speedup']:.1f}x |",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=100.0)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="nightly,analyzer")
    parser.add_argument("--work", type=Path, default=None, help="keep the generated data here between runs")
    args = parser.parse_args()
    only = set(args.only.split(","))
    results: dict = {
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load": os.getloadavg()[0],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-nightly-") as folder:
        work = Path(folder)
        data = args.work.resolve() if args.work else work / "data"
        data.mkdir(parents=True, exist_ok=True)
        if "nightly" in only:
            results["nightly"] = bench_nightly(data / f"scale-{args.scale:g}", args.scale, args.repeat, work)
            print(json.dumps(results["nightly"]["medians"]), flush=True)
        if "analyzer" in only:
            results["analyzer"] = bench_analyzer(data, args.events, args.repeat, work)
            print(json.dumps(results["analyzer"]["medians"]), flush=True)
    (OUT / "nightly_build.json").write_text(json.dumps(results, indent=2))
    print(markdown(results))


if __name__ == "__main__":
    main()
