"""The Conversations and reactions page's queries: satisfaction by origin (of the period and per day, for any
tenant and project), replaced and cleared reactions, the conversations of the period and one conversation."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from dashboards.data import cached, queries, query
from dashboards.queries.period_rates import daily_rates, period_rates
from dashboards.queries.scope import floor


def satisfaction_by_origin(
    as_of: dt.date, period_days: int, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """Satisfaction of the period per origin (segment_value): rate and interval, trials = active reactions."""
    return period_rates(as_of, period_days, retained, tenant, project, ("reaction_satisfaction",), "origin")


def satisfaction_daily(
    start: dt.date, end: dt.date, retained: bool, tenant: str | None, project: str | None
) -> pd.DataFrame:
    """Satisfaction per day and origin: the 1-day periods of metric_rates_by_period."""
    daily = daily_rates(start, end, retained, tenant, project, "reaction_satisfaction", "origin")
    return daily.rename(
        columns={
            "as_of_date": "reaction_date",
            "segment_value": "origin",
            "rate": "satisfaction_rate",
            "rate_ci_low": "satisfaction_rate_ci_low",
            "rate_ci_high": "satisfaction_rate_ci_high",
            "trials": "reactions",
            "successes": "ok",
        }
    )


def flip_rate(as_of: dt.date, period_days: int, retained: bool) -> pd.DataFrame:
    """(replacements + clears) / user reactions over the period, all tenants: one row, none without reactions."""
    return period_rates(as_of, period_days, retained, None, None, ("reaction_flip_rate",))


@cached
def reaction_changes_daily(start: dt.date, end: dt.date, retained: bool) -> pd.DataFrame:
    return query(
        """
        select reaction_date, user_reactions, new_reactions, replacements, reversals, clears,
               flip_rate, flip_rate_ci_low, flip_rate_ci_high
        from marts.reaction_changes_daily
        where reaction_date between $start and $end and ($floor is null or reaction_date >= $floor)
        order by reaction_date
        """,
        {"start": start, "end": end, "floor": floor("turn_reactions", retained)},
    )


# The conversations of a period ($start, $end, retention $floor) and filter ($tenant, $project).
PERIOD = """
    from marts.conversation_satisfaction
    where last_activity_at >= $start and last_activity_at < $end + interval 1 day
      and ($floor is null or last_activity_at >= $floor)
      and ($tenant is null or tenant = $tenant) and ($project is null or project = $project)
"""
# The newest $limit of them with their count. The newest rows are among those at or after the limit-th newest
# instant: reading the period's instants alone finds it, and the rows' other columns are read from there on (the
# mart is stored in time order, conversation_feedback_summary's, so those are the last rows of the period;
# any order gives the same rows). The count is a count of the period, not a window over each of its rows.
NEWEST = f"""
    select tenant_name, project, conversation_id, last_activity_at, total, "user", machine, ok, not_ok, neutral,
           satisfaction_rate, tenant, source_tenant_id,
           (select count(*) {PERIOD}) as matching
    {PERIOD}
      and last_activity_at >= (
          select min(last_activity_at)
          from (select last_activity_at {PERIOD} order by last_activity_at desc limit $limit) as newest
      )
    order by last_activity_at desc, conversation_id
    limit $limit
"""


@cached
def conversations(
    start: dt.date, end: dt.date, retained: bool, tenant: str | None, project: str | None, limit: int = 500
) -> pd.DataFrame:
    """Conversations whose last reaction falls in the period, newest first, with the total count as `matching`.

    `tenant` is the tenant key, `tenant_name` its display name; `source_tenant_id` (the reactions' own tenant),
    project and conversation_id identify the conversation for `conversation_detail`."""
    return query(
        NEWEST,
        {
            "start": start,
            "end": end,
            "floor": floor("turn_reactions", retained),
            "tenant": tenant,
            "project": project,
            "limit": limit,
        },
    )


@cached
def conversation_detail(
    source_tenant_id: str, project: str, conversation_id: str, retained: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One conversation on one connection: its active reactions (those that count) in time order, and every
    stored reaction (replaced and cleared ones too) in time order, flagged when it is the active one.

    Both carry `turn_number`, the turn's place among the conversation's reacted turns (1 = the turn reacted to
    first, over the stored reactions), so the two lists name a turn alike; `rn` identifies a stored reaction.
    The conversation is named as the reactions name it: their own tenant (`source_tenant_id` in the marts,
    `tenant` in the stored rows), project and conversation id. Stored rows: stored_turn_reactions (everything
    stored up to as_of), only those it marks is_retained (the rows of retained_turn_reactions) when the
    retention switch is on."""
    key = {"source_tenant_id": source_tenant_id, "project": project, "conversation_id": conversation_id}
    active, history = queries(*((statement, key) for statement in DETAIL_STATEMENTS[retained]))
    return active, history


def _detail_statements(retained: bool) -> tuple[str, str]:
    """conversation_detail's two statements, of $source_tenant_id, $project and $conversation_id: the active
    reactions and the stored ones (only those marked is_retained when `retained`)."""
    same_conversation = "project = $project and conversation_id = $conversation_id"
    active_rows = f"source_tenant_id = $source_tenant_id and {same_conversation}"
    stored_rows = f"tenant = $source_tenant_id and {same_conversation}" + (" and is_retained" if retained else "")
    # the conversation's rows, the columns the lists show, read once per statement (materialized: each table is
    # scanned once, not once per reference), and every reacted turn of it, numbered by its first reaction (active
    # or stored)
    conversation = f"""
        active_rows as materialized (
            select reacted_at, origin, reaction, counted_reaction, confidence, comment_text, turn_id, rn
            from marts.turn_reactions_active where {active_rows}
        ),
        stored_rows as materialized (
            select reacted_at, origin, reaction, is_clear, confidence, comment_text, turn_id, reaction_rn
            from marts.stored_turn_reactions where {stored_rows}
        ),
        turns as (
            select turn_id, dense_rank() over (order by min(reacted_at), turn_id) as turn_number
            from (
                select turn_id, reacted_at from active_rows
                union all
                select turn_id, reacted_at from stored_rows
            ) as reacted
            group by turn_id
        )
    """
    return (
        f"""
            with {conversation}
            select active.reacted_at, turns.turn_number, active.origin, active.reaction, active.counted_reaction,
                   active.confidence, active.comment_text, active.turn_id, active.rn
            from active_rows as active
            join turns on turns.turn_id = active.turn_id
            order by active.reacted_at, turns.turn_number, active.origin, active.rn
            """,
        f"""
            with {conversation}
            select history.reacted_at, turns.turn_number, history.origin, history.reaction, history.is_clear,
                   active.rn is not null as is_active, history.confidence, history.comment_text, history.turn_id,
                   history.reaction_rn as rn
            from stored_rows as history
            join turns on turns.turn_id = history.turn_id
            left join active_rows as active on active.rn = history.reaction_rn
            order by history.reacted_at, turns.turn_number, history.origin, history.reaction_rn
            """,
    )


# retention switch -> conversation_detail's statements
DETAIL_STATEMENTS = {retained: _detail_statements(retained) for retained in (False, True)}
