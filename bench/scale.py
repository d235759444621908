"""Benchmark: the whole project at two demo scales side by side (issue 30: one machine to 100 million signals).

    .venv/bin/python -m bench.scale [--scales 100,1000] [--work /work/bench-data/scale]
                                    [--phases data+ingest,build,nightly,queries,forget,report,disk]
                                    [--loads 5] [--memory-limit 6GB] [--out bench/out/scale.json] [--keep]

Per scale, in `WORK/scale-<S>/` (each phase runs alone on what the earlier ones left there):

data+ingest: the demo data as of AS_OF, generated and ingested ONE SOURCE AT A TIME (`demo-data --source`),
    each source's files deleted after its ingest, so the disk holds one source's files at once (scale 1000
    is about 57 GB of files). Time and peak RSS of each generation and ingest, the warehouse's size.
build: a full `build --as-of AS_OF` of that warehouse: time, peak RSS (dbt runs inside the command's child
    process tree: the figure is the largest process's), dbt's slowest nodes, warehouse and serving sizes.
nightly: one new day (`demo-data --days 1 --seed 1021 --as-of AS_OF+1`) ingested into a copy of the built
    warehouse (with its serving file), then `build --as-of AS_OF+1` (the nightly's build, publish included)
    against `build --as-of AS_OF+1 -- --full-refresh` on another copy; the publish seconds each build
    printed; then, on the first copy, `publish` alone against `publish --full` (when the option exists).
    Where the disk holds no copy (a big scale), all of it in place, the full refresh last.
queries: bench/dashboard_queries.py on the served file: p95 per page.
forget: on copies of the built warehouse (in place where the disk holds none), `forget` as an operator runs it
    (erase, rebuild, rewrite, verify) of one user against `--user-ids-file` with 100 other users (when the
    option exists): time, peak RSS, the rewrite's seconds and whether it fell back to the whole file.
report: `report` of the built warehouse: time and peak RSS.
disk: the sizes of the warehouse, the serving file, the archive and the spill folder.

Before starting, the disk each scale needs is estimated and printed; a scale the free space cannot hold is
refused in one line that names the largest scale it holds. `/proc/loadavg` is recorded at the start and end
of each phase. Results accumulate in bench/out/scale.json (a phase run alone replaces that phase's figures)
and are printed as Markdown: per scale the figures, the growth ratios between the two scales, and each goal of
the issue, met or not.
--memory-limit sets FEEDBACK_MEMORY_LIMIT for every command (default: the environment's, else the project's).
Without --keep, the work folder of a scale is deleted after its last phase.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.scale_report import GOALS, markdown
from demo.dataset import SOURCES
from warehouse.build_record import record_path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "cli"]
OUT = ROOT / "bench" / "out"
AS_OF = dt.date(2026, 11, 1)
NEW_DAY = AS_OF + dt.timedelta(days=1)
PHASES = ("data+ingest", "build", "nightly", "queries", "forget", "report", "disk")
PUBLISHED = re.compile(r"published .*? in (?P<seconds>[\d.]+) s")
PAGE_ROW = re.compile(r"^\| (?P<page>[^|]+?) \| (?P<calls>\d+) \| (?P<p50>\d+) \| (?P<p95>\d+) \| (?P<max>\d+) \|$")
# disk per unit of demo scale, measured at scales 100 and 300 (2026-11-25, docs/benchmarks.md: 17.5 MB of
# warehouse, 12.2 MB of serving file, 51 MB of files in all per unit of scale; reactions beyond 20,000 blob
# files go to one JSON-lines export, so no source grows in files, and none is above 30 MB per unit); at the
# peak the disk holds one source's files and the warehouse, or the warehouse, its serving file and the one
# being published (a copy of the last one, patched: up to 1.54x a full publish's size at demo scale), or the
# warehouse and forget's rewritten copy of it
LARGEST_SOURCE_MB_PER_SCALE = 30.0
WAREHOUSE_MB_PER_SCALE = 17.5
SERVING_MB_PER_SCALE = 12.5
# what DuckDB spills while a publish takes its keyed differences under the commands' 1GB memory limit: 13 GB at
# scale 800 (2026-11-29, `publish` after the nightly), written to the warehouse's spill folder beside the files
SPILL_MB_PER_SCALE = 16.5
MARGIN_MB = 2_000


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def size_mb(path: Path) -> float:
    """The disk `path` takes (its blocks, a folder's files together)."""
    if path.is_file():
        return round(path.stat().st_blocks * 512 / 1e6, 1)
    if path.is_dir():
        return round(sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file()) / 1e6, 1)
    return 0.0


