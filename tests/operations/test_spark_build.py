"""`build --target spark` and `nightly --target spark`: the same dbt project on Apache Spark, the same numbers.

One Spark Thrift Server for the session (tests/conftest.py's `spark_server`, started from the pip pyspark on
127.0.0.1, reached through dbt-spark's thrift method as a cluster is). The demo data (scale 0.1) is ingested
and purged once (so the analyzer archive is in play), then the same warehouse is run through `nightly` on
DuckDB and through `nightly --target spark` (lake export, dbt build with its data tests on Spark, marts
copied back into the DuckDB file). Every mart, the retained_* views included, must be equal row for row,
doubles within 1e-9. The unit tests run on Spark too. The bad-configuration cases need no server: each is
one line naming the fix, before anything runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from operations.build import dbt_command
from tests.support.dashboard import PAGES, assert_no_exception, metrics, run_page
from tests.support.operations import ok, ops_env, run_ops
from tests.support.spark import SparkServer
from tests.support.spark_parity import differences, marts, row_counts
from warehouse.location import serving_path

pytestmark = pytest.mark.slow

AS_OF = "2026-11-20"
TIMEOUT_S = 1500


@dataclass(frozen=True)
class Builds:
    duckdb: Path  # the nightly on DuckDB
    spark: Path  # the same warehouse's nightly on Spark, marts copied back
    spark_warehouse: Path
    env: dict[str, str]  # the CLI's environment for the Spark server and folder
    spark_log: Path
    work: Path


@pytest.fixture(scope="module")
def builds(spark_server: SparkServer, tmp_path_factory: pytest.TempPathFactory) -> Builds:
    work = tmp_path_factory.mktemp("spark-parity")
    env = ops_env(work)
    ok(run_ops("demo-data", work / "demo", "--scale", "0.1", "--seed", "7", "--as-of", AS_OF, "-q", env=env))
    loaded = work / "loaded.duckdb"
    ok(run_ops("ingest", "--config", work / "demo" / "sources.toml", "--db", loaded, "-q", env=env))
    ok(run_ops("purge", "--as-of", AS_OF, "--db", loaded, env=env))

    on_duckdb = Path(shutil.copy(loaded, work / "duckdb.duckdb"))
    ok(run_ops("nightly", "--as-of", AS_OF, "--db", on_duckdb, env=env, timeout=TIMEOUT_S))

    on_spark = Path(shutil.copy(loaded, work / "spark.duckdb"))
    spark_warehouse = work / "spark-warehouse"
    spark_env = {**env, **spark_server.environment(spark_warehouse)}
    spark_log = work / "spark.nightly.log"
    result = run_ops(
        "nightly",
        "--as-of",
        AS_OF,
        "--db",
        on_spark,
        "--target",
        "spark",
        "--log-file",
        spark_log,
        env=spark_env,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{spark_log.read_text()[-6000:]}"
    return Builds(on_duckdb, on_spark, spark_warehouse, spark_env, spark_log, work)


def test_nightly_on_spark_exports_the_lake_builds_and_copies_the_marts(builds: Builds) -> None:
    log = builds.spark_log.read_text()
    assert re.search(r"lake \S+: \d+ day partition\(s\) written \([\d,]+ rows\)", log), log[-3000:]
    assert re.search(r"PASS=\d+ WARN=0 ERROR=0 SKIP=0", log)
    copied = re.search(r"copied (\d+) marts from (\S+) into", log)
    assert copied and int(copied[1]) == len(marts(builds.duckdb))
    assert Path(copied[2]) == builds.spark_warehouse / "marts.db"


def test_every_mart_and_retained_view_is_equal_on_both_engines(builds: Builds) -> None:
    names = set(marts(builds.duckdb))
    assert {f"retained_{t}" for t in ("analyzer_events", "session_feedback", "turn_reactions")} <= names
    assert {"skill_correction_rates", "eval_matrix", "metric_rates_by_period", "feedback_signals"} <= names
    assert differences(builds.duckdb, builds.spark) == {}
    counts = row_counts(builds.spark)
    empty = sorted(name for name, rows in counts.items() if rows == 0)
    # what may be empty here: the delivery log (no `alerts` ran) and the alert episodes with their evidence (no
    # rule fires on this data set); their input, alert_evaluations, is compared with rows
    assert set(empty) <= {"alert_notifications", "alert_states", "alert_evidence_daily"}, f"empty: {empty}"
    assert counts["alert_evaluations"] > 100
    assert counts["retained_analyzer_events"] > 100 and counts["metric_rates_by_period"] > 1000


def test_spark_wrote_parquet_tables_and_a_day_partitioned_lake(builds: Builds) -> None:
    for name in marts(builds.duckdb):
        folder = builds.spark_warehouse / "marts.db" / name
        assert folder.is_dir(), name
    history = builds.spark_warehouse / "marts.db" / "skill_correction_daily_history"
    assert any(path.name.startswith("invoked_date=") for path in history.iterdir())
    assert list(history.glob("invoked_date=*/*.parquet"))
    lake = builds.spark_warehouse / "lake"
    for table in ("analyzer_events", "analyzer_events_archive", "session_feedback", "load_manifest"):
        assert list((lake / table).glob("_lake_day=2*/*.parquet")), table
    state = json.loads((lake / "_lake_state.json").read_text())
    assert sum(int(fp.split(":")[0]) for fp in state["analyzer_events_archive"].values()) > 1000


def test_a_second_spark_build_writes_nothing_new_and_keeps_the_numbers(builds: Builds) -> None:
    """The lake export finds nothing changed; the history marts take the incremental path (insert_overwrite)."""
    result = ok(
        run_ops(
            "build",
            "--as-of",
            AS_OF,
            "--db",
            builds.spark,
            "--target",
            "spark",
            "--",
            "--select",
            "path:models/marts/history",
            env=builds.env,
            timeout=TIMEOUT_S,
        )
    )
    output = result.stdout + result.stderr
    # the one change since the nightly's build exported the lake: the nightly's own run record, finished after
    # its build (raw.nightly_runs: `running` then `ok`), one row of one day; nothing else is written again
    assert re.search(r"lake \S+: 1 day partition\(s\) written \(1 rows\), 0 deleted", output), output[-3000:]
    assert "incremental model marts.skill_correction_daily_history" in output
    assert differences(builds.duckdb, builds.spark) == {}


def test_the_unit_tests_pass_on_spark(builds: Builds) -> None:
    command = dbt_command(
        "test", "--select", "test_type:unit", target="spark", as_of=AS_OF, work_dir=builds.work / "unit"
    )
    result = subprocess.run(
        command, env=builds.env, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+) NO-OP=\d+ TOTAL=(\d+)", result.stdout)
    assert result.returncode == 0 and summary, result.stdout[-4000:]
    passed, total = int(summary[1]), int(summary[5])
    assert passed == total >= 50


def test_the_dashboard_shows_the_spark_build(builds: Builds, monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboards import data

    shown: dict[str, dict[str, dict[str, str]]] = {}
    for engine, db in (("duckdb", builds.duckdb), ("spark", builds.spark)):
        with duckdb.connect(str(serving_path(db)), read_only=True) as served:  # what the dashboard reads
            assert served.execute("select engine from serving.publish_info").fetchall() == [(engine,)]
        monkeypatch.setenv("FEEDBACK_DB", str(db))
        data.clear_caches()
        shown[engine] = {}
        for page in PAGES:
            app = run_page(page)
            assert_no_exception(app)
            shown[engine][page.url_path] = metrics(app)
    data.clear_caches()
    assert shown["spark"] == shown["duckdb"]
    assert sum(len(values) for values in shown["spark"].values()) >= 5


# -- bad configuration: one line naming the fix, nothing run ------------------------------------------------


@pytest.fixture(scope="module")
def small_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("spark-errors")
    env = ops_env(work)
    ok(run_ops("demo-data", work / "demo", "--scale", "0.01", "--as-of", AS_OF, "-q", env=env))
    db = work / "small.duckdb"
    ok(run_ops("ingest", "--config", work / "demo" / "sources.toml", "--db", db, "-q", env=env))
    return db


def one_line_error(result, *, exit_code: int = 1) -> str:
    assert result.returncode == exit_code, f"{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_an_unknown_target_lists_the_valid_ones(small_warehouse: Path, tmp_path: Path) -> None:
    line = one_line_error(
        run_ops("build", "--db", small_warehouse, "--target", "sprak", env=ops_env(tmp_path)), exit_code=2
    )
    assert "unknown target 'sprak'" in line and "dev, spark, spark_local" in line and "serving" not in line
    line = one_line_error(
        run_ops("build", "--db", small_warehouse, "--target", "serving", env=ops_env(tmp_path)), exit_code=2
    )
    assert line == (
        "error: target 'serving' only reads the serving file (for MetricFlow's `mf`): build on dev, spark, spark_local"
    )
    for given in ("--target", "-t", "--target=spark"):
        line = one_line_error(
            run_ops("build", "--db", small_warehouse, "--", given, "spark", env=ops_env(tmp_path)), exit_code=2
        )
        assert line == (
            f"error: give the target to the command, not to dbt: `build --target NAME` (not `-- {given} ...`)"
        )


def test_an_unreachable_thrift_server_is_named(small_warehouse: Path, tmp_path: Path) -> None:
    from tests.support.environment import free_port

    port = free_port()  # nothing listens there
    env = ops_env(tmp_path, FEEDBACK_SPARK_PORT=str(port), FEEDBACK_SPARK_WAREHOUSE=str(tmp_path / "wh"))
    line = one_line_error(run_ops("build", "--db", small_warehouse, "--target", "spark", env=env))
    assert f"Spark Thrift Server at 127.0.0.1:{port} unreachable" in line and "FEEDBACK_SPARK_PORT" in line
    assert not (tmp_path / "wh" / "lake").exists()


def test_a_warehouse_folder_that_cannot_be_written_is_named(small_warehouse: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = ops_env(tmp_path, FEEDBACK_SPARK_WAREHOUSE=str(blocker / "spark"))
    line = one_line_error(run_ops("build", "--db", small_warehouse, "--target", "spark_local", env=env))
    assert f"Spark warehouse folder {blocker / 'spark'} is not writable" in line
    assert "FEEDBACK_SPARK_WAREHOUSE" in line


def test_no_java_for_a_local_spark_is_named(small_warehouse: Path, tmp_path: Path) -> None:
    env = ops_env(tmp_path, PATH=str(Path(sys.executable).parent), FEEDBACK_SPARK_WAREHOUSE=str(tmp_path / "wh"))
    env.pop("JAVA_HOME", None)
    assert shutil.which("java", path=env["PATH"]) is None
    line = one_line_error(run_ops("build", "--db", small_warehouse, "--target", "spark_local", env=env))
    assert "no Java for a local Spark" in line and "openjdk-17-jre-headless" in line
    assert os.path.exists(small_warehouse)
