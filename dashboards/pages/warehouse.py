"""What the warehouse holds: rows per raw table, the latest loads, what was quarantined and why."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import data

st.title("Warehouse")
st.caption(f"Warehouse file: `{data.warehouse_path()}`")

try:
    counts = data.raw_table_counts()
    loads = data.recent_loads()
    quarantine = data.quarantine_by_reason()
    daily = data.daily_loaded_rows()
except data.WarehouseUnavailable as exc:
    st.warning(str(exc))
    st.stop()

last_loaded = counts["last_loaded_at"].max()
st.caption(f"Data as of the last load: {last_loaded if last_loaded == last_loaded else 'never loaded'}")

columns = st.columns(len(counts))
for column, row in zip(columns, counts.itertuples(), strict=True):
    column.metric(row.raw_table.replace("_", " "), f"{row.row_count:,}")

st.subheader("Rows landed per day")
if daily.empty:
    st.info("No loads yet: run `feedback-analytics ingest ...`.")
else:
    figure = px.bar(
        daily,
        x="load_date",
        y="rows_loaded",
        color="target_table",
        title="Rows landed per load day, by raw table",
        labels={"load_date": "Load date (UTC)", "rows_loaded": "Rows landed", "target_table": "Raw table"},
    )
    st.plotly_chart(figure, use_container_width=True)

st.subheader("Quarantine")
if quarantine.empty:
    st.success("Nothing quarantined: every row read passed its source contract.")
else:
    st.dataframe(quarantine, hide_index=True, use_container_width=True)

st.subheader("Latest loads")
st.dataframe(loads, hide_index=True, use_container_width=True)
