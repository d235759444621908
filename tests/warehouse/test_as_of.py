"""`--as-of` is one UTC instant, whatever ISO-8601 form it was typed in.

The command line parses it once (warehouse/as_of.py); analysts who run dbt
themselves go through the macro `as_of_utc_text`. Both are checked against
instants worked out by hand, and equivalent instants must give identical marts.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.dbt import REPO, assert_same_rows, run_dbt
from warehouse.as_of import AsOfError, parse_as_of

# typed value -> the UTC instant it means (worked out by hand)
FORMS = {
    "2026-11-15": dt.datetime(2026, 11, 15, 23, 59, 59, 999999),  # a date: the end of that day
    "2026-11-15T12:00:00Z": dt.datetime(2026, 11, 15, 12, 0),
    "2026-11-15T14:00:00+02:00": dt.datetime(2026, 11, 15, 12, 0),
    "2026-11-15T23:30-05:00": dt.datetime(2026, 11, 16, 4, 30),  # just before midnight in New York: next UTC day
    "2026-11-15T12:00:00.25Z": dt.datetime(2026, 11, 15, 12, 0, 0, 250000),
    "2026-11-15T12:00:00.123456789+00:00": dt.datetime(2026, 11, 15, 12, 0, 0, 123456),  # nanoseconds truncated
    "2026-11-15 12:00": dt.datetime(2026, 11, 15, 12, 0),  # no offset: UTC
    "2026-W46-7": dt.datetime(2026, 11, 15, 23, 59, 59, 999999),  # ISO week date: Sunday 15 November
}


@pytest.mark.parametrize(("typed", "instant"), FORMS.items())
def test_command_line_parses_every_form_to_one_utc_instant(typed: str, instant: dt.datetime) -> None:
    parsed = parse_as_of(typed)
    assert parsed.instant == instant
    assert parsed.day == instant.date()


def test_purge_day_is_the_utc_day() -> None:
    assert parse_as_of("2026-11-15T23:30-05:00").day == dt.date(2026, 11, 16)
    assert parse_as_of("2026-11-16T00:30+02:00").day == dt.date(2026, 11, 15)


def test_no_value_means_now_in_utc() -> None:
    now = dt.datetime(2026, 11, 23, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    assert parse_as_of(None, now=now).instant == dt.datetime(2026, 11, 22, 20, 0)


@pytest.mark.parametrize("typed", ["yesterday", "2026-13-01", "2026-11-15T25:00", "15/11/2026"])
def test_a_value_that_is_no_instant_is_refused(typed: str) -> None:
    with pytest.raises(AsOfError, match="is not a date"):
        parse_as_of(typed)


def test_the_cli_refuses_a_bad_as_of_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    result = subprocess.run(
        [sys.executable, "-m", "cli", "purge", "--as-of", "yesterday", "--db", str(db)],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "'yesterday' is not a date" in result.stderr and "Traceback" not in result.stderr


def test_the_dbt_macro_reads_every_form_like_the_command_line(tmp_path: Path) -> None:
    """One `dbt compile --inline` renders the macro for every form; each must be the hand-worked instant."""
    calls = " || '|' || ".join(f"'{{{{ as_of_utc_text({json.dumps(typed)}) }}}}'" for typed in FORMS)
    compiled = run_dbt(["compile", "--inline", f"select {calls}"], warehouse=tmp_path / "w.duckdb", work_dir=tmp_path)
    assert compiled.returncode == 0, compiled.stdout[-3000:]
    line = next(line for line in compiled.stdout.splitlines() if "||" in line)
    rendered = [part.strip().strip("'") for part in line.split("select", 1)[1].split("|| '|' ||")]
    expected = [instant.isoformat(sep=" ", timespec="microseconds") for instant in FORMS.values()]
    assert rendered == expected


def test_the_dbt_macro_refuses_a_bad_value_in_one_line(tmp_path: Path) -> None:
    compiled = run_dbt(
        ["compile", "--inline", "select {{ as_of_timestamp() }}", "--vars", "{as_of: 'last tuesday'}"],
        warehouse=tmp_path / "w.duckdb",
        work_dir=tmp_path,
    )
    assert compiled.returncode != 0
    assert "var as_of = 'last tuesday' is not a date" in compiled.stdout


# -- equivalent instants, identical marts ---------------------------------------------------------------
EQUIVALENT = (
    # (through `feedback-analytics build --as-of`, through `dbt run --vars`): the same instant
    ("2026-11-01", "2026-11-02T01:59:59.999999+02:00"),
    ("2026-11-15T23:30-05:00", "2026-11-16T04:30:00Z"),
)
# What a build records about itself rather than about the data.
BUILD_ONLY_COLUMNS = {"invocation_id", "built_at", "dbt_version"}


def all_marts(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        names = [
            name
            for (name,) in con.execute(
                "select table_name from information_schema.tables where table_schema = 'marts' order by 1"
            ).fetchall()
        ]
        marts = {}
        for name in names:
            columns = [c for (c, *_) in con.execute(f"describe marts.{name}").fetchall() if c not in BUILD_ONLY_COLUMNS]
            listed = ", ".join(f'"{c}"' for c in columns)
            marts[name] = con.execute(f"select {listed} from marts.{name} order by {listed}").fetchall()
    return marts


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("as-of")
    demo, db = work / "demo", work / "warehouse.duckdb"
    for args in (
        ["demo-data", str(demo), "--as-of", "2026-11-15", "--scale", "0.2", "-q"],
        ["ingest", "--config", str(demo / "sources.toml"), "--db", str(db), "-q"],
    ):
        subprocess.run([sys.executable, "-m", "cli", *args], cwd=REPO, check=True, capture_output=True)
    return db


@pytest.mark.slow
@pytest.mark.parametrize(("through_cli", "through_dbt"), EQUIVALENT)
def test_equivalent_instants_give_identical_marts(
    demo_warehouse: Path, tmp_path: Path, through_cli: str, through_dbt: str
) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "cli", "build", "--as-of", through_cli, "--db", str(demo_warehouse)],
        cwd=REPO,
        env={**os.environ, "DBT_TARGET_PATH": str(tmp_path / "cli-target"), "DBT_LOG_PATH": str(tmp_path / "cli-logs")},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert built.returncode == 0, built.stdout[-3000:]
    first = all_marts(demo_warehouse)
    run = run_dbt(["run", "--vars", json.dumps({"as_of": through_dbt})], warehouse=demo_warehouse, work_dir=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    second = all_marts(demo_warehouse)
    assert first.keys() == second.keys() and len(first) > 20
    assert sum(len(rows) for rows in first.values()) > 1000, "the marts are nearly empty: the comparison proves little"
    for name in first:
        assert_same_rows(
            first[name], second[name], f"marts.{name}, {through_cli!r} then {through_dbt!r}", tolerance=1e-12
        )


# -- a future instant is refused (a mistyped year must not purge everything) ---------------------------------
@pytest.mark.parametrize("command", ["purge", "nightly", "build"])
def test_a_future_as_of_is_refused_and_touches_nothing(tmp_path: Path, command: str) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema raw")
        con.execute("create table raw.marker as select 1 as kept")
    before = db.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "cli", command, "--as-of", "2030-01-01", "--db", str(db)],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: --as-of 2030-01-01 is later than now (") and line.endswith(
        " UTC): give a past or present date or time"
    )
    assert result.stdout == ""
    assert db.read_bytes() == before
    assert not list(tmp_path.glob("*.nightly.*")), "the nightly took no lock and wrote no log"


def test_today_as_a_date_is_not_the_future() -> None:
    """A date means the end of that day: today's date is accepted although its end is later than now."""
    from cli.options import parse_cli_as_of as _parse_as_of

    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert _parse_as_of(today).day.isoformat() == today
