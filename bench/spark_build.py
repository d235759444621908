"""Benchmark: `feedback-analytics build` on DuckDB and on local Spark, and the Parquet lake export behind it.

    .venv/bin/python -m bench.spark_build [--scales 10,100] [--repeat 3] [--only build,lake]
                                          [--build-repeat 1] [--work DIR] [--spark-timeout-min 45]

build: per scale, demo data (`demo-data --scale S --as-of 2026-11-20 --seed 7`) is
    generated and ingested once; then `build --db DB` (DuckDB) and `build --db DB2
    --target spark` (DB2 a copy of the same ingested file) run as a user runs them,
    each in a fresh process, Spark through a Thrift Server this script starts
    (tests/support/spark.py: local[2], a fresh server and metastore per Spark build,
    so each is a first build like the DuckDB one). From the command's output, with a
    time stamp per line: the lake export (`lake ...: ... in X s`), dbt's execution
    (`Finished running ... (N s)`), dbt's start-up and parse (the rest of dbt), and
    the tail after dbt finished (dbt's exit, the `spark_mart_catalog` run-operation and
    the copy of the marts into DuckDB; both are then timed once more on their own in a
    fresh process). From dbt's run_results.json: the summed execution time of models and
    of data tests, their medians (Spark's per-query overhead) and the 5 slowest models.
lake: on the warehouse of the largest scale, a full export to an empty lake folder
    (`operations.spark.export_lake_of`, what the build runs) against DuckDB's bare
    `COPY (select * from raw.<t>) TO '<t>.parquet' (FORMAT parquet)` of the same tables,
    each in a fresh process, alternating, median of --repeat; then an incremental export
    with nothing changed, into a lake just written (median of --repeat).

Results go to bench/out/spark_results.json (rewritten after every step) and are printed
as Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import duckdb

from tests.support.spark import start_thrift_server, stop_thrift_server
from warehouse.raw_tables import RAW_TABLES

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
CLI = [PYTHON, "-m", "cli"]
OUT = ROOT / "bench" / "out"
AS_OF = "2026-11-20"
SEED = 7
SIGNAL_TABLES = ("analyzer_events", "session_feedback", "turn_reactions", "workspace_feedback")

LAKE_LINE = re.compile(
    r"lake .*: ([\d,]+) day partition\(s\) written \(([\d,]+) rows\), ([\d,]+) deleted, in ([\d.]+) s"
)
FINISHED_LINE = re.compile(r"Finished running .* in .*\(([\d.]+)s\)")
FIRST_NODE = re.compile(r"\b1 of \d+ START ")
COPIED_LINE = re.compile(r"copied (\d+) marts")

# our side of the lake benchmark: what `build --target spark` runs before dbt, alone in a fresh process
OURS_EXPORT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from operations.spark import export_lake_of
    export = export_lake_of(Path(sys.argv[1]), Path(sys.argv[2]))
    print(json.dumps({"seconds": export.seconds, "partitions": sum(export.partitions_written.values()),
                      "rows": sum(export.rows_written.values())}))
    """
)
# the bare baseline: DuckDB's own COPY of each raw table to one Parquet file
BARE_COPY = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    for table in sys.argv[3:]:
        con.execute(f"copy (select * from raw.{table}) to '{sys.argv[2]}/{table}.parquet' (format parquet)")
    """
)
# the two steps after dbt, each timed on its own: the catalog run-operation and the copy into DuckDB
CATALOG_AND_COPY = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from operations.spark import mart_catalog, publish_marts, spark_environment
    started = time.perf_counter()
    catalog = mart_catalog(SimpleNamespace(name="spark"), spark_environment(Path(sys.argv[2])))
    between = time.perf_counter()
    marts = publish_marts(Path(sys.argv[1]), catalog)
    print(json.dumps({"catalog_s": between - started, "copy_s": time.perf_counter() - between, "marts": marts}))
    """
)


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started, done.stdout


