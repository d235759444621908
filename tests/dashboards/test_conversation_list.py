"""The Conversations page's list of a period's conversations and the drill-down into one, against plain queries of
the demo's serving file: the same rows and count for every period, filter and reader, and a list that reads the
listed columns of the newest rows only (dashboards/queries/conversations.py NEWEST)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

import duckdb
import pandas as pd
import pytest

from dashboards import data
from dashboards.queries import conversations
from dashboards.queries import scope as filter_scope
from tests.support.dashboard import DemoWarehouse
from warehouse.access import EVERYTHING, Scope
from warehouse.location import serving_path

pytestmark = pytest.mark.slow

AS_OF = dt.date(2026, 11, 1)
A = "acme"  # a demo tenant with conversations
COLUMNS = """tenant_name, project, conversation_id, last_activity_at, total, "user", machine, ok, not_ok, neutral,
    satisfaction_rate, tenant, source_tenant_id"""


def plain_list(
    demo: DemoWarehouse, start: dt.date, retained: bool, tenant: str | None, project: str | None, readable: set | None
) -> tuple[pd.DataFrame, int]:
    """The period's conversations in the page's order and their count, by the plainest query of the serving file
    (`readable`: the reader's tenants, None for every tenant)."""
    floor = filter_scope.floor("turn_reactions", retained)
    where = "last_activity_at >= ? and last_activity_at < ? and (? is null or last_activity_at >= ?)"
    parameters: list = [start, AS_OF + dt.timedelta(days=1), floor, floor]
    for column, value in (("tenant", tenant), ("project", project)):
        if value is not None:
            where += f" and {column} = ?"
            parameters.append(value)
    if readable is not None:
        where += " and list_contains(?, tenant)"
        parameters.append(sorted(readable))
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        rows = con.execute(
            f"select {COLUMNS} from marts.conversation_satisfaction where {where} "
            "order by last_activity_at desc, conversation_id",
            parameters,
        ).df()
    return rows, len(rows)


def filters() -> Iterator[tuple[str | None, str | None]]:
    """Every tenant, each tenant alone, and each tenant with its first project."""
    for tenant in [None, *filter_scope.tenants()]:
        yield tenant, None
        if tenant is not None:
            for project in filter_scope.projects(tenant)[:1]:
                yield tenant, project


@pytest.mark.parametrize("reader", [EVERYTHING, Scope.only({A})], ids=["every tenant", "a tenant reader"])
def test_the_list_and_its_count_are_the_plain_querys_for_every_period_and_filter(
    on_demo: DemoWarehouse, reader: Scope
) -> None:
    """The newest rows (a small limit, so the period holds more than it; and the page's 500) and `matching`, the
    count of the period, for the 1, 7, 30 and 90 days, with and without the retention switch, every filter."""
    checked = 0
    with data.use_scope(reader):
        for tenant, project in list(filters()):
            for days in (1, 7, 30, 90):
                start = AS_OF - dt.timedelta(days=days - 1)
                for retained in (True, False):
                    readable = None if reader == EVERYTHING else set(reader.tenants or ())
                    expected, count = plain_list(on_demo, start, retained, tenant, project, readable)
                    for limit in (3, 500):
                        listed = conversations.conversations(start, AS_OF, retained, tenant, project, limit)
                        assert listed["matching"].tolist() == [count] * min(count, limit), (tenant, project, days)
                        pd.testing.assert_frame_equal(
                            listed.drop(columns="matching"), expected.head(limit).reset_index(drop=True)
                        )
                    checked += count > 3
    assert checked > 10  # periods and filters with more conversations than the small limit


def operators(node: dict) -> Iterator[dict]:
    yield node
    for child in node.get("children", []):
        yield from operators(child)


def test_the_list_reads_the_listed_columns_of_the_newest_rows_only(demo: DemoWarehouse) -> None:
    """No window over the period's rows, and the scan that reads a listed column (tenant_name) returns the newest
    `limit` rows and those tied with the last of them, not every row of the period (90 days)."""
    limit = 5
    period = {"start": AS_OF - dt.timedelta(days=89), "end": AS_OF, "floor": None, "tenant": None, "project": None}
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        newest_instants = con.execute(
            "select last_activity_at from marts.conversation_satisfaction where last_activity_at >= $start "
            "and last_activity_at < $end + interval 1 day order by last_activity_at desc",
            {"start": period["start"], "end": period["end"]},
        ).fetchall()
        plan = json.loads(
            con.execute(
                f"explain (analyze, format json) {conversations.NEWEST}", {**period, "limit": limit}
            ).fetchall()[0][1]
        )
    at_or_after_last = sum(1 for (at,) in newest_instants if at >= newest_instants[limit - 1][0])
    assert len(newest_instants) > 10 * limit
    found = [node for root in plan["operator"] for node in operators(root)]
    assert not [node for node in found if node.get("type") == "WINDOW"]
    wide_scans = [
        node
        for node in found
        if node.get("type") == "TABLE_SCAN" and "tenant_name" in node.get("extra_info", {}).get("Projections", [])
    ]
    assert wide_scans and all(node["intermediate_rows"] <= at_or_after_last for node in wide_scans), wide_scans


def test_the_drill_down_is_the_plain_querys(on_demo: DemoWarehouse) -> None:
    """A conversation's active reactions and stored ones (a conversation with a replaced or cleared reaction):
    the rows of the plain lookups, in time order, each active one flagged in the history."""
    with duckdb.connect(str(serving_path(on_demo.db)), read_only=True) as con:
        key = con.execute(
            "select tenant, project, conversation_id from marts.stored_turn_reactions "
            "group by all having count(*) > count(distinct turn_id) and bool_or(is_clear) "
            "order by all limit 1"
        ).fetchone()
        assert key is not None
        stored = con.execute(
            "select reacted_at, origin, reaction, is_clear, reaction_rn as rn from marts.stored_turn_reactions "
            "where tenant = ? and project = ? and conversation_id = ? order by reacted_at, reaction_rn",
            list(key),
        ).df()
        active = con.execute(
            "select reacted_at, origin, reaction, rn from marts.turn_reactions_active "
            "where source_tenant_id = ? and project = ? and conversation_id = ? order by reacted_at, rn",
            list(key),
        ).df()
    shown_active, history = conversations.conversation_detail(*key, False)
    pd.testing.assert_frame_equal(
        shown_active.sort_values(["reacted_at", "rn"])[list(active.columns)].reset_index(drop=True), active
    )
    pd.testing.assert_frame_equal(
        history.sort_values(["reacted_at", "rn"])[list(stored.columns)].reset_index(drop=True), stored
    )
    assert history["is_active"].tolist() == history["rn"].isin(active["rn"]).tolist()
    assert len(stored) > len(active) > 0


@pytest.mark.parametrize("retained", [False, True])
def test_each_drill_down_statement_reads_each_table_once(demo: DemoWarehouse, retained: bool) -> None:
    """The active reactions' statement and the history's each scan turn_reactions_active and stored_turn_reactions
    once (the conversation's rows, shared by the turn numbering, the list and the active flags)."""
    with duckdb.connect(str(serving_path(demo.db)), read_only=True) as con:
        key = con.execute(
            "select source_tenant_id, project, conversation_id from marts.turn_reactions_active order by all limit 1"
        ).fetchone()
        assert key is not None
        for statement in conversations.DETAIL_STATEMENTS[retained]:
            parameters = dict(zip(("source_tenant_id", "project", "conversation_id"), key, strict=True))
            plan = json.loads(con.execute(f"explain (analyze, format json) {statement}", parameters).fetchall()[0][1])
            scanned = [
                node["extra_info"].get("Table", "").rsplit(".", 1)[-1]
                for root in plan["operator"]
                for node in operators(root)
                if node.get("type") == "TABLE_SCAN"
            ]
            assert sorted(scanned) == ["stored_turn_reactions", "turn_reactions_active"], scanned