class Runner:
    """Runs commands of one scale in fresh processes: dbt's target/ and logs/, every output, in `folder`."""

    def __init__(self, folder: Path, memory_limit: str | None) -> None:
        self.folder = folder
        self.env = {
            **os.environ,
            "DBT_TARGET_PATH": str(folder / "target"),
            "DBT_LOG_PATH": str(folder / "logs"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }
        self.env.pop("FEEDBACK_DB", None)
        if memory_limit:
            self.env["FEEDBACK_MEMORY_LIMIT"] = memory_limit
        self.count = 0

    def run(self, *args: object, python: bool = False) -> dict:
        """`feedback-analytics ARGS` (or `python ARGS`): seconds, peak RSS (MB, of the largest process of its
        tree that was waited for: os.wait4's ru_maxrss of the child, which covers dbt inside `build`), output."""
        self.count += 1
        log = self.folder / "logs" / f"{self.count:03d}.out"
        log.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, *map(str, args)] if python else [*CLI, *map(str, args)]
        started = time.perf_counter()
        with log.open("w") as out:
            proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)  # fmt: skip
            _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        output = log.read_text(errors="replace")
        code = proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        if code != 0:
            raise SystemExit(f"error: {' '.join(command[2:])} failed ({code}), see {log}:\n{output[-3000:]}")
        return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024), "output": output}

    def has_option(self, command: str, option: str) -> bool:
        done = subprocess.run([*CLI, command, "--help"], cwd=ROOT, env=self.env, capture_output=True, text=True)
        return option in done.stdout


def figures(result: dict) -> dict:
    return {key: value for key, value in result.items() if key != "output"}


def room_for_a_copy(db: Path) -> bool:
    """Whether the disk holds a copy of the warehouse and its serving file beside them, with room for what
    a build (a new serving file) or forget (a rewritten warehouse) writes on that copy."""
    copy_mb = size_mb(db) + size_mb(serving_of(db))
    return shutil.disk_usage(db.parent).free / 1e6 > 2 * copy_mb + MARGIN_MB


def copy_warehouse(db: Path, to: Path) -> Path:
    """`db`, its serving file and its build record copied to `to` (reflinked where the file system can): a copy
    without the record would be a warehouse never built, whose next build (the nightly's, and `forget`'s
    rebuild) tests every row instead of the new loads (operations/data_test_scope.py)."""
    for source, target in ((db, to), (serving_of(db), serving_of(to)), (record_path(db), record_path(to))):
        if source.exists():
            subprocess.run(["cp", "--reflink=auto", str(source), str(target)], check=True)
    return to


def remove_warehouse(db: Path) -> None:
    for path in (db, Path(f"{db}.wal"), serving_of(db), record_path(db), Path(f"{db}.tmp"),
                 db.parent / f"{db.stem}-archive"):  # fmt: skip
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    for leftover in db.parent.glob(f".{db.name}*"):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()


def serving_of(db: Path) -> Path:
    return db.with_name(f"{db.stem}.serving.duckdb")


def phase_data_ingest(runner: Runner, scale: float, db: Path) -> dict:
    remove_warehouse(db)
    sources = {}
    for source in SOURCES:
        folder = runner.folder / f"data-{source}"
        shutil.rmtree(folder, ignore_errors=True)
        generated = runner.run("demo-data", folder, "--scale", scale, "--as-of", AS_OF, "--source", source, "-q")
        files_mb = size_mb(folder)
        ingested = runner.run("ingest", "--config", folder / "sources.toml", "--db", db, "-q")
        shutil.rmtree(folder)
        sources[source] = {"files_mb": files_mb, "generate": figures(generated), "ingest": figures(ingested)}
        print(f"  {source}: {files_mb:,.0f} MB of files, ingest {ingested['seconds']:.1f} s", flush=True)
    return {
        "sources": sources,
        "ingest_seconds": round(sum(s["ingest"]["seconds"] for s in sources.values()), 2),
        "ingest_peak_rss_mb": max(s["ingest"]["peak_rss_mb"] for s in sources.values()),
        "files_mb": round(sum(s["files_mb"] for s in sources.values()), 1),
        "warehouse_mb": size_mb(db),
    }


def slowest_nodes(runner: Runner, count: int = 8) -> list[dict]:
    document = json.loads((runner.folder / "target" / "run_results.json").read_text())
    nodes = sorted(document.get("results", []), key=lambda node: -node.get("execution_time", 0))
    return [{"node": n["unique_id"], "seconds": round(n["execution_time"], 2)} for n in nodes[:count]]


def build(runner: Runner, db: Path, as_of: dt.date, *dbt_args: str) -> dict:
    result = runner.run("build", "--db", db, "--as-of", as_of, *(("--", *dbt_args) if dbt_args else ()))
    published = PUBLISHED.search(result["output"])
    return {**figures(result), "publish_seconds": float(published["seconds"]) if published else None,
            "slowest": slowest_nodes(runner)}  # fmt: skip


