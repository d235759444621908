"""`feedback-analytics export`: marts and retained views as CSV and Parquet that pandas and DuckDB read with the
right types, timestamps UTC to the microsecond; the dashboard's downloads write the same CSV."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from dashboards.layout import csv_bytes
from operations.serving import publish
from tests.support.dashboard import DemoWarehouse, demo_or_fail
from tests.support.ingest import cli_env, run_cli
from warehouse.connection import connect
from warehouse.location import serving_path

ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoWarehouse:
    return demo_or_fail(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse whose one mart holds every kind of value, with hand-written rows, published to its serving
    file as a build does."""
    db = tmp_path_factory.mktemp("typed") / "typed.duckdb"
    con = connect(db)  # the raw schema, as any warehouse has
    con.execute("create schema marts")
    con.execute(
        """
        create table marts.typed as select * from (values
            (1, true, 0.25::double, date '2026-11-20', timestamp '2026-11-20 13:45:07.123456',
             timestamptz '2026-11-20 15:45:07.123456+02', timestamp_ns '2026-11-20 13:45:07.123456789',
             'a, "quoted"' || chr(10) || 'line'),
            (2, null, null, null, null, null, null, null)
        ) as t(n, flag, share, day, seen_at, zoned_at, ns_at, label)
        """
    )
    con.close()
    publish(db, marts={"typed"})  # not a model of the project: named
    return db


def export(db: Path, *args: str) -> str:
    done = run_cli("export", "--db", db, *args, env=cli_env())
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_csv_of_every_kind_of_value(typed: Path, tmp_path: Path) -> None:
    said = export(typed, "typed", "--format", "csv", "--out", tmp_path)
    assert "typed: 2 rows" in said
    lines = (tmp_path / "typed.csv").read_text().splitlines()
    assert lines[0] == "n,flag,share,day,seen_at,zoned_at,ns_at,label"
    # the zoned value at its UTC clock, nanoseconds rounded to the microsecond, the text quoted as CSV does
    assert lines[1:] == [
        "1,true,0.25,2026-11-20,2026-11-20T13:45:07.123456Z,2026-11-20T13:45:07.123456Z,2026-11-20T13:45:07.123457Z,"
        '"a, ""quoted""',
        'line"',
        "2,,,,,,,",
    ]
    assert list(tmp_path.iterdir()) == [tmp_path / "typed.csv"]  # no temporary file left


