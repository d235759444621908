"""Retention: each policy, what its window keeps, what the next purge removes, and what purges did.

Reads retention_policy_summary (windows with the seed's descriptions) and retention_purge_log, as of the last
build (dashboards/queries/retention.py)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import charts, layout, words
from dashboards.queries import retention as queries

status, f = layout.page("Retention")
if layout.tenantless("Retention windows and purges (counts over every tenant)"):
    st.stop()
st.caption(
    "Each policy keeps a source's rows for a number of days, counted back from the marts' as-of day. "
    "The sidebar switch chooses whether the other pages show only what these windows keep (default) or "
    "everything stored. The period filter does not apply here; the windows and purges count the rows of every "
    "tenant, so a tenant or project filter shows the policies without their counts."
)

ACTIONS = {"delete": "deleted", "archive": "archived (moved to Parquet, still counted)", "never": "kept forever"}


def in_words(values: pd.Series) -> pd.Series:
    """Policy, table and scope codes in words (`turn_reaction_index` -> "turn reaction index")."""
    return values.astype("string").str.replace("_", " ", regex=False)


with layout.section("Retention policies"):
    windows = queries.retention_windows()
    if windows.empty:
        st.info("No retention policies are configured: the operations runbook says how to set them.")
    else:
        split = words.not_split(f.tenant, f.project)
        removable = windows[windows["action"] != "never"]
        deletes = int(removable.loc[removable["action"] == "delete", "rows_outside_window"].sum())
        archives = int(removable.loc[removable["action"] == "archive", "rows_outside_window"].sum())
        columns = st.columns(3)
        columns[0].metric("Policies", words.count(len(windows)), help="One per source (and scope) of rows.")
        columns[1].metric(
            "Next purge deletes",
            split or words.count(deletes),
            help="Rows older than their delete policy's window, over every tenant.",
        )
        columns[2].metric(
            "Next purge archives",
            split or words.count(archives),
            help="Analyzer events past the active window move to the Parquet archive; they stay counted.",
        )
        shown = windows.assign(
            policy=in_words(windows["policy"]),
            raw_table=in_words(windows["raw_table"]),
            action=windows["action"].map(ACTIONS).fillna(windows["action"]),
            keep_days=["forever" if pd.isna(days) else f"{words.count(days)} days" for days in windows["keep_days"]],
            cutoff_at=[
                "every row" if pd.isna(cutoff) else f"{pd.Timestamp(cutoff):%Y-%m-%d}"
                for cutoff in windows["cutoff_at"]
            ],
        )
        counts = ["rows_kept", "rows_outside_window"]
        layout.table(
            shown.drop(columns=counts) if split else shown,
            "retention_policy_windows",
            hide_index=True,
            # the key numbers first: at 390 px the first columns are what stays on screen
            column_order=[
                "policy",
                *([] if split else ["rows_outside_window", "rows_kept"]),
                "keep_days",
                "action",
                "cutoff_at",
                "raw_table",
                "scope",
                "description",
            ],  # fmt: skip
            column_config={
                "policy": "Policy",
                "rows_outside_window": st.column_config.NumberColumn(
                    "Next purge", format="localized", help="Rows the next purge removes (deletes or archives)"
                ),
                "rows_kept": st.column_config.NumberColumn("Kept", format="localized", help="Rows the window keeps"),
                "keep_days": "Keeps",
                "action": "Past the window, rows are",
                "cutoff_at": "Keeps rows from (UTC)",
                "raw_table": "Raw table",
                "scope": "Which rows",
                "description": st.column_config.TextColumn("What the policy is for", width="large"),
                # the as-of instant is the freshness line's; the date column is the table's own name for it
                "as_of_at": None,
                "date_column": None,
            },
        )
        if split:
            st.info(f"Rows kept and removed per policy: {split}. They count the rows of every tenant.")
        else:
            kept = windows.assign(policy=in_words(windows["policy"])).melt(
                id_vars=["policy", "action"],
                value_vars=counts,
                var_name="window",
                value_name="rows",
            )
            kept["window"] = [
                "kept"
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
                        "kept": "#2e7d32",
                        "archived by the next purge": "#f9a825",
                        "deleted by the next purge": "#e53935",
                    },
                    title="Rows kept and removed per policy",
                    labels={"rows": "Rows (count)", "policy": "Retention policy", "window": "Rows"},
                ).update_layout(
                    barmode="stack",
                    title_subtitle_text="Archived analyzer events stay counted",
                    legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
                ),
                "No rows in any policy's scope.",
            )

st.subheader("Purge log")
with layout.section("Purge log"):
    if not layout.not_split(f, "Purge runs (counts over every tenant)"):
        log = queries.purge_log()
        if log.empty:
            st.info(
                "No purge has run on this warehouse yet. `feedback-analytics purge --dry-run` shows what one would "
                "remove; `feedback-analytics nightly` purges after each ingest."
            )
        else:
            layout.table(
                log.assign(policy=in_words(log["policy"]), table_name=in_words(log["table_name"])),
                "retention_purge_log",
                hide_index=True,
                column_order=[
                    "applied_at",
                    "rows_deleted",
                    "rows_archived",
                    "policy",
                    "rows_deleted_from_archive",
                    "cutoff",
                    "table_name",
                    "is_dry_run",
                ],  # fmt: skip
                column_config={
                    "applied_at": st.column_config.DatetimeColumn("Applied at (UTC)", format="YYYY-MM-DD HH:mm"),
                    "policy": "Policy",
                    "table_name": "Raw table",
                    "cutoff": st.column_config.DatetimeColumn("Cutoff (UTC)", format="YYYY-MM-DD"),
                    "rows_archived": "Moved to the archive",
                    "rows_deleted": "Deleted",
                    "rows_deleted_from_archive": "Deleted from the archive",
                    "is_dry_run": "Dry run (earlier versions)",
                    "archive_uri": None,  # a file path: the archive's place is the operator's, not this page's
                },
            )
            applied = log[~log["is_dry_run"].fillna(False).astype(bool)]
            charts.show(
                applied.rename(
                    columns={
                        "rows_deleted": "deleted",
                        "rows_archived": "archived",
                        "rows_deleted_from_archive": "deleted from the archive",
                    }
                ).melt(
                    id_vars=["applied_at", "policy"],
                    value_vars=["deleted", "archived", "deleted from the archive"],
                    var_name="effect",
                    value_name="rows",
                ),
                lambda frame: px.bar(
                    frame,
                    x="applied_at",
                    y="rows",
                    color="effect",
                    title="Rows removed per purge run",
                    labels={"applied_at": "Purge run (UTC)", "rows": "Rows (count)", "effect": "Rows"},
                ),
                "Only dry runs so far: nothing was deleted or archived.",
            )
