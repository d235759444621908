"""Feedback Analytics dashboard: one entry point, a thin file per page.

feedback-analytics dashboard [--port 8501]
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Feedback Analytics", page_icon=":bar_chart:", layout="wide")

pages = [
    st.Page("pages/warehouse.py", title="Warehouse", icon=":material/database:", default=True),
]
st.navigation(pages).run()
