"""FEEDBACK_MEMORY_LIMIT reaches every kind of DuckDB connection the commands open (the warehouse's, the serving
file's readers, dbt's, the dashboard's), and what exceeds it spills into `<warehouse>.tmp/`, the owner's only."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support.ingest import cli_env, run_cli
from warehouse.connection import BUILD_MEMORY_LIMIT, DEFAULT_MEMORY_LIMIT, connect, connect_serving, memory_limit
from warehouse.location import Warehouse

ROOT = Path(__file__).resolve().parents[2]
TINY = "100MB"


def shown(limit: str) -> str:
    """How DuckDB shows `limit` in current_setting('memory_limit')."""
    with duckdb.connect() as con:
        con.execute(f"set memory_limit = '{limit}'")
        return con.execute("select current_setting('memory_limit')").fetchone()[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small demo warehouse, built and published with FEEDBACK_MEMORY_LIMIT=100MB (ingest's JSON reader wants
    buffers of 128 MiB: it is left at the default)."""
    root = tmp_path_factory.mktemp("memory")
    db = root / "w.duckdb"
    env = cli_env(DBT_TARGET_PATH=str(root / "target"), DBT_LOG_PATH=str(root / "logs"))
    for args, limit in (
        (("demo-data", root / "data", "--scale", "0.05", "--as-of", "2026-11-01", "-q"), None),
        (("ingest", "--config", root / "data" / "sources.toml", "--db", db, "-q"), None),
        (("build", "--db", db, "--as-of", "2026-11-01"), TINY),
        (("publish", "--db", db), TINY),
    ):
        result = run_cli(*args, env=env | ({"FEEDBACK_MEMORY_LIMIT": limit} if limit else {}), timeout=900)
        assert result.returncode == 0, f"{args[0]}: {result.stdout[-2000:]}{result.stderr[-2000:]}"
    return db


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_a_warehouse_connection_spills_into_a_private_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, permissive_umask: None
) -> None:
    monkeypatch.setenv("FEEDBACK_MEMORY_LIMIT", "64MiB")
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        limit, folder = con.execute(
            "select current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchone()
        assert (limit, folder) == (shown("64MiB"), f"{db}.tmp")
        # a sort of about 200 MB: beyond the limit, so DuckDB spills, and still finishes
        con.execute("create table sorted as select range, md5(range::varchar) as m from range(3000000) order by m")
        assert con.execute("select count(*) from sorted").fetchone() == (3_000_000,)
        spill = Path(f"{db}.tmp")
        assert any(spill.iterdir()), "the sort spilled nothing into the warehouse's folder"
    finally:
        con.close()
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700


def test_commands_succeed_with_a_tiny_limit_and_keep_the_spill_folder_private(built: Path) -> None:
    spill = Path(f"{built}.tmp")
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700
    assert Warehouse.at(built).serving.is_file()


def test_the_serving_readers_use_the_limit_and_the_warehouse_spill_folder(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDBACK_MEMORY_LIMIT", TINY)
    for attached in (False, True):
        con = connect_serving(Warehouse.at(built), attached=attached)
        try:
            settings = con.execute(
                "select current_setting('memory_limit'), current_setting('temp_directory')"
            ).fetchone()
        finally:
            con.close()
        assert settings == (shown(TINY), f"{built}.tmp"), attached
    con = connect(built, read_only=True)
    try:
        assert con.execute("select current_setting('memory_limit')").fetchone() == (shown(TINY),)
    finally:
        con.close()


def test_dbt_connections_use_the_limit_and_the_spill_folder(built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(built, copy)
    env = cli_env(
        FEEDBACK_DB=str(copy),
        FEEDBACK_MEMORY_LIMIT=TINY,
        DBT_TARGET_PATH=str(tmp_path / "target"),
        DBT_LOG_PATH=str(tmp_path / "logs"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    query = "select current_setting('memory_limit') || '|' || current_setting('temp_directory') as s"
    dbt = Path(sys.executable).with_name("dbt")
    done = subprocess.run(
        [dbt, "show", "--inline", query, "--project-dir", ROOT, "--profiles-dir", ROOT, "--output", "json"],
        env=env, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert f"{shown(TINY)}|{copy}.tmp" in done.stdout


def test_the_dashboard_reader_uses_the_limit(monkeypatch: pytest.MonkeyPatch, built: Path) -> None:
    """The dashboard's one DuckDB instance (made anew here) reads with the limit, through its public query."""
    monkeypatch.setenv("FEEDBACK_MEMORY_LIMIT", TINY)
    from dashboards import data

    monkeypatch.setattr(data, "_instance", None)
    with data.use_warehouse(Warehouse.at(built)):
        data.clear_caches()
        shown_limit = data.query("select current_setting('memory_limit') as memory_limit")
    assert shown_limit["memory_limit"].tolist() == [shown(TINY)]


def test_the_build_defaults_to_its_own_limit_in_the_command_and_in_a_plain_dbt_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unset, the build's limit is BUILD_MEMORY_LIMIT (operations/build.py) and profiles.yml says the same for a
    plain `dbt build`; the other commands keep DEFAULT_MEMORY_LIMIT."""
    monkeypatch.delenv("FEEDBACK_MEMORY_LIMIT", raising=False)
    assert memory_limit() == DEFAULT_MEMORY_LIMIT == "1GB"
    assert memory_limit(BUILD_MEMORY_LIMIT) == "6GB"
    profiles = (Path(__file__).resolve().parents[2] / "profiles.yml").read_text()
    defaults = set(re.findall(r"env_var\('FEEDBACK_MEMORY_LIMIT', '([^']+)'\)", profiles))
    assert defaults == {BUILD_MEMORY_LIMIT}
