"""The dbt-duckdb plugin that publishes from inside dbt (profiles.yml: `plugins: [{module: operations.dbt_plugin}]`).

It registers one function on dbt's own DuckDB connection, `feedback_publish(build_id, as_of, full_refresh)`, which the
project's `on-run-end` hook (macros/publish/publish_serving_file.sql) calls after a successful build, run,
seed or snapshot of the DuckDB warehouse: it records the build beside the warehouse
(warehouse/build_record.py), then publishes the marts that connection committed to the serving file with
operations/serving.py's `publish_in_connection`, the same code, atomic rename and lock as
`feedback-analytics build` and `publish`. So a plain `dbt build --profiles-dir .` reaches the dashboard,
`report`, `export` and MetricFlow's `mf` like our command line does.

The function returns one line for dbt's log: `published ...`, `nothing published ...`, or `not published: <why>`
(the hook then fails the run, and readers say that a newer build exists, and how to publish it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from operations.serving import publish_in_connection
from warehouse.build_record import publish_hint, record_build

FUNCTION = "feedback_publish"


def _warehouse(con: DuckDBPyConnection) -> Path:
    cursor = con.cursor()
    try:
        (path,) = cursor.execute(
            "select path from duckdb_databases() where database_name = current_database()"
        ).fetchall()[0]
    finally:
        cursor.close()
    return Path(path)


def publish_build(con: DuckDBPyConnection, build_id: str, as_of: str | None, full_refresh: bool = False) -> str:
    """Record the build beside the warehouse `con` has open, then publish it (in full after a `--full-refresh`
    build, otherwise incrementally when it can be); one line saying what happened."""
    db = _warehouse(con)
    try:
        record_build(db, build_id, as_of)
        done = publish_in_connection(con, build_id, full_refresh=bool(full_refresh))
    except Exception as exc:  # noqa: BLE001 - any failure is reported in one line, and the build record stays
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"not published: {first}; the readers show the previous publish until `{publish_hint(db)}`"
    if not done.relations:
        return f"nothing published: the warehouse has no marts yet ({done.path} unchanged)"
    return f"{done.summary()} (the file the dashboard, report, export and mf read)"


class Plugin(BasePlugin):
    """Registers `feedback_publish` on the connection dbt builds with."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        self.config = plugin_config

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        def feedback_publish(build_id: str, as_of: str | None, full_refresh: bool | None) -> str:
            return publish_build(conn, build_id, as_of, bool(full_refresh))

        conn.create_function(
            FUNCTION,
            feedback_publish,
            ["VARCHAR", "VARCHAR", "BOOLEAN"],
            "VARCHAR",
            null_handling="special",
            side_effects=True,
        )