def test_parquet_keeps_the_types(typed: Path, tmp_path: Path) -> None:
    export(typed, "typed", "--format", "parquet", "--out", tmp_path)
    frame = pd.read_parquet(tmp_path / "typed.parquet")
    utc = pd.Timestamp("2026-11-20 13:45:07.123456", tz="UTC")
    assert (
        str(frame["seen_at"].dtype)
        == str(frame["zoned_at"].dtype)
        == str(frame["ns_at"].dtype)
        == "datetime64[us, UTC]"
    )
    assert frame.loc[0, ["seen_at", "zoned_at", "ns_at"]].tolist() == [utc, utc, utc + pd.Timedelta(microseconds=1)]
    assert frame["seen_at"].isna().tolist() == [False, True]
    assert frame.loc[0, "day"] == dt.date(2026, 11, 20)
    assert frame["n"].tolist() == [1, 2] and str(frame["n"].dtype) == "int32"
    assert frame.loc[0, "flag"] is True or frame.loc[0, "flag"] == True  # noqa: E712 (numpy bool)
    assert frame.loc[0, "share"] == 0.25 and frame.loc[0, "label"] == 'a, "quoted"\nline'
    described = duckdb.sql(f"describe select * from '{tmp_path / 'typed.parquet'}'").fetchall()
    types = {name: kind for name, kind, *_ in described}
    assert types["seen_at"] == types["zoned_at"] == types["ns_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["day"] == "DATE" and types["flag"] == "BOOLEAN" and types["share"] == "DOUBLE"


def test_an_unknown_name_lists_the_valid_ones_and_writes_nothing(typed: Path, tmp_path: Path) -> None:
    done = run_cli("export", "--db", typed, "typed", "no_such_mart", "--format", "csv", "--out", tmp_path / "out",
                   env=cli_env())  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "error: no mart or view named no_such_mart; the names are: typed"
    assert not (tmp_path / "out").exists()


def test_bad_arguments_get_one_line(typed: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    done = run_cli("export", "--db", typed, "typed", "--format", "csv", "--out", a_file, env=cli_env())
    assert done.returncode == 2 and f"'--out': Directory '{a_file}' is a file" in done.stderr
    done = run_cli("export", "--db", typed, "typed", "--format", "xlsx", "--out", tmp_path, env=cli_env())
    assert done.returncode == 2 and "'xlsx' is not one of 'csv', 'parquet'" in done.stderr
    not_a_warehouse = tmp_path / "signals.csv"
    not_a_warehouse.write_text("a,b\n1,2\n")
    done = run_cli("export", "--db", not_a_warehouse, "typed", "--format", "csv", "--out", tmp_path, env=cli_env())
    assert done.returncode == 1 and done.stderr.startswith(f"error: --db {not_a_warehouse} is not a DuckDB warehouse")
    assert len(done.stderr.strip().splitlines()) == 1
    unbuilt = tmp_path / "unbuilt.duckdb"
    connect(unbuilt).close()
    done = run_cli("export", "--db", unbuilt, "typed", "--format", "csv", "--out", tmp_path, env=cli_env())
    assert (done.returncode, done.stderr.strip()) == (
        1,
        f"error: no serving file {tmp_path / 'unbuilt.serving.duckdb'}: the warehouse was never built (or only "
        "by an older version); run `feedback-analytics build` first",
    )


def test_export_reads_the_serving_file_while_a_writer_holds_the_warehouse(typed: Path, tmp_path: Path) -> None:
    """A process holds the warehouse file for writing (as ingest, purge or build do): the export does not wait
    for it, and it writes what was last published, not what the writer changed since."""
    with duckdb.connect(str(typed)) as writer:
        writer.execute("insert into marts.typed (n) values (3)")  # not published
        done = run_cli("export", "--db", typed, "typed", "--format", "csv", "--out", tmp_path, env=cli_env(),
                       timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert pd.read_csv(tmp_path / "typed.csv")["n"].tolist() == [1, 2]
        writer.execute("delete from marts.typed where n = 3")


# a mart table, retained views copied as a table and kept as a view in the serving file, a mart of many types
@pytest.mark.parametrize(
    "name", ["skill_correction_rates", "retained_session_feedback", "retained_analyzer_events", "eval_regressions"]
)
def test_demo_marts_and_retained_views_round_trip(demo: DemoWarehouse, tmp_path: Path, name: str) -> None:
    """Parquet holds the relation's rows exactly (compared in DuckDB, both ways); CSV as many rows, its
    timestamps ISO UTC text."""
    export(demo.db, name, "--format", "parquet", "--out", tmp_path)
    export(demo.db, name, "--format", "csv", "--out", tmp_path)
    parquet = tmp_path / f"{name}.parquet"
    with duckdb.connect(str(demo.db), read_only=True) as con:  # the warehouse: what the build published it from
        con.execute("set TimeZone = 'UTC'")
        types = {column: kind for column, kind, *_ in con.execute(f"describe marts.{name}").fetchall()}
        rows = con.execute(f"select count(*) from marts.{name}").fetchall()[0][0]
        for left, right in ((f"marts.{name}", f"'{parquet}'"), (f"'{parquet}'", f"marts.{name}")):
            (differing,) = con.execute(
                f"select count(*) from (select * from {left} except all select * from {right})"
            ).fetchall()[0]
            assert differing == 0, (left, right)
    stamps = [column for column, kind in types.items() if kind.startswith("TIMESTAMP")]
    frame = pd.read_parquet(parquet)
    assert rows > 0 and len(frame) == rows and list(frame.columns) == list(types)
    assert all(str(frame[column].dtype) == "datetime64[us, UTC]" for column in stamps), frame.dtypes
    csv = pd.read_csv(tmp_path / f"{name}.csv", dtype=str, keep_default_na=False)
    assert len(csv) == rows and list(csv.columns) == list(types)
    for column in stamps:
        assert all(ISO_UTC.match(value) for value in csv[column] if value), column


def test_a_dashboard_download_writes_timestamps_as_export_does(demo: DemoWarehouse, tmp_path: Path) -> None:
    """The rows a table shows, through the dashboard's button: every row back, each timestamp the same text as
    `export` writes for it."""
    name = "retention_policy_windows"
    export(demo.db, name, "--format", "csv", "--out", tmp_path)
    exported = pd.read_csv(tmp_path / f"{name}.csv", dtype=str, keep_default_na=False)
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        shown = con.execute(f"select * from marts.{name}").df()
    downloaded = pd.read_csv(io.BytesIO(csv_bytes(shown)), dtype=str, keep_default_na=False)
    assert list(downloaded.columns) == list(shown.columns) and len(downloaded) == len(shown) > 0
    key = "policy"
    for column in ("as_of_at", "cutoff_at"):
        assert all(ISO_UTC.match(value) for value in downloaded[column] if value), column
        assert downloaded.set_index(key)[column].to_dict() == exported.set_index(key)[column].to_dict(), column
    zoned = pd.DataFrame({"at": pd.to_datetime(["2026-11-20 15:45:07.123456+02:00"])})
    assert csv_bytes(zoned) == b"at\n2026-11-20T13:45:07.123456Z\n"


# -- hostile text: no formula runs in a spreadsheet ---------------------------------------------------------------
# a text value as stored -> as a CSV cell for spreadsheets (OWASP's first characters =, +, -, @, tab, CR)
HOSTILE = {
    '=HYPERLINK("http://x")': '\'=HYPERLINK("http://x")',
    "@SUM(1)": "'@SUM(1)",
    "+1+1": "'+1+1",
    "-2+3": "'-2+3",
    "\t=1": "'\t=1",
    "\r=1": "'\r=1",
    "a\rb": "a\rb",
    "-3.5": "-3.5",  # a plain number stays one
    "+1": "+1",
    "x\r\ny": "x\r\ny",
    'plain, "quoted"': 'plain, "quoted"',
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published mart of upstream text that a spreadsheet would run, beside negative numbers."""
    db = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    con = connect(db)
    con.execute("create schema marts")
    con.execute("create table marts.hostile (n integer, amount double, label varchar)")
    con.executemany(
        "insert into marts.hostile values (?, ?, ?)", [(i, -1.5 - i, value) for i, value in enumerate(HOSTILE)]
    )
    con.execute("insert into marts.hostile values (99, null, null)")
    con.close()
    publish(db, marts={"hostile"})
    return db


def csv_cells(data: bytes) -> list[list[str]]:
    """Cells as a spreadsheet's CSV reader sees them (Python's csv module, newlines inside cells kept)."""
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_csv_export_marks_formulas_as_text(hostile: Path, tmp_path: Path) -> None:
    export(hostile, "hostile", "--format", "csv", "--out", tmp_path)
    data = (tmp_path / "hostile.csv").read_bytes()
    cells = csv_cells(data)
    assert cells[0] == ["n", "amount", "label"]
    assert [row[2] for row in cells[1:]] == [*HOSTILE.values(), ""]
    assert [row[1] for row in cells[1:-1]] == [str(-1.5 - i) for i in range(len(HOSTILE))]  # numbers untouched
    assert b'"a\rb"' in data and b'"\'\r=1"' in data and b'"x\r\ny"' in data, "a CR or LF is always quoted"


def test_raw_csv_writes_values_untouched(hostile: Path, tmp_path: Path) -> None:
    export(hostile, "hostile", "--format", "csv", "--raw-csv", "--out", tmp_path)
    data = (tmp_path / "hostile.csv").read_bytes()
    assert [row[2] for row in csv_cells(data)[1:]] == [*HOSTILE, ""]
    assert b'"a\rb"' in data and b'"\r=1"' in data, "a CR is quoted in raw CSV too"
    done = run_cli("export", "--db", hostile, "hostile", "--format", "parquet", "--raw-csv", "--out", tmp_path,
                   env=cli_env())  # fmt: skip
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "error: --raw-csv is for --format csv: Parquet always holds the values as stored",
    )


def test_a_dashboard_download_marks_formulas_as_export_does(hostile: Path, tmp_path: Path) -> None:
    export(hostile, "hostile", "--format", "csv", "--out", tmp_path)
    with duckdb.connect(str(serving_path(hostile)), read_only=True) as con:
        shown = con.execute("select * from marts.hostile").df()
    downloaded = csv_cells(csv_bytes(shown))
    exported = csv_cells((tmp_path / "hostile.csv").read_bytes())
    assert [len(row) for row in downloaded] == [3] * (len(HOSTILE) + 2), "a CR in a cell split a row"
    assert [row[2] for row in downloaded[1:]] == [*HOSTILE.values(), ""]
    assert [row[2] for row in downloaded] == [row[2] for row in exported]
    assert b'"a\rb"' in csv_bytes(shown), "a CR is quoted in a download"


# -- --tenant: what a reader of one tenant may export ----------------------------------------------------------------
TENANT_COLUMNS = ("tenant", "tenant_name", "source_tenant_id", "tenant_id", "tenant_filter")


def tenant_ids(tenant: str) -> set[str]:
    """A tenant's key, display name and source tenant ids (seed `tenants`)."""
    with (Path(__file__).resolve().parents[2] / "seeds" / "tenants.csv").open() as seed:
        rows = [row for row in csv.DictReader(seed) if row["tenant_key"] == tenant]
    return {tenant, *(row["tenant_name"] for row in rows), *(row["source_tenant_id"] for row in rows)}


def marts_columns(db: Path) -> dict[str, list[str]]:
    with duckdb.connect(str(serving_path(db)), read_only=True) as con:
        found = con.execute(
            "select table_name, list(column_name) from information_schema.columns "
            "where table_schema = 'marts' group by all order by all"
        ).fetchall()
    return dict(found)


def test_export_of_one_tenant_holds_no_row_of_another(demo: DemoWarehouse, tmp_path: Path) -> None:
    """Every relation with a tenant column, exported with --tenant acme: its tenant columns name acme only,
    never globex, never a rollup over every tenant or a row without a tenant."""
    mine, theirs = tenant_ids("acme"), tenant_ids("globex")
    with_tenant = [name for name, columns in marts_columns(demo.db).items() if set(TENANT_COLUMNS) & set(columns)]
    assert len(with_tenant) >= 20, with_tenant
    said = export(demo.db, *with_tenant, "--format", "csv", "--out", tmp_path, "--tenant", "Acme Corporation")
    assert f"exported {len(with_tenant)} relations" in said
    rows = 0
    for name in with_tenant:
        frame = pd.read_csv(tmp_path / f"{name}.csv", dtype=str, keep_default_na=False)
        for column in (c for c in TENANT_COLUMNS if c in frame.columns):
            values = set(frame[column])
            assert not values & theirs and values <= mine, (name, column, values - mine)
        rows += len(frame)
    assert rows > 10_000  # acme's own rows are there


def test_export_of_one_tenant_refuses_what_has_no_tenant(demo: DemoWarehouse, tmp_path: Path) -> None:
    """A relation without a tenant column is refused in one line that names it (session feedback, skills,
    retention counts); the build's metadata is exported, without counts over every tenant."""
    columns = marts_columns(demo.db)
    tenantless = [name for name, names in columns.items() if not set(TENANT_COLUMNS) & set(names)]
    assert {"session_feedback_daily", "skill_correction_rates", "retained_session_feedback"} <= set(tenantless)
    for name in sorted(set(tenantless) - {"build_info", "retention_policy_windows"}):
        done = run_cli("export", name, "--format", "csv", "--out", tmp_path, "--tenant", "acme", "--db", demo.db,
                       env=cli_env())  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (name, done.stderr)
        assert done.stderr.startswith(f"error: --tenant acme: {name} holds no tenant's rows"), done.stderr
    assert not list(tmp_path.iterdir())
    export(demo.db, "build_info", "retention_policy_windows", "--format", "csv", "--out", tmp_path, "--tenant", "acme")
    windows = pd.read_csv(tmp_path / "retention_policy_windows.csv")
    assert len(windows) > 0 and not {"rows_kept", "rows_outside_window"} & set(windows.columns)
    assert len(pd.read_csv(tmp_path / "build_info.csv")) == 1


def test_export_of_an_unknown_tenant_lists_the_valid_ones(demo: DemoWarehouse, tmp_path: Path) -> None:
    done = run_cli("export", "build_info", "--format", "csv", "--out", tmp_path, "--tenant", "nobody", "--db", demo.db,
                   env=cli_env())  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr == "error: no tenant 'nobody' in the marts; the tenants are: acme, globex, initech, umbrella\n"
    assert not (tmp_path / "build_info.csv").exists()