def phase_build(runner: Runner, db: Path) -> dict:
    done = build(runner, db, AS_OF)
    return {**done, "warehouse_mb": size_mb(db), "serving_mb": size_mb(serving_of(db))}


def phase_nightly(runner: Runner, scale: float, db: Path) -> dict:
    """With room on the disk, each build on its own copy of the built warehouse with the new day ingested;
    without, in place: the new day ingested, the nightly build, the publishes, then the full refresh of the
    same warehouse (which recomputes everything whatever was built before). In place, the warehouse is as
    of the new day afterwards; run again, the phase finds the new day loaded and the nightly has nothing new."""
    day = runner.folder / "new-day"
    if not (day / "sources.toml").exists():
        runner.run("demo-data", day, "--scale", scale, "--as-of", NEW_DAY, "--days", 1, "--seed", 1021, "-q")
    in_place = not room_for_a_copy(db)
    loaded = runner.folder / "new-day-ingested-in-place"
    results: dict = {"new_day_files_mb": size_mb(day), "in_place": in_place, "new_day_loaded_before": loaded.exists()}
    for name, dbt_args in (("nightly", ()), ("full_refresh", ("--full-refresh",))):
        target = db if in_place else copy_warehouse(db, runner.folder / f"{name}.duckdb")
        try:
            if not (in_place and loaded.exists()):
                ingested = runner.run("ingest", "--config", day / "sources.toml", "--db", target, "-q")
                results[f"{name}_ingest"] = figures(ingested)
                if in_place:
                    loaded.touch()
            results[name] = build(runner, target, NEW_DAY, *dbt_args)
            print(f"  {name}: build {results[name]['seconds']:.1f} s", flush=True)
            if name == "nightly":
                results["publish"] = figures(runner.run("publish", "--db", target))
                full = runner.has_option("publish", "--full")
                results["publish_full"] = figures(runner.run("publish", "--db", target, "--full")) if full else None
        finally:
            if not in_place:
                remove_warehouse(target)
    return results


def phase_queries(runner: Runner, db: Path, loads: int) -> dict:
    result = runner.run("-m", "bench.dashboard_queries", "--db", db, "--loads", loads, python=True)
    pages = {
        match["page"]: {"calls": int(match["calls"]), "p50_ms": int(match["p50"]), "p95_ms": int(match["p95"])}
        for line in result["output"].splitlines()
        if (match := PAGE_ROW.match(line.strip()))
    }
    return {"loads": loads, "pages": pages, "peak_rss_mb": result["peak_rss_mb"]}


