"""Nightly runs over the platform's reactions (the replay of tests/support/kdcube.py: index on a real PostgreSQL,
blob tree on disk, both named in the config): a clear and a replacement between two nightly runs change the
active counts of the next build, in those two conversations only, as the platform's own report counts them;
a build as of an instant before them still counts what was active then."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.support.kdcube import conversations_in_period
from tests.support.kdcube_replay import Replay, replay
from tests.support.operations import ok, ops_env, run_ops
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.slow


def _summary(db: Path) -> dict[tuple, dict]:
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute(
            "select source_tenant_id, project, conversation_id, total, user, machine, ok, not_ok, neutral "
            "from marts.conversation_feedback_summary"
        ).fetchall()
    names = ("total", "user", "machine", "ok", "not_ok", "neutral")
    return {tuple(r[:3]): dict(zip(names, r[3:], strict=True)) for r in found}


def _active_rns(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {r[0] for r in con.execute("select rn from marts.turn_reactions_active").fetchall()}


def _oracle(run: Replay) -> dict[tuple, dict]:
    far = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    return {k: v for k, v in conversations_in_period(run.platforms, far, dt.datetime.now(dt.UTC)).items() if v["total"]}


@pytest.fixture(scope="module")
def nights(pg_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    name = f"kdcube_{uuid.uuid4().hex[:10]}"
    pg_server.psql(f"create database {name}")
    try:
        work = tmp_path_factory.mktemp("nightly-reactions")
        dsn = pg_server.dsn(name)
        run = replay(dsn, work / "storage")
        config = work / "sources.toml"
        config.write_text('[[reactions]]\npostgres_dsn_env = "KDCUBE_INDEX_DSN"\n\n[[reactions]]\npath = "storage"\n')
        env = ops_env(work, KDCUBE_INDEX_DSN=dsn)
        db = work / "warehouse.duckdb"
        serving = work / "warehouse.serving.duckdb"

        def nightly() -> None:
            ok(run_ops("nightly", "--config", config, "--db", db, env=env, timeout=900))

        nightly()
        first = {"summary": _summary(serving), "active": _active_rns(serving), "oracle": _oracle(run)}
        time.sleep(1.1)
        between = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        time.sleep(1.1)
        # a clear in one conversation, a replacement in another (conversations.py:558, ctx_rag.py:1127)
        standing = [
            (platform, r)
            for platform in run.platforms
            for r in platform.index_rows()
            if "origin:user" in (r["tags"] or []) and "artifact:turn.log.reaction" in r["tags"]
        ]
        by_conversation: dict[str, tuple] = {}
        for platform, r in standing:
            by_conversation.setdefault(r["conversation_id"], (platform, r))
        (cleared_on, cleared), (replaced_on, replaced) = list(by_conversation.values())[:2]
        cleared_on.submit_turn_feedback(
            user=cleared["user_id"], conversation_id=cleared["conversation_id"], turn_id=next(r_tags(cleared)),
            reaction=None, at=dt.datetime.now(dt.UTC),
        )  # fmt: skip
        replaced_on.submit_turn_feedback(
            user=replaced["user_id"], conversation_id=replaced["conversation_id"], turn_id=next(r_tags(replaced)),
            reaction="neutral", text="changed my mind", at=dt.datetime.now(dt.UTC),
        )  # fmt: skip
        nightly()
        second = {"summary": _summary(serving), "active": _active_rns(serving), "oracle": _oracle(run)}
        past = work / "past.duckdb"
        past.write_bytes(db.read_bytes())
        ok(run_ops("build", "--as-of", between.isoformat() + "Z", "--db", past, env=env, timeout=900))
        yield {
            "first": first,
            "second": second,
            "past": _summary(work / "past.serving.duckdb"),
            "changed": {
                (cleared_on.tenant, cleared_on.project, cleared["conversation_id"]),
                (replaced_on.tenant, replaced_on.project, replaced["conversation_id"]),
            },
        }
    finally:
        pg_server.psql(f"drop database if exists {name} with (force)")


def r_tags(row: dict) -> Iterator[str]:
    return (t.removeprefix("turn:") for t in row["tags"] if t.startswith("turn:"))


def test_each_night_counts_what_the_platform_counts(nights: dict) -> None:
    assert nights["first"]["summary"] == nights["first"]["oracle"]
    assert nights["second"]["summary"] == nights["second"]["oracle"]


def test_the_clear_and_the_replacement_change_those_two_conversations_only(nights: dict) -> None:
    first, second = nights["first"]["summary"], nights["second"]["summary"]
    assert {k for k in first.keys() | second.keys() if first.get(k) != second.get(k)} == nights["changed"]
    # one user reaction fewer (the clear) and one replaced by a neutral: two rns gone, one new
    gone, new = (
        nights["first"]["active"] - nights["second"]["active"],
        nights["second"]["active"] - nights["first"]["active"],
    )
    assert (len(gone), len(new)) == (2, 1)
    assert sum(v["user"] for v in first.values()) - sum(v["user"] for v in second.values()) == 1


def test_a_past_as_of_still_counts_what_was_active_then(nights: dict) -> None:
    """Built after the second night as of an instant before the clear and the replacement: the numbers of the
    first night, row for row."""
    assert nights["past"] == nights["first"]["summary"]
