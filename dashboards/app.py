"""Feedback Analytics dashboard: one entry point, a thin file per page.

    feedback-analytics dashboard [--address 127.0.0.1] [--port 8501] [--auth none|oidc|proxy] [--db PATH]

The entry point first asks dashboards/sign_in.py who the session is and what it may read (a session it
refuses sees a sign-in or no-access page and nothing else), then resolves the warehouse, once, from the command
line that started the server (`--db`, handed over as FEEDBACK_DB) and gives it to the data layer, then draws
the navigation and the sidebar's global filters, then runs the chosen page (dashboards/app_pages/). Pages get
their data from dashboards/queries/ (one module per page, marts only) over the connection core in
dashboards/data.py.
"""

from __future__ import annotations

import streamlit as st

from dashboards import data, filters, sign_in
from warehouse.errors import UserError
from warehouse.location import Warehouse

st.set_page_config(page_title="Feedback Analytics", page_icon=":bar_chart:", layout="wide")

# url_path is the page's address (http://localhost:8501/<url_path>), except for the default page, which
# Streamlit serves at the root (/overview would say "Page not found"); models/exposures.yml lists them.
PAGES = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/dashboard:", url_path="overview", default=True),
    st.Page("app_pages/alerts.py", url_path="alerts", title="Alerts", icon=":material/notifications:"),
    st.Page(
        "app_pages/session_feedback.py",
        url_path="session-feedback",
        title="Session feedback",
        icon=":material/thumbs_up_down:",
    ),
    st.Page(
        "app_pages/conversations.py",
        url_path="conversations",
        title="Conversations and reactions",
        icon=":material/forum:",
    ),
    st.Page("app_pages/skills.py", url_path="skills", title="Skills", icon=":material/build:"),
    st.Page("app_pages/evals.py", url_path="evals", title="Evals", icon=":material/fact_check:"),
    st.Page("app_pages/retention.py", url_path="retention", title="Retention", icon=":material/auto_delete:"),
    st.Page("app_pages/warehouse.py", url_path="warehouse", title="Warehouse", icon=":material/database:"),
]

# Who asks and what they may read (dashboards/sign_in.py); a session it refuses sees one page and the run stops.
identity, scope = sign_in.gate([page.url_path for page in PAGES])
# Every query reads as the session's scope (dashboards/data.py, warehouse/scoped.py). A signed-in user's is
# the access map's, always; the local operator reads everything, unless a scope is already in the session (a
# test's, through AppTest's session_state: no widget has the key, so no browser or URL can set it).
if identity.via != "local" or data.SCOPE_KEY not in st.session_state:
    data.set_session_scope(scope)
sign_in.sidebar(identity)
# The warehouse every query of this session reads: `feedback-analytics dashboard --db` (or the environment of a
# `streamlit run` by hand) hands it over in FEEDBACK_DB, the process boundary; here is its one resolution.
try:
    data.set_session_warehouse(Warehouse.at())
except UserError as exc:  # a file named like a schema: the one-line reason, the path itself is what is wrong
    st.error(str(exc))
    st.stop()

page = st.navigation(PAGES)
try:
    status = data.status()
except data.WarehouseUnavailable as exc:  # the page says why; the path itself may be what is wrong
    status = data.WarehouseStatus("", "unavailable", message=str(exc))
filters.render_sidebar(status)
page.run()
