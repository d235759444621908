"""Retention: each policy, what its window keeps, what the next purge removes, and what purges did.

Reads retention_policy_summary (windows with the seed's descriptions) and retention_purge_log, as of the last
build (dashboards/queries/retention.py)."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards import charts, layout
from dashboards.queries import retention as queries

status, f = layout.page("Retention")
if layout.tenantless("Retention windows and purges (counts over every tenant)"):
    st.stop()
st.caption(
    "Policies come from the dbt seed `retention_policies`; windows are counted as of the marts' as-of day. "
    "The sidebar switch chooses whether the other pages show only what these windows keep (default) or "
    "everything stored. The period, tenant and project filters do not apply here."
)

with layout.section("Retention policies"):
    windows = queries.retention_windows()
    if windows.empty:
        st.info("No retention policies: the seed `retention_policies` is empty.")
    else:
        removable = windows[windows["action"] != "never"]
        deletes = int(removable.loc[removable["action"] == "delete", "rows_outside_window"].sum())
        archives = int(removable.loc[removable["action"] == "archive", "rows_outside_window"].sum())
        columns = st.columns(3)
        columns[0].metric("Policies", f"{len(windows):,}", help="Rows of the seed retention_policies.")
        columns[1].metric("Next purge deletes", f"{deletes:,}", help="Rows older than their delete policy's window.")
        columns[2].metric(
            "Next purge archives",
            f"{archives:,}",
            help="Analyzer events past the active window move to the Parquet archive; they stay counted.",
        )
        layout.table(
            windows,
            "retention_policy_windows",
            hide_index=True,
            column_config={
                "keep_days": st.column_config.NumberColumn("Keep (days)", format="%d"),
                "as_of_at": st.column_config.DatetimeColumn("As of (UTC)", format="YYYY-MM-DD HH:mm"),
                "cutoff_at": st.column_config.DatetimeColumn("Keeps rows from (UTC)", format="YYYY-MM-DD"),
                "rows_kept": st.column_config.NumberColumn("Rows kept", format="%d"),
                "rows_outside_window": st.column_config.NumberColumn("Rows the next purge removes", format="%d"),
                "description": st.column_config.TextColumn("Policy", width="large"),
            },
        )
        kept = windows.melt(
            id_vars=["policy", "action"],
            value_vars=["rows_kept", "rows_outside_window"],
            var_name="window",
            value_name="rows",
        )
        kept["window"] = [
            "kept by the window"
            if window == "rows_kept"
            else ("archived by the next purge" if action == "archive" else "deleted by the next purge")
            for window, action in zip(kept["window"], kept["action"], strict=True)
        ]
        charts.show(
            kept,
            lambda frame: px.bar(
                frame,
                x="rows",
                y="policy",
                color="window",
                orientation="h",
                color_discrete_map={
                    "kept by the window": "#2e7d32",
                    "archived by the next purge": "#f9a825",
                    "deleted by the next purge": "#e53935",
                },
                title="What each retention window keeps and what the next purge removes",
                labels={"rows": "Rows (count)", "policy": "Retention policy", "window": "Rows"},
            ).update_layout(
                barmode="stack",
                title_subtitle_text="Archived analyzer events leave the active table but stay counted by the metrics",
            ),
            "No rows in any policy's scope.",
        )

st.subheader("Purge log")
with layout.section("Purge log"):
    log = queries.purge_log()
    if log.empty:
        st.info(
            "No purge has run on this warehouse yet. `feedback-analytics purge --dry-run` shows what one would "
            "remove; `feedback-analytics nightly` purges after each ingest."
        )
    else:
        layout.table(
            log,
            "retention_purge_log",
            hide_index=True,
            column_config={
                "applied_at": st.column_config.DatetimeColumn("Applied at (UTC)", format="YYYY-MM-DD HH:mm"),
                "cutoff": st.column_config.DatetimeColumn("Cutoff (UTC)", format="YYYY-MM-DD"),
                "rows_archived": "Moved to the archive",
                "rows_deleted": "Deleted from the table",
                "rows_deleted_from_archive": "Deleted from the archive",
                "is_dry_run": "Dry run (earlier versions)",
            },
        )
        applied = log[~log["is_dry_run"].fillna(False).astype(bool)]
        charts.show(
            applied.melt(
                id_vars=["applied_at", "policy"],
                value_vars=["rows_deleted", "rows_archived", "rows_deleted_from_archive"],
                var_name="effect",
                value_name="rows",
            ),
            lambda frame: px.bar(
                frame,
                x="applied_at",
                y="rows",
                color="effect",
                title="Rows removed per purge run",
                labels={"applied_at": "Purge run (UTC)", "rows": "Rows (count)", "effect": "Effect"},
            ),
            "Only dry runs so far: nothing was deleted or archived.",
        )
