"""Benchmarks: our commands side by side with the bare baseline, in one run, on the same files.

    .venv/bin/python -m bench.run [--events 1000000] [--memory-events 1000000,2500000,5000000]
                                  [--pg-rows 1000000] [--repeat 3] [--scale 100]
                                  [--only ingest,memory,postgres,analyzer-script,dbt,dashboard]
                                  [--dashboard-loads 20]

`dashboard` runs on the warehouse of the `dbt` step (bench/dashboard_queries.py
and bench/dashboard_render.py, which also run alone on any built warehouse).

Every timing runs the real command line in a fresh process (as a user would)
and the baseline in a fresh process too, alternating, and reports the median.
Results go to bench/out/results.json and are printed as Markdown for
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import adbc_driver_postgresql.dbapi as pg
import duckdb

from demo import write_analyzer_jsonl
from warehouse.contracts import ANALYZER_EVENTS

ROOT = Path(__file__).resolve().parents[1]

PYTHON = sys.executable
CLI = [PYTHON, "-m", "cli"]
OUT = ROOT / "bench" / "out"
AS_OF = dt.date(2026, 11, 1)

# the bare baseline: DuckDB's JSON reader with explicit columns, straight into a table
ANALYZER_COLUMNS = {
    "event_id": "VARCHAR",
    "timestamp": "VARCHAR",
    "session_id": "VARCHAR",
    "skill_id": "VARCHAR",
    "invocation_uuid": "VARCHAR",
    "outcome": "VARCHAR",
    "confidence": "DOUBLE",
    "correction_type": "VARCHAR",
    "user_message_snippet": "VARCHAR",
    "turns_to_feedback": "BIGINT",
    "ai_tools_used": "VARCHAR[]",
    "dimension_hint": "VARCHAR",
}
assert set(ANALYZER_COLUMNS) == set(ANALYZER_EVENTS.columns)

# a wrapper that runs a command and prints the peak RSS of that child process (KiB)
PEAK_RSS = textwrap.dedent(
    """
    import resource, subprocess, sys
    code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(code)
    """
)


def fresh_db(tmp: Path, name: str) -> Path:
    db = tmp / f"{name}.duckdb"
    for path in (db, db.with_suffix(".duckdb.wal")):
        path.unlink(missing_ok=True)
    return db


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def bare_read_json(file: Path, db: Path) -> list[str]:
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in ANALYZER_COLUMNS.items()) + "}"
    sql = f"create table events as select * from read_json('{file}', format = 'newline_delimited', columns = {columns})"
    return [PYTHON, "-c", f"import duckdb; duckdb.connect({str(db)!r}).execute({sql!r})"]


def bench_analyzer_ingest(tmp: Path, events: int, repeat: int) -> dict:
    file = tmp / f"analyzer-{events}.jsonl"
    if not file.exists():
        write_analyzer_jsonl(file, events, seed=7, as_of=AS_OF)
    ours, bare = [], []
    for _ in range(repeat):
        db = fresh_db(tmp, "ours")
        ours.append(timed([*CLI, "ingest", "analyzer", str(file), "--db", str(db), "--quiet"]))
        db = fresh_db(tmp, "bare")
        bare.append(timed(bare_read_json(file, db)))
    result = {
        "events": events,
        "file_mb": round(file.stat().st_size / 1e6, 1),
        "ours_s": round(statistics.median(ours), 2),
        "bare_s": round(statistics.median(bare), 2),
        "ours_all": [round(x, 2) for x in ours],
        "bare_all": [round(x, 2) for x in bare],
    }
    result["ratio"] = round(result["ours_s"] / result["bare_s"], 2)
    return result


def peak_rss_mb(command: list[str]) -> float:
    out = subprocess.run([PYTHON, "-c", PEAK_RSS, *command], check=True, capture_output=True, text=True)
    return round(int(out.stdout.strip().splitlines()[-1]) / 1024, 1)


def bench_memory(tmp: Path, sizes: list[int]) -> list[dict]:
    rows = []
    for events in sizes:
        file = tmp / f"analyzer-{events}.jsonl"
        if not file.exists():
            write_analyzer_jsonl(file, events, seed=7, as_of=AS_OF)
        db = fresh_db(tmp, "memory")
        started = time.perf_counter()
        peak = peak_rss_mb([*CLI, "ingest", "analyzer", str(file), "--db", str(db), "--quiet"])
        rows.append(
            {
                "events": events,
                "file_mb": round(file.stat().st_size / 1e6, 1),
                "peak_rss_mb": peak,
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
        file.unlink()
    return rows


def _fill_postgres(dsn: str, rows: int, tmp: Path) -> None:
    """Create and fill session_feedback (upstream's shape) with COPY from a CSV DuckDB writes."""
    csv = tmp / "session_feedback.csv"
    duckdb.sql(
        f"""
        copy (
            select i as insertion_order,
                uuid()::varchar as id,
                sha256('thread-' || (i % 50000)::varchar) as session_id_opaque,
                case when i % 7 = 0 then null else 'user-' || (i % 3000)::varchar end as user_id_or_null,
                strftime(timestamp '2026-05-01' + to_seconds(i * 13), '%Y-%m-%dT%H:%M:%S.%fZ') as recorded_at,
                strftime(timestamp '2026-05-01' + to_seconds(i * 13), '%Y-%m-%d') as recorded_date,
                ['positive', 'negative', 'skip'][1 + i % 3] as label,
                i % 60 as turn_count_at_end,
                ['cli_end', 'cli_exit', 'api_end'][1 + i % 3] as source,
                1 as schema_version
            from range(1, {rows} + 1) as t(i)
        ) to '{csv}' (header false)
        """
    )
    with pg.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute(
            """
            create table session_feedback (
                insertion_order bigserial primary key, id text not null, session_id_opaque text not null,
                user_id_or_null text, recorded_at text not null, recorded_date text not null,
                label text not null check (label in ('positive', 'negative', 'skip')),
                turn_count_at_end int not null,
                source text not null check (source in ('cli_end', 'cli_exit', 'api_end')),
                schema_version int not null default 1, value jsonb)
            """
        )
        conn.commit()
    subprocess.run(
        [
            "psql",
            "--quiet",
            dsn,
            "-c",
            f"\\copy session_feedback (insertion_order, id, session_id_opaque, "
            f"user_id_or_null, recorded_at, recorded_date, label, turn_count_at_end, source, schema_version) "
            f"from '{csv}' with (format csv)",
        ],
        check=True,
    )
    csv.unlink()


def bare_adbc(dsn: str, db: Path) -> list[str]:
    code = textwrap.dedent(
        f"""
        import adbc_driver_postgresql.dbapi as pg, duckdb
        with pg.connect({dsn!r}) as conn, conn.cursor() as cur:
            cur.execute("select insertion_order, id, session_id_opaque, user_id_or_null, recorded_at, "
                        "recorded_date, label, turn_count_at_end, source, schema_version from session_feedback")
            rows = cur.fetch_arrow_table()
        duckdb.connect({str(db)!r}).execute("create table session_feedback as select * from rows")
        """
    )
    return [PYTHON, "-c", code]


def bench_postgres(tmp: Path, rows: int, repeat: int) -> dict:
    from tests.support.postgres import start_postgres, stop_postgres  # the test suite's throwaway server

    base = Path(tempfile.mkdtemp(prefix="feedback-bench-pg-"))
    os.chmod(base, 0o755)
    server = start_postgres(base)
    try:
        server.psql("create database bench")
        dsn = server.dsn("bench")
        _fill_postgres(dsn, rows, tmp)
        ours, bare = [], []
        for _ in range(repeat):
            db = fresh_db(tmp, "pg-ours")
            ours.append(timed([*CLI, "ingest", "session-feedback", "--postgres", dsn, "--db", str(db), "--quiet"]))
            db = fresh_db(tmp, "pg-bare")
            bare.append(timed(bare_adbc(dsn, db)))
    finally:
        stop_postgres(server)
    result = {
        "rows": rows,
        "ours_s": round(statistics.median(ours), 2),
        "bare_s": round(statistics.median(bare), 2),
        "ours_all": [round(x, 2) for x in ours],
        "bare_all": [round(x, 2) for x in bare],
    }
    result["ratio"] = round(result["ours_s"] / result["bare_s"], 2)
    return result


ANALYZER_MARTS = ["+skill_correction_rates", "+skill_correction_trends", "+skill_dimension_hotspots"]


def _dbt_build(db: Path, target: Path, select: list[str] | None = None) -> tuple[float, list[dict]]:
    """`feedback-analytics build` (dbt build) timed end to end, with each node's time from run_results.json."""
    command = [*CLI, "build", "--as-of", AS_OF.isoformat(), "--db", str(db), "--", "--target-path", str(target), "-q"]
    if select:  # tests that also read unselected models stay out of a partial build
        command += ["--select", *select, "--indirect-selection", "cautious"]
    seconds = timed(command)
    run_results = json.loads((target / "run_results.json").read_text())
    nodes = sorted(
        (
            {"node": r["unique_id"], "status": r["status"], "seconds": round(r["execution_time"], 2)}
            for r in run_results["results"]
        ),
        key=lambda r: -r["seconds"],
    )
    return seconds, nodes


def bench_vs_analyzer_script(tmp: Path, events: int) -> dict:
    """Our ingest + build of the analyzer marts against the analyzer's own pure-Python metrics."""
    file = tmp / f"analyzer-{events}.jsonl"
    if not file.exists():
        write_analyzer_jsonl(file, events, seed=7, as_of=AS_OF)
    db = fresh_db(tmp, "analyzer-marts")
    ingest_s = timed([*CLI, "ingest", "analyzer", str(file), "--db", str(db), "--quiet"])
    build_s, nodes = _dbt_build(db, tmp / "target-analyzer", ANALYZER_MARTS)
    models_s = sum(n["seconds"] for n in nodes if n["node"].startswith("model."))
    baseline_s = timed([PYTHON, str(ROOT / "bench" / "analyzer_baseline.py"), str(file), "--as-of", AS_OF.isoformat()])
    ours = ingest_s + build_s
    return {
        "events": events,
        "ingest_s": round(ingest_s, 2),
        "build_s": round(build_s, 2),
        "build_models_s": round(models_s, 2),
        "ours_s": round(ours, 2),
        "python_baseline_s": round(baseline_s, 2),
        "speedup": round(baseline_s / ours, 1),
        "speedup_without_dbt_startup": round(baseline_s / (ingest_s + models_s), 1),
    }


def bench_dbt_scale(tmp: Path, scale: float) -> dict:
    """The whole `dbt build` on demo data at a scale (100: about 10M signals), with the slowest nodes."""
    demo = tmp / f"demo-{scale:g}"
    started = time.perf_counter()
    subprocess.run(
        [*CLI, "demo-data", str(demo), "--scale", str(scale), "--as-of", AS_OF.isoformat(), "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    generate_s = time.perf_counter() - started
    db = fresh_db(tmp, f"demo-{scale:g}")
    ingest_s = timed([*CLI, "ingest", "--config", str(demo / "sources.toml"), "--db", str(db), "--quiet"])
    with duckdb.connect(str(db), read_only=True) as con:
        signals = sum(
            con.execute(f"select count(*) from raw.{t}").fetchall()[0][0]
            for t in ("analyzer_events", "session_feedback", "turn_reactions", "workspace_feedback")
        )
    build_s, nodes = _dbt_build(db, tmp / f"target-{scale:g}")
    return {
        "db": str(db),
        "scale": scale,
        "signals": signals,
        "generate_s": round(generate_s, 1),
        "ingest_s": round(ingest_s, 1),
        "build_s": round(build_s, 1),
        "slowest_nodes": nodes[:15],
        "nodes": len(nodes),
    }


def bench_dashboard(db: Path, loads: int) -> dict:
    """The dashboard on the built scale warehouse: every page's queries (p95 of `loads`), then every page in
    chromium until fully rendered (cold and warm); each script prints its own Markdown table."""
    tables = {}
    for name, script, count in (
        ("queries", "dashboard_queries.py", loads),
        ("render", "dashboard_render.py", max(3, loads // 2)),
    ):
        completed = subprocess.run(
            [PYTHON, str(ROOT / "bench" / script), "--db", str(db), "--loads", str(count)],
            check=True,
            capture_output=True,
            text=True,
        )
        tables[name] = completed.stdout[completed.stdout.index("| page") :].strip()
    return tables


def markdown(results: dict) -> str:
    lines = [f"Run {results['when']} on {results['machine']}.", ""]
    if "analyzer_ingest" in results:
        r = results["analyzer_ingest"]
        lines += [
            "| analyzer ingest | events | file | ours (median) | bare read_json (median) | ratio | goal |",
            "|---|---|---|---|---|---|---|",
            f"| `ingest analyzer` vs `CREATE TABLE AS SELECT * FROM read_json(..., columns=...)` | {r['events']:,} "
            f"| {r['file_mb']} MB | {r['ours_s']} s | {r['bare_s']} s | {r['ratio']} | <= 1.5 |",
            "",
        ]
    if "memory" in results:
        lines += ["| peak memory | events | file | peak RSS | time |", "|---|---|---|---|---|"]
        for r in results["memory"]:
            lines.append(
                f"| `ingest analyzer` | {r['events']:,} | {r['file_mb']} MB | {r['peak_rss_mb']} MB "
                f"| {r['seconds']} s |"
            )
        lines.append("")
    if "postgres" in results:
        r = results["postgres"]
        lines += [
            "| PostgreSQL | rows | ours (median) | bare ADBC fetch_arrow_table + CTAS (median) | ratio | goal |",
            "|---|---|---|---|---|---|",
            f"| `ingest session-feedback --postgres` | {r['rows']:,} | {r['ours_s']} s | {r['bare_s']} s "
            f"| {r['ratio']} | <= 1.3 |",
            "",
        ]
    if "vs_analyzer_script" in results:
        r = results["vs_analyzer_script"]
        lines += [
            "| analyzer metrics | events | ours: ingest + build (models only) | analyzer's pure Python "
            "| speedup | goal |",
            "|---|---|---|---|---|---|",
            f"| per-skill rates, trends, hotspots | {r['events']:,} | {r['ingest_s']} s + {r['build_s']} s "
            f"({r['build_models_s']} s) | {r['python_baseline_s']} s | {r['speedup']}x "
            f"({r['speedup_without_dbt_startup']}x without dbt's start-up) | >= 10x |",
            "",
        ]
    if "dbt_scale" in results:
        r = results["dbt_scale"]
        lines += [
            f"`dbt build` at scale {r['scale']:g} ({r['signals']:,} signals): {r['build_s']} s for {r['nodes']} nodes "
            f"(goal <= 60 s); generating the data took {r['generate_s']} s and ingesting it {r['ingest_s']} s.",
            "",
            "| slowest nodes | status | seconds |",
            "|---|---|---|",
            *[f"| {n['node']} | {n['status']} | {n['seconds']} |" for n in r["slowest_nodes"]],
            "",
        ]
    if "dashboard" in results:
        lines += ["Dashboard page queries:", "", results["dashboard"]["queries"], ""]
        lines += ["Dashboard pages in chromium:", "", results["dashboard"]["render"], ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--memory-events", default="1000000,2500000,5000000")
    parser.add_argument("--pg-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=100)
    parser.add_argument("--only", default="ingest,memory,postgres,analyzer-script,dbt,dashboard")
    parser.add_argument("--dashboard-loads", type=int, default=20)
    args = parser.parse_args()
    only = set(args.only.split(","))
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }
    with tempfile.TemporaryDirectory(prefix="feedback-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if "ingest" in only:
            results["analyzer_ingest"] = bench_analyzer_ingest(tmp, args.events, args.repeat)
            print(json.dumps(results["analyzer_ingest"]), flush=True)
        if "memory" in only:
            results["memory"] = bench_memory(tmp, [int(x) for x in args.memory_events.split(",")])
            print(json.dumps(results["memory"]), flush=True)
        if "postgres" in only:
            results["postgres"] = bench_postgres(tmp, args.pg_rows, args.repeat)
            print(json.dumps(results["postgres"]), flush=True)
        if "analyzer-script" in only:
            results["vs_analyzer_script"] = bench_vs_analyzer_script(tmp, args.events)
            print(json.dumps(results["vs_analyzer_script"]), flush=True)
        if "dbt" in only:
            results["dbt_scale"] = bench_dbt_scale(tmp, args.scale)
            print(json.dumps(results["dbt_scale"]), flush=True)
            if "dashboard" in only:  # on the warehouse the dbt step built
                results["dashboard"] = bench_dashboard(Path(results["dbt_scale"]["db"]), args.dashboard_loads)
                print(results["dashboard"]["queries"], results["dashboard"]["render"], sep="\n\n", flush=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(markdown(results))


if __name__ == "__main__":
    main()
