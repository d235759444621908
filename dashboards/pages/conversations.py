"""Conversations and reactions: satisfaction by origin, replaced and cleared reactions, a conversation's turns.

Satisfaction and the flip rate (of the period and per day): metric_rates_by_period; counts per day:
reaction_changes_daily; conversations: conversation_satisfaction, turn_reactions_active and the retained or
stored turn reactions (dashboards/queries/conversations.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards import charts, layout, text
from dashboards.queries import conversations as queries

status, f = layout.page("Conversations and reactions")
layout.scope(
    f,
    "Tenant and project apply to satisfaction and conversations; replaced and cleared reactions are counted "
    "for all tenants (reaction_changes_daily has no tenant).",
)

st.subheader("Satisfaction by origin")
with layout.section("Satisfaction"):
    daily = queries.satisfaction_daily(f.start, f.end, f.retained, f.tenant, f.project)
    totals = queries.satisfaction_by_origin(f.as_of, f.period_days, f.retained, f.tenant, f.project)
    totals = totals[totals["trials"] > 0]
    columns = st.columns(max(len(totals), 1))
    for column, row in zip(columns, totals.itertuples(), strict=False):
        column.metric(
            f"Satisfaction, {text.markdown(row.segment_value)} reactions",
            "no data" if pd.isna(row.rate) else f"{row.rate:.1%}",
            help="ok / (ok + not_ok + neutral) over the active reactions of the period.",
        )
        if not pd.isna(row.rate):
            column.caption(f"95% CI {row.rate_ci_low:.1%} to {row.rate_ci_high:.1%} (n = {int(row.trials):,})")
    charts.show(
        daily.dropna(subset=["satisfaction_rate"]),
        lambda frame: charts.rate_lines(
            frame,
            x="reaction_date",
            y="satisfaction_rate",
            low="satisfaction_rate_ci_low",
            high="satisfaction_rate_ci_high",
            color="origin",
            title="Satisfaction per day by origin",
            subtitle=f"Bands: 95% CI. {f.period_label()} · {text.plotly(f.scope_label())}",
            y_title="Satisfaction (% of active reactions that are ok)",
            legend_title="Origin",
            hover_count="reactions",
        ),
        "No active reactions in this period for these filters.",
    )

st.subheader("How often users replace or clear a reaction")
with layout.section("Replaced and cleared reactions"):
    if not layout.tenantless("Replaced and cleared reactions (counted over every tenant)"):
        changes = queries.reaction_changes_daily(f.start, f.end, f.retained)
        if not changes.empty:
            total = changes[["user_reactions", "replacements", "reversals", "clears"]].sum()
            flips = queries.flip_rate(f.as_of, f.period_days, f.retained)
            flips = flips[flips["trials"] > 0]
            columns = st.columns(4)
            columns[0].metric("User reactions", f"{int(total['user_reactions']):,}", help="Clears included.")
            columns[1].metric("Replacements", f"{int(total['replacements']):,}", help="A new reaction replaced one.")
            columns[2].metric("Reversals", f"{int(total['reversals']):,}", help="Replacements with another value.")
            columns[3].metric("Clears", f"{int(total['clears']):,}", help="The user removed the reaction.")
            if not flips.empty:
                flip = flips.iloc[0]
                st.caption(
                    f"(replacements + clears) / user reactions = {flip['rate']:.1%} "
                    f"(95% CI {flip['rate_ci_low']:.1%} to {flip['rate_ci_high']:.1%})"
                )
        charts.show(
            changes.melt(
                id_vars="reaction_date",
                value_vars=["replacements", "clears"],
                var_name="change",
                value_name="reactions",
            ),
            lambda frame: charts.stacked_bars(
                frame,
                x="reaction_date",
                y="reactions",
                color="change",
                title="Replaced and cleared user reactions per day",
                subtitle=f"All tenants. {f.period_label()}",
                x_title=charts.DATE_AXIS,
                y_title="Reactions (count per day)",
                legend_title="Change",
            ),
            "No user reactions in this period.",
        )

st.subheader("Conversations in the period")
with layout.section("Conversations"):
    conversations = queries.conversations(f.start, f.end, f.retained, f.tenant, f.project)
    if conversations.empty:
        st.info("No conversation had reaction activity in this period for these filters.")
    else:
        matching = int(conversations["matching"].iloc[0])
        st.caption(
            f"{matching:,} conversations with their last reaction in the period"
            + (f"; the {len(conversations):,} most recent are listed" if matching > len(conversations) else "")
            + ". Select a row to see its turns."
        )
        table = layout.table(
            conversations.drop(columns="matching"),
            "conversations",
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key="conversations_table",
            column_config={
                "tenant_name": "Tenant",
                "last_activity_at": st.column_config.DatetimeColumn("Last reaction (UTC)", format="YYYY-MM-DD HH:mm"),
                "total": "Reactions",
                "satisfaction_rate": st.column_config.NumberColumn("Satisfaction", format="percent"),
                # the keys behind the row (tenant key, the reactions' own tenant id), not shown
                "tenant": None,
                "source_tenant_id": None,
            },
        )
        rows = table.selection.rows if table is not None else []
        chosen = conversations.iloc[rows[0] if rows else 0]
        # upstream values as code spans (dashboards/text.py): shown as text, never as markdown
        st.markdown(
            f"**Conversation** {text.markdown(chosen['conversation_id'])} "
            f"({text.markdown(chosen['tenant_name'])} / {text.markdown(chosen['project'])})"
            + ("" if rows else ": the most recent one; select a row above to pick another")
        )
        turns, history = queries.conversation_detail(
            chosen["source_tenant_id"], chosen["project"], chosen["conversation_id"], f.retained
        )
        if turns.empty:
            st.info("This conversation has no active reaction left (all cleared or below the confidence threshold).")
        else:
            layout.table(
                turns,
                "conversation_turns",
                hide_index=True,
                column_config={
                    "reacted_at": st.column_config.DatetimeColumn("Reacted at (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                    "rn": st.column_config.TextColumn("rn (reaction id)", width="large"),
                    "confidence": st.column_config.NumberColumn("Confidence", format="%.2f"),
                },
            )
        with st.expander("Every stored reaction of this conversation, replaced and cleared ones too"):
            if history.empty:
                st.info("No stored reactions for this conversation.")
            else:
                layout.table(history, "conversation_reaction_history", hide_index=True)
