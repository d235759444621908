"""Warehouse (operations): rows per raw table, the latest loads, what was quarantined and why.

Reads the warehouse_* marts (staging views over the raw tables, the load manifest and the quarantine), so it
shows the warehouse as of the last build; before the first build it says to run one, like every page. The
freshness line's "last ingest" is read live (data.status).
"""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import charts, layout
from dashboards.queries import warehouse as queries

status, f = layout.page("Warehouse")
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
