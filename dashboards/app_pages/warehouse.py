"""Warehouse (operations): rows per raw table, where each source's rows came from (and, for turn reactions, which
part decides what is active), the latest loads, what was quarantined and why; and the one place that names the
warehouse file.

Reads the warehouse_* marts (staging views over the raw tables, the load manifest and the quarantine), so it
shows the warehouse as of the last build; before the first build it says to run one, like every page. The
freshness line's "last ingest" is read live (data.status).
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import charts, layout, text, words
from dashboards.queries import warehouse as queries

status, f = layout.page("Warehouse")
if layout.tenantless("Warehouse operations (counts over every tenant)"):
    st.stop()
built = f"{status.built_at:%Y-%m-%d %H:%M} UTC" if status.built_at else "the last build"
st.caption(
    f"Operations view of the raw schema as of the last build ({built}): rebuild after an ingest to see its rows. "
    "The period filter does not apply here; a tenant or project filter applies to the turn reactions' sources "
    "only, the other counts are over every tenant."
)
# the one page that names the file: the serving file the last build published, which every page reads
st.caption(f"Every page reads the warehouse's serving file {text.markdown(status.path, limit=None)}.")


def table_names(values: pd.Series) -> pd.Series:
    """Raw table names in words (`turn_reactions` -> "turn reactions")."""
    return values.astype("string").str.replace("_", " ", regex=False)


def loaded_at(values: pd.Series) -> list[str]:
    """Load times as text, "never" for none (a table shows a missing time as `None`)."""
    return ["never" if pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d %H:%M}" for value in values]


with layout.section("Raw tables"):
    if not layout.not_split(f, "Rows per raw table"):
        counts = queries.raw_table_counts()
        if counts.empty:
            st.info("No raw table counts in this build: run `feedback-analytics build`.")
        else:
            columns = st.columns(len(counts))
            for column, row in zip(columns, counts.itertuples(), strict=True):
                column.metric(
                    text.markdown(table_names(pd.Series([row.raw_table])).iloc[0]), words.count(row.row_count)
                )

st.subheader("Where the rows come from")
with layout.section("Where the rows come from"):
    if not layout.not_split(f, "Where the rows come from (counts over every tenant)"):
        inputs = queries.source_inputs()
        if inputs.empty:
            st.info("No loads yet: run `feedback-analytics ingest ...`.")
        else:
            layout.table(
                inputs.assign(raw_table=table_names(inputs["raw_table"])),
                "source_inputs",
                hide_index=True,
                # the key numbers first: at 390 px the first columns are what stays on screen
                column_order=[
                    "raw_table",
                    "rows_loaded",
                    "rows_quarantined",
                    "input_kind",
                    "rows_read",
                    "rows_duplicate",
                    "rows_skipped",
                    "rows_removed",
                    "inputs",
                    "loads",
                    "last_load_at",
                    "purpose",
                ],  # fmt: skip
                column_config={
                    "raw_table": "Raw table",
                    "input_kind": "Read from",
                    "purpose": st.column_config.TextColumn("What its rows are for", width="large"),
                    "inputs": st.column_config.NumberColumn(
                        "Inputs", format="localized", help="Distinct files, folders or tables read"
                    ),
                    "rows_read": st.column_config.NumberColumn("Read", format="localized"),
                    "rows_loaded": st.column_config.NumberColumn("Landed", format="localized"),
                    "rows_quarantined": st.column_config.NumberColumn("Quarantined", format="localized"),
                    "rows_duplicate": st.column_config.NumberColumn("Duplicates", format="localized"),
                    "rows_skipped": st.column_config.NumberColumn(
                        "Skipped",
                        format="localized",
                        help="Records that are not this source's (a blob tree's messages): counted, never stored",
                    ),
                    "rows_removed": st.column_config.NumberColumn(
                        "Found removed",
                        format="localized",
                        help="Index rows a later load found gone: cleared or replaced reactions",
                    ),
                    "loads": st.column_config.NumberColumn("Loads", format="localized"),
                    "last_load_at": st.column_config.DatetimeColumn("Last load (UTC)", format="YYYY-MM-DD HH:mm"),
                },
            )

st.subheader("Turn reactions: which part decides what is active")
with layout.section("Turn reactions: which part decides"):
    parts = queries.reaction_sources(f.tenant, f.project)
    if parts.empty:
        st.info("No turn reactions in this build for these filters.")
    else:
        blobs_only = parts[parts["active_part"] == "blobs"]
        if blobs_only.empty:
            st.caption(
                "The platform's index decides for every tenant and project shown: a reaction is active while its "
                "index row exists; the blobs are the history of every reaction written."
            )
        else:
            # no tenant or project name in the message: upstream values are shown as text, in the table only
            st.info(
                f'Blobs only for {words.count(len(blobs_only))} tenant and project pair(s), marked "blobs only" '
                "below: blobs are the history of every reaction ever written and cannot tell a "
                "clear (the platform deletes the index rows and writes nothing), so a cleared reaction still counts "
                "there. Load the index to count what the platform counts: `feedback-analytics ingest reactions "
                "--postgres DSN`.",
                icon=":material/info:",
            )
        layout.table(
            parts.assign(
                active_part=parts["active_part"]
                .map({"index": "the index", "blobs": "blobs only"})
                .fillna(parts["active_part"]),
                index_schema=parts["index_schema"].fillna("no index loaded"),
                last_blob_load_at=loaded_at(parts["last_blob_load_at"]),
                last_index_load_at=loaded_at(parts["last_index_load_at"]),
            ),
            "reaction_sources",
            hide_index=True,
            column_order=[
                "tenant",
                "project",
                "active_reactions",
                "active_part",
                "blob_reactions",
                "index_rows_present",
                "index_rows_removed",
                "reactions_only_in_blobs",
                "index_schema",
                "last_blob_load_at",
                "last_index_load_at",
            ],  # fmt: skip
            column_config={
                "tenant": "Tenant",
                "project": "Project",
                "active_part": st.column_config.TextColumn(
                    "Decides what is active",
                    help="the index: the platform's index; blobs only: the blobs' history, which cannot tell a clear",
                ),
                "index_schema": "Index schema",
                "active_reactions": st.column_config.NumberColumn("Active reactions", format="localized"),
                "blob_reactions": st.column_config.NumberColumn("In the blobs", format="localized"),
                "index_rows_present": st.column_config.NumberColumn("Index rows present", format="localized"),
                "index_rows_removed": st.column_config.NumberColumn("Index rows removed", format="localized"),
                "reactions_only_in_blobs": st.column_config.NumberColumn(
                    "Only in the blobs",
                    format="localized",
                    help="Replaced or cleared before any load read the index: history only",
                ),
                "last_blob_load_at": "Last blob load (UTC)",
                "last_index_load_at": "Last index load (UTC)",
            },
        )

st.subheader("Rows landed per day")
with layout.section("Loads per day"):
    if not layout.not_split(f, "Rows landed per day (counts over every tenant)"):
        daily = queries.daily_loaded_rows()
        charts.show(
            daily.assign(target_table=table_names(daily["target_table"]).map(text.plotly)),
            lambda frame: (
                px.bar(
                    frame,
                    x="load_date",
                    y="rows_loaded",
                    color="target_table",
                    title="Rows landed per day",
                    labels={
                        "load_date": "Load date (UTC)",
                        "rows_loaded": "Rows landed (count)",
                        "target_table": "Raw table",
                    },
                )
                .update_xaxes(tickformat="%Y-%m-%d", dtick=86_400_000)
                .update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0})
            ),
            "No loads yet: run `feedback-analytics ingest ...`.",
        )

st.subheader("Quarantine")
with layout.section("Quarantine"):
    if not layout.not_split(f, "Quarantined rows (counts over every tenant)"):
        quarantine = queries.quarantine_by_reason()
        if quarantine.empty:
            st.success("Nothing quarantined: every row read passed its source contract.")
        else:
            layout.table(
                quarantine.assign(target_table=table_names(quarantine["target_table"])),
                "quarantine",
                hide_index=True,
                column_order=["rows", "target_table", "first_reason", "last_seen_at"],
                column_config={
                    "rows": st.column_config.NumberColumn("Rows", format="localized", width="small"),
                    "target_table": "Raw table",
                    "first_reason": st.column_config.TextColumn("Why (the first reason found)", width="large"),
                    "last_seen_at": st.column_config.DatetimeColumn("Last seen (UTC)", format="YYYY-MM-DD HH:mm"),
                },
            )

st.subheader("Latest loads")
with layout.section("Latest loads"):
    if not layout.not_split(f, "Latest loads (counts over every tenant)"):
        loads = queries.recent_loads()
        layout.table(
            loads.assign(target_table=table_names(loads["target_table"]), source=table_names(loads["source"])),
            "recent_loads",
            hide_index=True,
            column_order=[
                "finished_at",
                "rows_loaded",
                "target_table",
                "rows_read",
                "rows_quarantined",
                "rows_duplicate",
                "seconds",
                "source",
                "uri",
            ],  # fmt: skip
            column_config={
                "finished_at": st.column_config.DatetimeColumn("Finished (UTC)", format="YYYY-MM-DD HH:mm"),
                "rows_loaded": st.column_config.NumberColumn("Landed", format="localized"),
                "target_table": "Raw table",
                "rows_read": st.column_config.NumberColumn("Read", format="localized"),
                "rows_quarantined": st.column_config.NumberColumn("Quarantined", format="localized"),
                "rows_duplicate": st.column_config.NumberColumn("Duplicates", format="localized"),
                "seconds": st.column_config.NumberColumn("Took (s)", format="%.1f"),
                "source": "Source",
                "uri": st.column_config.TextColumn("Read from (file, folder or table)", width="large"),
            },
        )
