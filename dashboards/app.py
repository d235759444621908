"""Feedback Analytics dashboard: one entry point, a thin file per page.

    feedback-analytics dashboard [--port 8501] [--db PATH]

The entry point draws the navigation and the sidebar's global filters, then
runs the chosen page (dashboards/pages/). Pages get their data from
dashboards/queries/ (one module per page, marts only) over the connection core in dashboards/data.py.
"""

from __future__ import annotations

import streamlit as st

from dashboards import data, filters
from warehouse.access import EVERYTHING

st.set_page_config(page_title="Feedback Analytics", page_icon=":bar_chart:", layout="wide")

# url_path is the page's address (http://localhost:8501/<url_path>), except for the default page, which
# Streamlit serves at the root (/overview would say "Page not found"); models/exposures.yml lists them.
PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", url_path="overview", default=True),
    st.Page(
        "pages/session_feedback.py",
        url_path="session-feedback",
        title="Session feedback",
        icon=":material/thumbs_up_down:",
    ),
    st.Page(
        "pages/conversations.py", url_path="conversations", title="Conversations and reactions", icon=":material/forum:"
    ),
    st.Page("pages/skills.py", url_path="skills", title="Skills", icon=":material/build:"),
    st.Page("pages/evals.py", url_path="evals", title="Evals", icon=":material/fact_check:"),
    st.Page("pages/retention.py", url_path="retention", title="Retention", icon=":material/auto_delete:"),
    st.Page("pages/warehouse.py", url_path="warehouse", title="Warehouse", icon=":material/database:"),
]

page = st.navigation(PAGES)
# Every query reads as the session's scope (dashboards/data.py, warehouse/scoped.py). Until sign-in decides it
# from who signed in, the local operator reads everything; a scope already in the session (a test's, through
# AppTest's session_state: no widget has the key, so no browser or URL can set it) is kept.
if data.SCOPE_KEY not in st.session_state:
    data.set_session_scope(EVERYTHING)
try:
    status = data.status()
except data.WarehouseUnavailable as exc:  # the page says why; the path itself may be what is wrong
    status = data.WarehouseStatus("", "unavailable", message=str(exc))
filters.render_sidebar(status)
page.run()