def user_ids(db: Path, count: int) -> list[str]:
    """`count` distinct user ids of the warehouse's reactions, in a fixed order."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select distinct user_id from raw.turn_reactions where user_id is not null order by user_id limit ?",
            [count],
        ).fetchall()
    return [row[0] for row in rows]


REWROTE = re.compile(r"rewrote .*? in ([0-9.]+) s")


def _forget_figures(done: dict) -> dict:
    """The command's figures, with the physical rewrite's seconds and whether it fell back to the whole file."""
    found = REWROTE.search(done["output"])
    return {
        **figures(done),
        "rewrite_seconds": float(found[1]) if found else None,
        "whole_file": "a fresh copy of the whole file" in done["output"],
    }


def phase_forget(runner: Runner, db: Path) -> dict:
    """Each forget on its own copy of the warehouse where the disk has room, else in place (other users each), as
    an operator runs it: erase, rebuild, rewrite, verify (without the rebuild the marts still hold the ids and
    the rewrite falls back to the whole file, which is not what `forget` does)."""
    ids = user_ids(db, 101)
    in_place = not room_for_a_copy(db)
    results: dict = {"users": len(ids), "in_place": in_place}
    batch = runner.has_option("forget", "--user-ids-file")
    for name in ("one_user", "batch_100"):
        if name == "batch_100" and not batch:
            results[name] = None
            continue
        copy = db if in_place else copy_warehouse(db, runner.folder / "forget.duckdb")
        try:
            if name == "one_user":
                results[name] = _forget_figures(runner.run("forget", "--db", copy, "--user-id", ids[0]))
            else:
                file = runner.folder / "user-ids.txt"
                file.write_text("".join(f"{user}\n" for user in ids[1:]))
                results[name] = _forget_figures(runner.run("forget", "--db", copy, "--user-ids-file", file))
            print(
                f"  forget {name}: {results[name]['seconds']:.1f} s (rewrite {results[name]['rewrite_seconds']} s, "
                f"whole file: {results[name]['whole_file']})",
                flush=True,
            )
        finally:
            if not in_place:
                remove_warehouse(copy)
    return results


def phase_report(runner: Runner, db: Path) -> dict:
    out = runner.folder / "report.html"
    result = figures(runner.run("report", "--db", db, "--out", out))
    out.unlink(missing_ok=True)
    return result


def phase_disk(db: Path) -> dict:
    return {
        "warehouse_mb": size_mb(db),
        "serving_mb": size_mb(serving_of(db)),
        "archive_mb": size_mb(db.parent / f"{db.stem}-archive"),
        "spill_folder_mb": size_mb(Path(f"{db}.tmp")),
    }


def needed_mb(scale: float) -> float:
    """The disk a scale needs at its peak, every copy made in place (a publish: the warehouse, the serving file,
    the new one and the spill of its differences)."""
    peak = max(
        LARGEST_SOURCE_MB_PER_SCALE + WAREHOUSE_MB_PER_SCALE,
        2 * WAREHOUSE_MB_PER_SCALE + SERVING_MB_PER_SCALE,
        WAREHOUSE_MB_PER_SCALE + 1.6 * SERVING_MB_PER_SCALE + SPILL_MB_PER_SCALE,
    )
    return scale * (peak + SERVING_MB_PER_SCALE) + MARGIN_MB


def largest_scale(free_mb: float) -> float:
    return max(0.0, (free_mb - MARGIN_MB) / (needed_mb(1) - MARGIN_MB))


def run_scale(scale: float, args: argparse.Namespace, phases: list[str], saved: dict) -> None:
    folder = args.work / f"scale-{scale:g}"
    folder.mkdir(parents=True, exist_ok=True)
    runner = Runner(folder, args.memory_limit)
    db = folder / "warehouse.duckdb"
    figures_of = saved.setdefault("scales", {}).setdefault(f"{scale:g}", {})
    for phase in phases:
        if phase != "data+ingest" and not db.exists():
            raise SystemExit(f"error: no warehouse {db}: run the data+ingest phase (and build) of scale {scale:g}")
        print(f"scale {scale:g}: {phase} (load {loadavg()})", flush=True)
        load_start = loadavg()
        started = time.perf_counter()
        if phase == "data+ingest":
            result = phase_data_ingest(runner, scale, db)
        elif phase == "build":
            result = phase_build(runner, db)
        elif phase == "nightly":
            result = phase_nightly(runner, scale, db)
        elif phase == "queries":
            result = phase_queries(runner, db, args.loads)
        elif phase == "forget":
            result = phase_forget(runner, db)
        elif phase == "report":
            result = phase_report(runner, db)
        else:
            result = phase_disk(db)
        result |= {
            "load_start": load_start,
            "load_end": loadavg(),
            "phase_seconds": round(time.perf_counter() - started),
        }
        figures_of[phase] = result
        save(saved, args.out)
    if not args.keep:
        shutil.rmtree(folder)


def save(saved: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="100,1000", help="demo scales, comma-separated (default 100,1000)")
    parser.add_argument("--work", type=Path, default=Path("/work/bench-data/scale"), help="where the data goes")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"some of {','.join(PHASES)}")
    parser.add_argument("--loads", type=int, default=5, help="dashboard loads per page (default 5)")
    parser.add_argument("--memory-limit", default=None, help="FEEDBACK_MEMORY_LIMIT for every command")
    parser.add_argument("--out", type=Path, default=OUT / "scale.json", help="the results (bench/out/scale.json)")
    parser.add_argument("--keep", action="store_true", help="keep each scale's work folder afterwards")
    args = parser.parse_args()
    try:
        scales = [float(text) for text in args.scales.split(",")]
    except ValueError:
        raise SystemExit(f"error: --scales {args.scales!r} is not a list of numbers such as 100,1000") from None
    phases = [phase for phase in PHASES if phase in args.phases.split(",")]
    unknown = set(args.phases.split(",")) - set(PHASES)
    if unknown or not phases or any(scale <= 0 for scale in scales):
        raise SystemExit(f"error: --phases takes some of {','.join(PHASES)}; --scales positive numbers")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    free_mb = shutil.disk_usage(args.work).free / 1e6
    for scale in scales:
        need = needed_mb(scale)
        print(f"scale {scale:g}: needs about {need:,.0f} MB of disk at once; {free_mb:,.0f} MB free in {args.work}")
        if "data+ingest" in phases and need > free_mb:
            raise SystemExit(
                f"error: scale {scale:g} needs about {need:,.0f} MB of disk, {free_mb:,.0f} MB free in {args.work}: "
                f"the largest scale it holds is about {largest_scale(free_mb):,.0f}"
            )
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved |= {
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "memory_limit": args.memory_limit or os.environ.get("FEEDBACK_MEMORY_LIMIT") or "the project's default",
        "scales_compared": [f"{scale:g}" for scale in scales],
        "goals": GOALS,
    }
    for scale in scales:
        run_scale(scale, args, phases, saved)
    print(markdown(saved))


if __name__ == "__main__":
    main()
