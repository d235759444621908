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

from tests.support.kdcube import Platform, conversations_in_period
from tests.support.kdcube_replay import Replay, replay
from tests.support.operations import ok, ops_env, run_ops
from tests.support.postgres import PostgresServer
from tests.support.spark_parity import held_rows_not_in

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
            "work": work,
            "env": env,
            "dsn": dsn,
            "config": config,
            "db": db,
            "run": run,
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


def _unified(db: Path, where: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            f"select active_part, is_indexed, index_removed_at is not null from intermediate.int_reactions__unified "
            f"where {where} order by reaction_rn"
        ).fetchall()


@pytest.fixture(scope="module")
def later(nights: dict, pg_server: PostgresServer) -> Iterator[dict]:
    """After the two nights, what an incremental int_reactions__unified must compute again, the warehouse copied
    and rebuilt with --full-refresh beside it:
    - a user reaction given and replaced after the second night's check of the index (the replacement deleted its
      row before a load saw it: only its blob is left), loaded from the blobs alone and built, so that a build
      holds it with no check after it yet; the next nightly's check finds it gone;
    - a tenant whose index appears only then: its reaction, in the blobs since that build, decided by the blobs
      there, by the index on the next night.
    The reactions' table is first stored as an older version left it (no held_at column): the build adds the
    column and compares every held row once. Before the last nightly, the sequences' copy of the replaced
    reaction is made to differ from the unified row the nightly computes again (a reaction the index gave
    first and its blob later differs so), so the nightly must read that sequence again."""
    work, env, db, run = nights["work"], nights["env"], nights["db"], nights["run"]
    late = f"late_{uuid.uuid4().hex[:10]}"  # a database the nightly does not read: the new tenant's blobs only
    pg_server.psql(f"create database {late}")
    try:
        platform, user, conversation = run.conversations[0]
        turn = run.turns[conversation][0]
        at = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0) + dt.timedelta(seconds=1)
        time.sleep(1.1)
        replaced = platform.submit_turn_feedback(user=user, conversation_id=conversation, turn_id=turn,
                                                 reaction="ok", at=at)  # fmt: skip
        platform.submit_turn_feedback(user=user, conversation_id=conversation, turn_id=turn, reaction="not_ok",
                                      at=at + dt.timedelta(seconds=1))  # fmt: skip
        newcomer = Platform(pg_server.dsn(late), work / "storage", "initech", "ops", seed=41)
        newcomer.write_turn(user="dana", conversation_id="late-conversation", turn_id="turn_1", question="Q", at=at)
        newcomer.submit_turn_feedback(user="dana", conversation_id="late-conversation", turn_id="turn_1",
                                      reaction="ok", at=at)  # fmt: skip
        blobs_only = work / "blobs.toml"
        blobs_only.write_text('[[reactions]]\npath = "storage"\n')
        with duckdb.connect(str(db)) as con:  # as the version before it was incremental stored it: no held_at
            con.execute("alter table intermediate.int_reactions__unified drop column held_at")
        ok(run_ops("ingest", "--config", blobs_only, "--db", db, "-q", env=env, timeout=900))
        ok(run_ops("build", "--db", db, "--", "--exclude", "resource_type:test", env=env, timeout=900))
        before = {
            "replaced": _unified(db, f"reaction_rn = '{replaced}'"),
            "newcomer": _unified(db, "tenant = 'initech'"),
        }
        indexed = Platform(nights["dsn"], work / "storage", "initech", "ops", seed=43)
        indexed.write_turn(user="erin", conversation_id="indexed-conversation", turn_id="turn_2", question="Q", at=at)
        indexed.submit_turn_feedback(user="erin", conversation_id="indexed-conversation", turn_id="turn_2",
                                     reaction="not_ok", at=at)  # fmt: skip
        with duckdb.connect(str(db)) as con:
            # a sequence's held copy of a reaction that int_reactions__unified will compute again with other values
            # (as for a reaction read from the index first and its blob later): the nightly must read it again
            con.execute(
                "update intermediate.int_reactions__sequenced set comment_text = 'held before' where reaction_rn = ?",
                [replaced],
            )
        time.sleep(1.1)
        ok(run_ops("nightly", "--config", nights["config"], "--db", db, env=env, timeout=900))
        with duckdb.connect(str(db), read_only=True) as con:  # so only the new stamp can send the sequence back
            removed_by_purges = con.execute(
                "select sum(rows_archived + rows_deleted + coalesce(rows_deleted_from_archive, 0)) "
                "from raw.purge_log where not is_dry_run"
            ).fetchall()[0][0]
        assert removed_by_purges == 0
        after = {
            "replaced": _unified(db, f"reaction_rn = '{replaced}'"),
            "newcomer": _unified(db, "tenant = 'initech' and user_id = 'dana'"),
        }
        full = work / "full-refresh.duckdb"
        full.write_bytes(db.read_bytes())
        ok(run_ops("build", "--db", full, "--", "--full-refresh", "--exclude", "resource_type:test", env=env,
                   timeout=900))  # fmt: skip
        yield {"nightly_db": db, "full_refresh_db": full, "before": before, "after": after}
    finally:
        pg_server.psql(f"drop database if exists {late} with (force)")


def test_what_the_index_decides_anew_was_held_as_the_blobs_decided(later: dict) -> None:
    """The scenario's premise: the build before the last nightly held the replaced reaction with no check after
    it and the new tenant's reaction decided by the blobs; the nightly's check found the first gone and the
    new index decides the second."""
    assert later["before"] == {"replaced": [("index", False, False)], "newcomer": [("blobs", False, False)]}
    assert later["after"] == {"replaced": [("index", False, True)], "newcomer": [("index", False, True)]}


def test_the_incremental_reactions_equal_a_full_refresh(later: dict) -> None:
    """The reactions' incremental tables after the nights equal a --full-refresh build of the same warehouse,
    row for row but for held_at (the build that added the row)."""
    with duckdb.connect() as con:
        con.execute(f"attach '{later['nightly_db']}' as nightly (read_only)")
        con.execute(f"attach '{later['full_refresh_db']}' as full_refresh (read_only)")
        for table in ("int_reactions__unified", "int_reactions__sequenced", "int_reactions__history"):
            for one, other in (("nightly", "full_refresh"), ("full_refresh", "nightly")):
                extra = held_rows_not_in(con, one, other, table)
                assert extra == 0, f"{table}: {extra} row(s) of {one} not in {other}"
        removed = con.execute(
            "select count(*) from nightly.intermediate.int_reactions__unified where index_removed_at is not null"
        ).fetchall()[0][0]
        assert removed >= 3  # the cleared and the replaced reactions, found gone by the nightly checks


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
