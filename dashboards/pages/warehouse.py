"""Warehouse (operations): rows per raw table, the latest loads, what was quarantined and why.

Reads raw's bookkeeping tables, so it works before the marts are ever built.
"""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import charts, data, layout

status, f = layout.page("Warehouse", needs_marts=False)
if not status.ready:
    st.info(status.message)
st.caption("Operations view of the raw schema: the sidebar filters do not apply here.")

with layout.section("Raw tables"):
    counts = data.raw_table_counts()
    columns = st.columns(len(counts))
    for column, row in zip(columns, counts.itertuples(), strict=True):
        column.metric(row.raw_table.replace("_", " "), f"{row.row_count:,}")

st.subheader("Rows landed per day")
with layout.section("Loads per day"):
    charts.show(
        data.daily_loaded_rows(),
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
    quarantine = data.quarantine_by_reason()
    if quarantine.empty:
        st.success("Nothing quarantined: every row read passed its source contract.")
    else:
        st.dataframe(quarantine, hide_index=True)

st.subheader("Latest loads")
with layout.section("Latest loads"):
    st.dataframe(data.recent_loads(), hide_index=True)
