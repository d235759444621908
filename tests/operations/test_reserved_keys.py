"""The all-tenants key of the period marts is a value no source can produce: a tenant (or project) named
`(all)` is a tenant of its own, counted once, and the rollup over every tenant is right.

One small warehouse, one build: the platform's blob tree (as conversation_store.put_message writes it) with a
tenant `(all)` (project `docs`) and a tenant `acme` whose project is `(all)`, ingested through the real
command line; a tenant spelled like the key itself (its control character included) is quarantined at ingest.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from tests.support.ingest import workspace_feedback, write_jsonl
from tests.support.kdcube import Platform, index_schema
from tests.support.operations import ok, ops_env, run_ops

pytestmark = pytest.mark.slow

AS_OF = "2026-11-01"
KEY = "\x1f(all)"  # the all-members key, spelled out: what a hostile source would send
REACTED = dt.datetime(2026, 10, 20, 9, 0, tzinfo=dt.UTC)


class BlobStore(Platform):
    """A tenant and project of the platform whose index is not read: only its blob tree, written by the
    platform's own code paths (put_message through submit_turn_feedback); index writes are left out."""

    def __post_init__(self) -> None:
        self.schema = index_schema(self.tenant, self.project)
        self._uuids = uuid.UUID(int=self.seed * 7919 + 1)
        self._n = 0

    def add_message(self, **row: Any) -> None:
        return None

    def remove_user_reaction(self, *, user: str, conversation_id: str, turn_id: str) -> int:
        return 0


def _react(store: BlobStore, conversation: str, reactions: list[str]) -> None:
    for n, reaction in enumerate(reactions):
        store.submit_turn_feedback(
            user=f"user-{n}", conversation_id=conversation, turn_id=f"turn-{n}", reaction=reaction, at=REACTED
        )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("reserved-keys")
    storage = work / "storage"
    _react(BlobStore(dsn="", storage=storage, tenant="(all)", project="docs", seed=1), "conv-all", ["ok", "not_ok"])
    _react(BlobStore(dsn="", storage=storage, tenant="acme", project="(all)", seed=2), "conv-acme", ["ok"])
    # the key itself as a tenant: its control character is refused at ingest
    key_store = BlobStore(dsn="", storage=storage, tenant=KEY, project="docs", seed=3)
    _react(key_store, "conv-key", ["ok"])
    feedback = write_jsonl(work / "workspace" / "feedback.jsonl", [workspace_feedback(1, tenant_id=KEY)])
    env = ops_env(work)
    db = work / "warehouse.duckdb"
    ingests = [
        run_ops("ingest", "reactions", storage, "--db", db, env=env, timeout=600),
        run_ops("ingest", "workspace", feedback, "--db", db, env=env, timeout=600),
    ]
    build = run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=1800)
    yield {"db": db, "serving": work / "warehouse.serving.duckdb", "ingests": ingests, "build": build}


def _read(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_the_dashboard_reads_the_key_the_marts_are_built_with(built: dict[str, Any]) -> None:
    """build_info serves the dbt var to the dashboard, and it holds a control character (what no source can send)."""
    ok(built["build"])
    project = yaml.safe_load((Path(__file__).resolve().parents[2] / "dbt_project.yml").read_text())
    assert _read(built["serving"], "select all_members_key from marts.build_info") == [(KEY,)]
    assert project["vars"]["all_members_key"] == KEY
    assert any(ord(c) < 32 for c in KEY)


def test_a_tenant_named_all_is_counted_once_and_the_rollup_is_right(built: dict[str, Any]) -> None:
    ok(built["build"])
    found = _read(
        built["serving"],
        """
        select tenant_filter, project_filter, successes, trials
        from marts.metric_rates_by_period
        where metric = 'reaction_satisfaction' and segment_type = 'all' and as_of_date = date '2026-11-01'
            and period_days = 30 and not is_retention_filtered
        order by all
        """,
    )
    everyone = KEY
    expected = sorted(
        [
            ("(all)", "docs", 1, 2),  # the tenant named (all): its own rows, once
            ("(all)", everyone, 1, 2),
            ("acme", "(all)", 1, 1),  # the project named (all)
            ("acme", everyone, 1, 1),
            (everyone, "docs", 1, 2),
            (everyone, "(all)", 1, 1),
            (everyone, everyone, 2, 3),  # every tenant and project together
        ]
    )
    assert [(t, p, float(s), int(n)) for t, p, s, n in found] == expected


def test_the_key_itself_is_quarantined_as_a_tenant_of_any_source(built: dict[str, Any]) -> None:
    for result in built["ingests"]:
        assert "Traceback" not in result.stdout + result.stderr
    reasons = _read(built["db"], "select target_table, reason from raw.quarantine order by target_table")
    assert [(table, reason.split(" ", 1)[0]) for table, reason in reasons] == [
        ("turn_reactions", "tenant"),
        ("workspace_feedback", "tenant_id"),
    ], reasons
    assert all("holds a control character" in reason for _, reason in reasons), reasons
    tenants = {t for (t,) in _read(built["db"], "select distinct tenant from raw.turn_reactions")}
    assert tenants == {"(all)", "acme"}
