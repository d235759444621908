"""Conversations and reactions: satisfaction by origin, replaced and cleared reactions, a conversation's turns.

Satisfaction and the flip rate (of the period and per day): metric_rates_by_period; counts per day:
reaction_changes_daily; conversations: conversation_satisfaction, turn_reactions_active and the retained or
stored turn reactions (dashboards/queries/conversations.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards import charts, layout, text, words
from dashboards.queries import conversations as queries

MAX_CARDS = 200  # reactions drawn one by one; a longer conversation shows its first ones and says so
COMMENT_LIMIT = 2_000  # characters of a comment shown; the CSV of the history holds it whole


def _in_words(word: str, known: dict[str, str]) -> str:
    """A code's words for markdown: ours as they are, an unknown code from upstream as text."""
    return word if word in known.values() else text.markdown(word)


def _reaction_line(row: pd.Series) -> str:
    """One reaction's heading, in words: when, which turn, who, what (and the machine's confidence)."""
    reaction = (
        "no value (counted as neutral)"
        if pd.isna(row["reaction"])
        else _in_words(words.reaction(row["reaction"]), words.REACTIONS)
    )
    parts = [
        f"{pd.Timestamp(row['reacted_at']):%Y-%m-%d %H:%M:%S} UTC",
        f"turn {int(row['turn_number'])}",
        _in_words(words.origin(row["origin"]), words.ORIGINS),
        f"**{reaction}**",
    ]
    if row["origin"] == "machine":
        parts.append(f"confidence {float(row['confidence']):.2f}")
    return " · ".join(parts)


def _comment(value: object) -> None:
    """The reaction's text as plain text (st.text: never markdown), or "no comment"."""
    if isinstance(value, str) and value.strip():
        st.text(text.visible(value, COMMENT_LIMIT))
    else:
        st.caption("no comment")


def _status(row: pd.Series) -> str:
    """A stored reaction's part in the counts, in words."""
    if row["is_active"]:
        return "counted"
    return "cleared" if row["is_clear"] else "not counted (replaced, or below the confidence threshold)"


def show_conversation(chosen: pd.Series, retained: bool, *, picked: bool) -> None:
    """A conversation's reactions in time order, one card each (readable at 390 px), then every stored one."""
    st.markdown(
        "#### What was said, reaction by reaction"
        + ("" if picked else "\n\nThe most recent conversation; select a row above to read another.")
    )
    # upstream values as code spans (dashboards/text.py): shown as text, never as markdown
    st.caption(
        f"Conversation {text.markdown(chosen['conversation_id'])} · {text.markdown(chosen['tenant_name'])} / "
        f"{text.markdown(chosen['project'])} · turns numbered in the order they were first reacted to"
    )
    reactions, history = queries.conversation_detail(
        chosen["source_tenant_id"], chosen["project"], chosen["conversation_id"], retained
    )
    if reactions.empty:
        st.info("This conversation has no active reaction left (all cleared or below the confidence threshold).")
    else:
        if len(reactions) > MAX_CARDS:
            st.caption(f"The first {MAX_CARDS} of {words.count(len(reactions))} reactions.")
        for _, row in reactions.head(MAX_CARDS).iterrows():
            with st.container(border=True):
                st.markdown(_reaction_line(row))
                _comment(row["comment_text"])
    with st.expander("Every stored reaction of this conversation, replaced and cleared ones too"):
        if history.empty:
            st.info("No stored reactions for this conversation.")
            return
        shown = history.assign(
            reaction=[
                "cleared" if clear else words.reaction(value)
                for value, clear in zip(history["reaction"], history["is_clear"], strict=True)
            ],
            origin=history["origin"].map(words.origin),
            status=[_status(row) for _, row in history.iterrows()],
            comment_text=history["comment_text"].fillna("no comment"),
        )
        layout.table(
            shown.drop(columns=["is_clear", "is_active"]),
            "conversation_reaction_history",
            hide_index=True,
            column_order=[
                "reacted_at",
                "turn_number",
                "reaction",
                "status",
                "origin",
                "confidence",
                "comment_text",
                "turn_id",
                "rn",
            ],  # fmt: skip
            column_config={
                "reacted_at": st.column_config.DatetimeColumn("When (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                "turn_number": st.column_config.NumberColumn("Turn", format="localized", width="small"),
                "reaction": "Reaction",
                "status": "Counted?",
                "origin": "Given by",
                "confidence": st.column_config.NumberColumn("Confidence", format="%.2f"),
                "comment_text": st.column_config.TextColumn("Comment", width="large"),
                "turn_id": "Turn id",
                "rn": "Reaction id",
            },
        )


status, f = layout.page("Conversations and reactions")
layout.scope(
    f,
    "Tenant and project apply to satisfaction and conversations; replaced and cleared reactions are counted "
    "over every tenant only.",
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
            help="Share of the period's active reactions that are OK: OK, not OK and neutral reactions all "
            "count, a machine reaction without a value counts as neutral.",
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
    if not layout.tenantless("Replaced and cleared reactions (counted over every tenant)") and not layout.not_split(
        f, "Replaced and cleared reactions (counted over every tenant)"
    ):
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
                    f"{words.percent(flip['rate'])} of user reactions were replaced or cleared "
                    f"(95% CI {words.rate_interval(flip['rate_ci_low'], flip['rate_ci_high'])})."
                )
        changed = changes.rename(columns={"replacements": "replaced", "clears": "cleared"})
        charts.show(
            changed.melt(
                id_vars="reaction_date",
                value_vars=["replaced", "cleared"],
                var_name="change",
                value_name="reactions",
            ),
            lambda frame: charts.stacked_bars(
                frame,
                x="reaction_date",
                y="reactions",
                color="change",
                title="Replaced or cleared reactions per day",
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
            f"{words.count(matching)} conversations with their last reaction in the period"
            + (
                f"; the {words.count(len(conversations))} most recent are listed"
                if matching > len(conversations)
                else ""
            )
            + ". Select a row to read its reactions."
        )
        table = layout.table(
            conversations.drop(columns="matching"),
            "conversations",
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key="conversations_table",
            # the key numbers first: at 390 px the first columns are what stays on screen
            column_order=[
                "satisfaction_rate",
                "total",
                "last_activity_at",
                "tenant_name",
                "project",
                "user",
                "machine",
                "ok",
                "not_ok",
                "neutral",
                "conversation_id",
            ],  # fmt: skip
            column_config={
                "satisfaction_rate": st.column_config.NumberColumn(
                    "Satisfaction", format="percent", help="Share of its active reactions that are OK"
                ),
                "total": st.column_config.NumberColumn(
                    "Reactions", format="localized", width="small", help="Active reactions"
                ),
                "last_activity_at": st.column_config.DatetimeColumn("Last reaction (UTC)", format="YYYY-MM-DD HH:mm"),
                "tenant_name": "Tenant",
                "project": "Project",
                "user": st.column_config.NumberColumn("By users", format="localized"),
                "machine": st.column_config.NumberColumn("By the machine", format="localized"),
                "ok": st.column_config.NumberColumn("OK", format="localized"),
                "not_ok": st.column_config.NumberColumn("Not OK", format="localized"),
                "neutral": st.column_config.NumberColumn("Neutral", format="localized"),
                "conversation_id": "Conversation id",
                # the keys behind the row (tenant key, the reactions' own tenant id), not shown
                "tenant": None,
                "source_tenant_id": None,
            },
        )
        rows = table.selection.rows if table is not None else []
        chosen = conversations.iloc[rows[0] if rows else 0]
        show_conversation(chosen, f.retained, picked=bool(rows))