def run_with_line_times(
    command: list[str], env: dict[str, str], log: Path, timeout_s: float | None = None
) -> tuple[float, list[tuple[float, str]], bool, float]:
    """Run `command` (stdout and stderr together), stamping each output line with the seconds since the start.
    Past `timeout_s` the command's process group is killed; returns (seconds, lines, finished, the mean of the
    machine's 1-minute load average, sampled every 10 s while it ran: the machine is shared)."""
    started = time.perf_counter()
    lines: list[tuple[float, str]] = []
    loads = [os.getloadavg()[0]]
    with (
        log.open("w") as out,
        subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        ) as proc,
    ):
        assert proc.stdout is not None
        killer = None
        if timeout_s is not None:
            killer = threading.Timer(timeout_s, lambda: os.killpg(proc.pid, signal.SIGKILL))
            killer.start()
        try:
            for line in proc.stdout:
                at = time.perf_counter() - started
                lines.append((at, line.rstrip("\n")))
                if at > 10 * len(loads):
                    loads.append(os.getloadavg()[0])
                out.write(f"{at:9.2f}  {line}")
                out.flush()
            proc.wait()
        finally:
            if killer is not None:
                killer.cancel()
            if proc.poll() is None:  # this script was stopped: so is the command, with its dbt
                os.killpg(proc.pid, signal.SIGKILL)
    seconds = time.perf_counter() - started
    if proc.returncode != 0 and not (timeout_s is not None and seconds >= timeout_s):
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: see {log}")
    return seconds, lines, proc.returncode == 0, round(statistics.mean(loads), 2)


def duckdb_files(db: Path) -> list[Path]:
    return [db, db.with_name(db.name + ".wal")]


def copy_db(source: Path, target: Path) -> Path:
    for path in duckdb_files(target):
        path.unlink(missing_ok=True)
    shutil.copy(source, target)
    return target


