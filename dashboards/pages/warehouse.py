"""Warehouse (operations): rows per raw table, where each source's rows came from (and, for turn reactions, which
part decides what is active), the latest loads, what was quarantined and why.

Reads the warehouse_* marts (staging views over the raw tables, the load manifest and the quarantine), so it
shows the warehouse as of the last build; before the first build it says to run one, like every page. The
freshness line's "last ingest" is read live (data.status).
"""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import charts, layout
from dashboards.queries import warehouse as queries

status, f = layout.page("Warehouse", with_path=True)  # the one page naming the file
if layout.tenantless("Warehouse operations (counts over every tenant)"):
    st.stop()
built = f"{status.built_at:%Y-%m-%d %H:%M} UTC" if status.built_at else "the last build"
st.caption(
    f"Operations view of the raw schema as of the last build ({built}): rebuild after an ingest to see its rows. "
    "The sidebar filters do not apply here."
)

with layout.section("Raw tables"):
    counts = queries.raw_table_counts()
    if counts.empty:
        st.info("No raw table counts in this build (marts.warehouse_raw_tables is empty).")
    else:
        columns = st.columns(len(counts))
        for column, row in zip(columns, counts.itertuples(), strict=True):
            column.metric(row.raw_table.replace("_", " "), f"{row.row_count:,}")

st.subheader("Where the rows come from")
with layout.section("Where the rows come from"):
    inputs = queries.source_inputs()
    if inputs.empty:
        st.info("No loads yet: run `feedback-analytics ingest ...`.")
    else:
        layout.table(
            inputs,
            "source_inputs",
            hide_index=True,
            column_order=[
                "raw_table",
                "input_kind",
                "purpose",
                "inputs",
                "rows_read",
                "rows_loaded",
                "rows_quarantined",
                "rows_duplicate",
                "rows_skipped",
                "rows_removed",
                "loads",
                "last_load_at",
            ],  # fmt: skip
            column_config={
                "raw_table": "Raw table",
                "input_kind": "Read from",
                "purpose": st.column_config.TextColumn("What its rows are for", width="large"),
                "inputs": st.column_config.NumberColumn("Inputs", help="Distinct files, folders or tables read"),
                "rows_read": "Read",
                "rows_loaded": "Landed",
                "rows_quarantined": "Quarantined",
                "rows_duplicate": "Duplicates",
                "rows_skipped": st.column_config.NumberColumn(
                    "Skipped", help="Records that are not this source's (a blob tree's messages): counted, never stored"
                ),
                "rows_removed": st.column_config.NumberColumn(
                    "Found removed", help="Index rows a later load found gone: cleared or replaced reactions"
                ),
                "loads": "Loads",
                "last_load_at": st.column_config.DatetimeColumn("Last load (UTC)", format="YYYY-MM-DD HH:mm"),
            },
        )

st.subheader("Turn reactions: which part decides what is active")
with layout.section("Turn reactions: which part decides"):
    parts = queries.reaction_sources()
    if parts.empty:
        st.info("No turn reactions in this build.")
    else:
        blobs_only = parts[parts["active_part"] == "blobs"]
        if blobs_only.empty:
            st.caption(
                "The platform's index decides for every tenant and project: a reaction is active while its index "
                "row exists; the blobs are the history of every reaction written."
            )
        else:
            # no tenant or project name in the message: upstream values are shown as text, in the table only
            st.info(
                f"Blobs only for {len(blobs_only)} tenant and project pair(s), marked `blobs` below: blobs are "
                "the history of every reaction ever written and cannot tell a "
                "clear (the platform deletes the index rows and writes nothing), so a cleared reaction still counts "
                "there. Load the index to count what the platform counts: `feedback-analytics ingest reactions "
                "--postgres DSN`.",
                icon=":material/info:",
            )
        layout.table(
            parts,
            "reaction_sources",
            hide_index=True,
            column_config={
                "tenant": "Tenant",
                "project": "Project",
                "active_part": st.column_config.TextColumn(
                    "Decides what is active", help="index: the platform's index; blobs: blobs only (history)"
                ),
                "index_schema": "Index schema",
                "active_reactions": "Active reactions",
                "blob_reactions": "In the blobs",
                "index_rows_present": "Index rows present",
                "index_rows_removed": "Index rows removed",
                "reactions_only_in_blobs": st.column_config.NumberColumn(
                    "Only in the blobs", help="Replaced or cleared before any load read the index: history only"
                ),
                "last_blob_load_at": st.column_config.DatetimeColumn("Last blob load (UTC)", format="YYYY-MM-DD HH:mm"),
                "last_index_load_at": st.column_config.DatetimeColumn(
                    "Last index load (UTC)", format="YYYY-MM-DD HH:mm"
                ),
            },
        )

st.subheader("Rows landed per day")
with layout.section("Loads per day"):
    charts.show(
        queries.daily_loaded_rows(),
        lambda frame: px.bar(
            frame,
            x="load_date",
            y="rows_loaded",
            color="target_table",
            title="Rows landed per load day, by raw table",
            labels={"load_date": "Load date (UTC)", "rows_loaded": "Rows landed (count)", "target_table": "Raw table"},
        ).update_xaxes(tickformat="%Y-%m-%d", dtick=86_400_000),
        "No loads yet: run `feedback-analytics ingest ...`.",
    )

st.subheader("Quarantine")
with layout.section("Quarantine"):
    quarantine = queries.quarantine_by_reason()
    if quarantine.empty:
        st.success("Nothing quarantined: every row read passed its source contract.")
    else:
        layout.table(quarantine, "quarantine", hide_index=True)

st.subheader("Latest loads")
with layout.section("Latest loads"):
    layout.table(queries.recent_loads(), "recent_loads", hide_index=True)
