"""The bare baseline of bench/dashboard_render.py: a minimal Streamlit page with the same kinds of elements as
a dashboard page (sidebar filters, a title, a metric, a Plotly chart, a table) on three rows held in memory.

No warehouse, no queries: its render time is what Streamlit's and Plotly's front end cost on this machine,
the floor under every page of ours.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import plotly.express as px
import streamlit as st

st.set_page_config(page_title="Bare baseline", layout="wide")
st.sidebar.header("Filters")
st.sidebar.date_input("As of (UTC day)", value=dt.date(2026, 11, 1))
st.sidebar.segmented_control("Period", [7, 30, 90], default=30, required=True)
st.sidebar.selectbox("Tenant", ["(all)", "acme"])
st.sidebar.toggle("Retention-filtered data", value=True)
st.title("Bare baseline")
frame = pd.DataFrame(
    {"day": pd.to_datetime(["2026-10-30", "2026-10-31", "2026-11-01"]), "positive_rate": [0.6, 0.7, 0.65]}
)
st.metric("Positive rate", "65%", "-5 pp")
st.plotly_chart(px.line(frame, x="day", y="positive_rate", title="Positive rate per day"))
st.dataframe(frame)