def prepare(work: Path, scale: float) -> dict:
    """Demo data at `scale`, ingested into a DuckDB file (kept in `work` and reused when already there)."""
    folder = work / f"scale-{scale:g}"
    marker = folder / "prepared.json"
    if marker.is_file():
        return json.loads(marker.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    demo, db = folder / "demo", folder / "ingested.duckdb"
    generate_s, _ = timed(
        [*CLI, "demo-data", str(demo), "--scale", str(scale), "--as-of", AS_OF, "--seed", str(SEED), "-q"]
    )
    ingest_s, _ = timed([*CLI, "ingest", "--config", str(demo / "sources.toml"), "--db", str(db), "-q"])
    with duckdb.connect(str(db), read_only=True) as con:
        signals = sum(con.execute(f"select count(*) from raw.{t}").fetchall()[0][0] for t in SIGNAL_TABLES)
        raw_rows = dict(
            con.execute(
                "select table_name, estimated_size from duckdb_tables() where schema_name = 'raw' order by 1"
            ).fetchall()
        )
    prepared = {
        "scale": scale,
        "db": str(db),
        "db_mb": round(db.stat().st_size / 1e6, 1),
        "signals": signals,
        "raw_rows": raw_rows,
        "generate_s": round(generate_s, 1),
        "ingest_s": round(ingest_s, 1),
    }
    marker.write_text(json.dumps(prepared, indent=1))
    return prepared


def node_summary(run_results: Path) -> dict:
    """Per kind of node, the summed and median execution time from dbt's run_results.json; the 5 slowest models."""
    results = json.loads(run_results.read_text())
    by_kind: dict[str, list[dict]] = {}
    for result in results["results"]:
        by_kind.setdefault(result["unique_id"].split(".")[0], []).append(result)
    summary: dict = {"elapsed_s": round(results.get("elapsed_time", 0.0), 1)}
    for kind, nodes in sorted(by_kind.items()):
        seconds = [node["execution_time"] for node in nodes]
        summary[kind] = {
            "count": len(nodes),
            "sum_s": round(sum(seconds), 1),
            "median_s": round(statistics.median(seconds), 3),
            "max_s": round(max(seconds), 2),
            "not_passed": sorted({n["status"] for n in nodes} - {"success", "pass"}),
        }
    models = sorted(by_kind.get("model", []), key=lambda node: -node["execution_time"])
    summary["slowest_models"] = [
        {"model": node["unique_id"].split(".")[-1], "seconds": round(node["execution_time"], 2)} for node in models[:5]
    ]
    return summary


def build_breakdown(seconds: float, lines: list[tuple[float, str]]) -> dict:
    """Where the command's wall time went, from the time stamps of its output lines (the parts add up to the wall):
    the lake export; start-up (our CLI, its checks, dbt's start-up and parse, up to dbt's `Concurrency:` line);
    dbt's set-up (connection, relation cache, on-run-start hook, up to the first node); the nodes (up to dbt's
    `Finished running` line); what came after (dbt's exit and, on Spark, the catalog run-operation and the copy)."""
    result: dict = {"wall_s": round(seconds, 1)}
    marks: dict[str, float] = {}
    for at, line in lines:
        if "lake" not in marks and (match := LAKE_LINE.search(line)):
            marks["lake"] = at
            result["lake"] = {
                "partitions": int(match[1].replace(",", "")),
                "rows": int(match[2].replace(",", "")),
                "seconds": float(match[4]),
            }
        elif "concurrency" not in marks and "Concurrency:" in line:
            marks["concurrency"] = at
        elif "first_node" not in marks and FIRST_NODE.search(line) and "hook:" not in line:
            marks["first_node"] = at
        elif match := FINISHED_LINE.search(line):
            marks["finished"] = at
            result["dbt_execution_s"] = float(match[1])
        elif match := COPIED_LINE.search(line):
            result["marts_copied"] = int(match[1])
    if not {"concurrency", "first_node", "finished"} <= set(marks):
        return result
    lake_s = result["lake"]["seconds"] if "lake" in result else 0.0
    result["startup_and_parse_s"] = round(marks["concurrency"] - lake_s, 1)
    result["dbt_setup_s"] = round(marks["first_node"] - marks["concurrency"], 1)
    result["nodes_s"] = round(marks["finished"] - marks["first_node"], 1)
    result["after_dbt_s"] = round(seconds - marks["finished"], 1)
    return result


def dbt_env(run: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """dbt's files of one run in `run` (the spark_mart_catalog run-operation writes a run_results.json too,
    so the build gets its own --target-path and everything else DBT_TARGET_PATH)."""
    return {
        **os.environ,
        **(extra or {}),
        "DBT_TARGET_PATH": str(run / "other-target"),
        "DBT_LOG_PATH": str(run / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_USE_COLORS": "false",
    }


def build_duckdb(prepared: dict, run: Path) -> dict:
    run.mkdir(parents=True)
    db = copy_db(Path(prepared["db"]), run / "duckdb.duckdb")
    command = [*CLI, "build", "--db", str(db), "--as-of", AS_OF, "--", "--target-path", str(run / "build-target")]
    seconds, lines, _, load = run_with_line_times(command, dbt_env(run), run / "build.log")
    return {
        "mean_load": load,
        **build_breakdown(seconds, lines),
        "nodes": node_summary(run / "build-target" / "run_results.json"),
    }


def build_spark(prepared: dict, run: Path, driver_memory: str, timeout_s: float) -> dict:
    """The Spark build through a Thrift Server started for it (fresh metastore), stopped afterwards."""
    run.mkdir(parents=True)
    db = copy_db(Path(prepared["db"]), run / "spark.duckdb")
    spark_warehouse = run / "spark-warehouse"
    server_dir = run / "server"
    server_dir.mkdir()
    started = time.perf_counter()
    server = start_thrift_server(server_dir, driver_memory=driver_memory)
    result: dict = {"thrift_port": server.port, "server_start_s": round(time.perf_counter() - started, 1)}
    print(f"  Thrift Server on port {server.port} (pid {server.process.pid}, log {server.log})", flush=True)
    try:
        env = dbt_env(run, server.environment(spark_warehouse))
        command = [
            *CLI,
            "build",
            "--db",
            str(db),
            "--as-of",
            AS_OF,
            "--target",
            "spark",
            "--",
            "--target-path",
            str(run / "build-target"),
        ]
        seconds, lines, finished, load = run_with_line_times(command, env, run / "build.log", timeout_s)
        result.update(mean_load=load, **build_breakdown(seconds, lines))
        if not finished:
            result["timed_out_after_s"] = round(seconds, 1)
            return result
        result["nodes"] = node_summary(run / "build-target" / "run_results.json")
        _, out = timed([PYTHON, "-c", CATALOG_AND_COPY, str(db), str(spark_warehouse)], env)
        result["after_dbt_alone"] = {k: round(v, 1) for k, v in json.loads(out.splitlines()[-1]).items()}
        result["lake_mb"] = round(folder_mb(spark_warehouse / "lake"), 1)
    finally:
        stop_thrift_server(server)
    return result


def folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def bench_lake(prepared: dict, work: Path, repeat: int) -> dict:
    """Our full export against DuckDB's bare COPY of the same tables; then an export with nothing changed."""
    db, base = Path(prepared["db"]), work / "lake-bench"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    ours, ours_inside, bare, sizes = [], [], [], {}
    for i in range(repeat):
        target = base / f"ours-{i}"
        seconds, out = timed([PYTHON, "-c", OURS_EXPORT, str(db), str(target)])
        ours.append(seconds)
        reported = json.loads(out.splitlines()[-1])
        ours_inside.append(reported["seconds"])
        sizes["ours_mb"] = round(folder_mb(target / "lake"), 1)
        if i < repeat - 1:
            shutil.rmtree(target)
        target = base / f"bare-{i}"
        target.mkdir()
        bare.append(timed([PYTHON, "-c", BARE_COPY, str(db), str(target), *sorted(RAW_TABLES)])[0])
        sizes["bare_mb"] = round(folder_mb(target), 1)
        shutil.rmtree(target)
    incremental, incremental_inside = [], []
    written = base / f"ours-{repeat - 1}"
    for _ in range(repeat):
        seconds, out = timed([PYTHON, "-c", OURS_EXPORT, str(db), str(written)])
        again = json.loads(out.splitlines()[-1])
        assert again["partitions"] == 0, again
        incremental.append(seconds)
        incremental_inside.append(again["seconds"])
    shutil.rmtree(base)
    result = {
        "scale": prepared["scale"],
        "rows": reported["rows"],
        "partitions": reported["partitions"],
        "tables": len(RAW_TABLES),
        **sizes,
        "ours_s": round(statistics.median(ours), 2),
        "bare_s": round(statistics.median(bare), 2),
        "ours_export_in_process_s": round(statistics.median(ours_inside), 2),
        "incremental_s": round(statistics.median(incremental), 2),
        "incremental_in_process_s": round(statistics.median(incremental_inside), 2),
        "ours_all": [round(x, 2) for x in ours],
        "bare_all": [round(x, 2) for x in bare],
        "incremental_all": [round(x, 2) for x in incremental],
    }
    result["ratio"] = round(result["ours_s"] / result["bare_s"], 2)
    return result


def bench_builds(prepared: dict, work: Path, args: argparse.Namespace) -> dict:
    """--build-repeat rounds of the DuckDB build then the Spark build, each on a fresh copy of the warehouse."""
    rounds = []
    for i in range(args.build_repeat):
        folder = work / f"scale-{prepared['scale']:g}" / f"round-{i}"
        shutil.rmtree(folder, ignore_errors=True)
        print(f"scale {prepared['scale']:g}, round {i + 1}: DuckDB build", flush=True)
        duck = build_duckdb(prepared, folder / "duckdb")
        print(f"  {duck['wall_s']} s; Spark build", flush=True)
        spark = build_spark(prepared, folder / "spark", args.driver_memory, args.spark_timeout_min * 60)
        print(f"  {spark['wall_s']} s", flush=True)
        rounds.append({"duckdb": duck, "spark": spark})
        shutil.rmtree(folder / "spark" / "spark-warehouse", ignore_errors=True)
        if "timed_out_after_s" in spark:
            break
    return {
        "scale": prepared["scale"],
        "signals": prepared["signals"],
        "generate_s": prepared["generate_s"],
        "ingest_s": prepared["ingest_s"],
        "db_mb": prepared["db_mb"],
        "duckdb_wall_all": [r["duckdb"]["wall_s"] for r in rounds],
        "spark_wall_all": [r["spark"]["wall_s"] for r in rounds],
        "rounds": rounds,
    }


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} s"


def markdown_builds(results: dict) -> list[str]:
    lines = [
        "| scale (signals) | engine | `build` wall | lake export | start-up + parse | dbt set-up (of which "
        "on-run-start hook) | nodes | after dbt (catalog run-op / copy, alone) | models: sum (median) "
        "| data tests: sum (median) | mean load |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---|---:|",
    ]
    for entry in results.get("builds", []):
        for engine, label in (("duckdb", "DuckDB"), ("spark", "Spark")):
            r = entry["rounds"][0][engine]
            scale = f"{entry['scale']:g} ({entry['signals']:,})"
            if "nodes" not in r:
                lines.append(f"| {scale} | {label} | stopped after {_s(r['wall_s'])} | | | | | | | | |")
                continue
            nodes, after = r["nodes"], r.get("after_dbt_alone")
            after_text = _s(r["after_dbt_s"]) + (f" ({after['catalog_s']} s / {after['copy_s']} s)" if after else "")
            hook = nodes.get("operation", {}).get("sum_s", 0)
            model, test = nodes.get("model", {}), nodes.get("test", {})
            lines.append(
                f"| {scale} | {label} | **{_s(r['wall_s'])}** | {_s(r.get('lake', {}).get('seconds'))} "
                f"| {_s(r['startup_and_parse_s'])} | {_s(r['dbt_setup_s'])} ({hook} s) | {_s(r['nodes_s'])} "
                f"| {after_text} | {model.get('sum_s', 0)} s ({model.get('count', 0)}; {model.get('median_s', 0)} s) "
                f"| {test.get('sum_s', 0)} s ({test.get('count', 0)}; {test.get('median_s', 0)} s) "
                f"| {r['mean_load']} |"
            )
    lines += ["", "| scale | engine | slowest 5 models (execution time) |", "|---|---|---|"]
    for entry in results.get("builds", []):
        for engine, label in (("duckdb", "DuckDB"), ("spark", "Spark")):
            nodes = entry["rounds"][0][engine].get("nodes")
            if nodes:
                slowest = ", ".join(f"{m['model']} {m['seconds']} s" for m in nodes["slowest_models"])
                lines.append(f"| {entry['scale']:g} | {label} | {slowest} |")
    return lines


def markdown(results: dict) -> str:
    lines = [f"Run {results['when']} on {results['machine']} (load average at the start {results['load']}).", ""]
    for entry in results.get("builds", []):
        lines.append(
            f"Scale {entry['scale']:g}: {entry['signals']:,} signals, generated in {entry['generate_s']} s, "
            f"ingested in {entry['ingest_s']} s ({entry['db_mb']} MB); builds per round (DuckDB / Spark): "
            f"{entry['duckdb_wall_all']} / {entry['spark_wall_all']} s."
        )
    if results.get("builds"):
        lines += ["", *markdown_builds(results), ""]
    if "lake" in results:
        r = results["lake"]
        lines += [
            f"| lake export, scale {r['scale']:g} ({r['rows']:,} rows, {r['tables']} tables) | ours (median) "
            "| bare COPY per table (median) | ratio | goal |",
            "|---|---:|---:|---:|---|",
            f"| full export to an empty lake ({r['partitions']} day partitions, {r['ours_mb']} MB; bare files "
            f"{r['bare_mb']} MB) | {r['ours_s']} s (export itself {r['ours_export_in_process_s']} s) "
            f"| {r['bare_s']} s | {r['ratio']} | <= 1.3 |",
            f"| incremental export, nothing changed | {r['incremental_s']} s "
            f"(export itself {r['incremental_in_process_s']} s) | | | |",
            "",
        ]
    return "\n".join(lines)


def save(results: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "spark_results.json").write_text(json.dumps(results, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="10,100", help="demo scales for the builds (the lake runs on the largest)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side of the lake benchmark (median)")
    parser.add_argument("--build-repeat", type=int, default=1, help="rounds of the two builds per scale")
    parser.add_argument("--only", default="build,lake")
    parser.add_argument("--work", type=Path, default=None, help="keep (and reuse) the ingested warehouses here")
    parser.add_argument("--driver-memory", default="4g", help="the Thrift Server's driver memory")
    parser.add_argument("--spark-timeout-min", type=float, default=45, help="stop a Spark build after this")
    args = parser.parse_args()
    # stopped with SIGTERM, the script still runs its `finally` blocks: the Thrift Server and the command stop too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    only = set(args.only.split(","))
    scales = sorted(float(s) for s in args.scales.split(","))
    results: dict = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load": round(os.getloadavg()[0], 2),
        "as_of": AS_OF,
        "seed": SEED,
        "builds": [],
    }
    work = args.work or Path(tempfile.mkdtemp(prefix="feedback-bench-spark-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for scale in scales:
            print(f"scale {scale:g}: demo data and ingest", flush=True)
            prepared = prepare(work, scale)
            print(json.dumps(prepared), flush=True)
            if "lake" in only and scale == scales[-1]:
                results["lake"] = bench_lake(prepared, work, args.repeat)
                print(json.dumps(results["lake"]), flush=True)
                save(results)
            if "build" in only:
                results["builds"].append(bench_builds(prepared, work, args))
                save(results)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    save(results)
    print()
    print(markdown(results))


if __name__ == "__main__":
    main()
