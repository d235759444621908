"""The platform's reaction index (`conv_messages` in each kdcube_<tenant>_<project> schema) on a real PostgreSQL,
written by the replay of the platform's own code (tests/support/kdcube.py cites each upstream file and line),
and the blob tree the same replay writes beside it."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import uuid
from pathlib import Path

import pytest

from ingest.sources.reaction_index import IndexDatabase
from tests.support.ingest import ingest_ok, query, rows, run_cli
from tests.support.kdcube import Platform, index_schema
from tests.support.kdcube_replay import replay
from tests.support.postgres_tables import pg_execute

NOW = dt.datetime(2026, 11, 1, 12, 0, 0)


def _index(db: Path, dsn: str, *extra: str) -> str:
    return ingest_ok("reactions", "--postgres", dsn, "--db", db, *extra).stdout


def _manifest(db: Path) -> list[dict]:
    return rows(db, "select * from raw.load_manifest where target_table = 'reaction_index' order by finished_at, uri")


def test_schema_names_follow_the_platform():
    """conv_index.py:65-72: `-` and spaces become `_`, kdcube_ in front (not twice)."""
    assert index_schema("acme-corp", "support") == "kdcube_acme_corp_support"
    assert index_schema("globex", "docs qa") == "kdcube_globex_docs_qa"
    assert index_schema("kdcube", "x") == "kdcube_x"


def test_every_index_schema_is_discovered_and_read(pg_database: str, tmp_path: Path):
    run = replay(pg_database, tmp_path / "storage", now=NOW)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    landed = rows(
        db,
        "select schema_name, tenant, project, count(*) as n from raw.reaction_index group by all order by schema_name",
    )
    expected = {}
    for platform in run.platforms:
        reactions = [r for r in platform.index_rows() if "artifact:turn.log.reaction" in r["tags"]]
        expected[platform.schema] = (platform.tenant, platform.project, len(reactions))
    # tenant and project from the blob path (acme-corp, "docs qa"), not from the lossy schema name
    assert {r["schema_name"]: (r["tenant"], r["project"], r["n"]) for r in landed} == expected
    # the rn rebuilt from hosted_uri is the blob's own meta.rn (rn.py:14)
    blob_rns = {
        r["meta"]["rn"] for p in run.platforms for r in p.written if r["meta"].get("kind") == "turn.log.reaction"
    }
    assert {r[0] for r in query(db, "select rn from raw.reaction_index")} <= blob_rns
    # the messages and turn logs of the index are not reaction rows: none landed, none quarantined
    assert query(db, "select count(*) from raw.quarantine")[0][0] == 0
    # null machine reactions land (base_workflow.py writes them) with their confidence
    nulls = query(db, "select count(*) from raw.reaction_index where origin = 'machine' and reaction is null")[0][0]
    assert nulls >= run.ops["machine_null"]
    assert query(db, "select min(confidence) from raw.reaction_index where origin = 'machine'")[0][0] >= 0.70
    # user_type is an open set: the machine rows' `conversation` lands as it came
    assert query(db, "select count(*) from raw.reaction_index where user_type = 'conversation'")[0][0] > 0


def test_schema_option_narrows_and_an_unknown_schema_is_one_line(pg_database: str, tmp_path: Path):
    replay(pg_database, tmp_path / "storage", now=NOW)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database, "--schema", "kdcube_globex_docs_qa")
    assert [r[0] for r in query(db, "select distinct schema_name from raw.reaction_index")] == ["kdcube_globex_docs_qa"]
    secret = pg_database.replace("postgres@", "postgres:s3cret@")
    result = run_cli("ingest", "reactions", "--postgres", secret, "--schema", "kdcube_nobody_here", "--db", db)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "error: no kdcube_nobody_here.conv_messages" in result.stderr
    assert "kdcube_acme_corp_support, kdcube_globex_docs_qa" in result.stderr
    assert "s3cret" not in result.stderr + result.stdout


def test_a_database_without_an_index_is_one_line(pg_database: str, tmp_path: Path):
    result = run_cli("ingest", "reactions", "--postgres", pg_database, "--db", tmp_path / "wh.duckdb")
    assert result.returncode == 1
    assert "no reaction index" in result.stderr and result.stderr.count("\n") == 1


def test_clears_and_replacements_are_noticed_reading_only_the_changed_conversations(pg_database: str, tmp_path: Path):
    """A clear (conversations.py:558) and a replacement (ctx_rag.py:1127) between two loads: the second load
    reads the reaction rows of those two conversations only (rows_read), lands the new row and stamps the
    two rows gone as removed; a load with nothing changed is skipped."""
    run = replay(pg_database, tmp_path / "storage", now=NOW)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    loads_before = len(_manifest(db))
    _index(db, pg_database)  # nothing changed: each schema's check is recorded, and reads no row
    unchanged = _manifest(db)[loads_before:]
    assert [(m["rows_read"], m["rows_loaded"], m["rows_removed"]) for m in unchanged] == [(0, 0, 0)] * 2
    assert all(m["observed_at"] == m["started_at"] for m in unchanged)
    loads_before = len(_manifest(db))

    platform = run.platforms[0]
    first, second = [c for c in run.conversations if c[0] is platform][:2]
    turn_a, turn_b = run.turns[first[2]][0], run.turns[second[2]][1]
    later = NOW + dt.timedelta(minutes=5)
    platform.submit_turn_feedback(user=first[1], conversation_id=first[2], turn_id=turn_a, reaction="ok", at=later)
    platform.submit_turn_feedback(
        user=second[1], conversation_id=second[2], turn_id=turn_b, reaction="not_ok", at=later
    )
    # the first one is replaced, the second one cleared
    platform.submit_turn_feedback(
        user=first[1], conversation_id=first[2], turn_id=turn_a, reaction="neutral", at=later + dt.timedelta(minutes=1)
    )
    _index(db, pg_database)  # lands both, finds nothing gone yet (the replaced ok never reached the warehouse)
    platform.submit_turn_feedback(
        user=second[1], conversation_id=second[2], turn_id=turn_b, reaction=None, at=later + dt.timedelta(minutes=2)
    )
    platform.submit_turn_feedback(
        user=first[1], conversation_id=first[2], turn_id=turn_a, reaction="not_ok", at=later + dt.timedelta(minutes=3)
    )
    _index(db, pg_database)
    loads = _manifest(db)[loads_before:]
    last = [m for m in loads if m["uri"].endswith(f".{platform.schema}.conv_messages")][-1]
    in_the_two = sum(
        1
        for r in platform.index_rows()
        if r["conversation_id"] in (first[2], second[2]) and "artifact:turn.log.reaction" in r["tags"]
    )
    all_rows = sum(1 for r in platform.index_rows() if "artifact:turn.log.reaction" in r["tags"])
    assert last["rows_read"] == in_the_two < all_rows  # the two conversations' rows, not the schema's
    assert (last["rows_loaded"], last["rows_removed"]) == (1, 2)  # the new not_ok; the neutral and the cleared not_ok
    assert last["rows_read"] == last["rows_loaded"] + last["rows_duplicate"] + last["rows_quarantined"]
    removed = rows(db, "select reaction, _removed_by_load from raw.reaction_index where _removed_at is not null")
    assert sorted(r["reaction"] for r in removed) == ["neutral", "not_ok"]
    assert {r["_removed_by_load"] for r in removed} == {last["load_id"]}
    # the rows still in the index and the rows landed and not removed are the same
    index_ids = {(platform.schema, r["id"]) for r in platform.index_rows() if "artifact:turn.log.reaction" in r["tags"]}
    landed = {
        (s, i) for s, i in query(db, "select schema_name, index_id from raw.reaction_index where _removed_at is null")
    }
    assert {k for k in landed if k[0] == platform.schema} == index_ids


def test_a_whole_conversation_gone_is_noticed(pg_database: str, tmp_path: Path):
    """conv_index.py:180 delete_conversation: every row of a conversation deleted at once."""
    run = replay(pg_database, tmp_path / "storage", now=NOW)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    platform, _, conversation = next(c for c in run.conversations if c[0] is run.platforms[1])
    held = query(
        db,
        "select count(*) from raw.reaction_index where conversation_id = ? and _removed_at is null",
        [conversation],
    )[0][0]
    pg_execute(pg_database, f"delete from {platform.schema}.conv_messages where conversation_id = '{conversation}'")
    _index(db, pg_database)
    after = query(
        db, "select count(*) from raw.reaction_index where conversation_id = ? and _removed_at is null", [conversation]
    )[0][0]
    assert held > 0 and after == 0


def test_an_index_row_that_breaks_the_contract_is_quarantined_with_its_reason(pg_database: str, tmp_path: Path):
    """A row whose reaction JSON says `reaction: "meh"` (not a value the API accepts, conversations.py:591) is
    quarantined; one whose text is not JSON still lands from its tags (origin, turn) and the row's ts."""
    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    at = NOW - dt.timedelta(days=1)
    platform.submit_turn_feedback(user="u1", conversation_id="c1", turn_id="t1", reaction="ok", at=at)
    body = {"turn_id": "t2", "text": "", "confidence": 1.0, "ts": "2026-10-30T10:00:00Z", "reaction": "meh"}
    platform.add_message(
        user_id="u1",
        conversation_id="c1",
        turn_id="t2",
        role="artifact",
        text=json.dumps(body),
        hosted_uri="file:///x/cb/tenants/acme/projects/support/conversation/u1/c1/t2/artifact-x-turn.log.reaction.json",
        ts="2026-10-30T10:00:00Z",
        tags=["artifact:turn.log.reaction", "turn:t2", "origin:user"],
        user_type="paid",
        message_id="artifact-x-turn.log.reaction",
    )
    platform.add_message(
        user_id="u1",
        conversation_id="c1",
        turn_id=None,
        role="artifact",
        text="not json",
        hosted_uri="s3://bucket/p/cb/tenants/acme/projects/support/conversation/u1/c1/t3/artifact-y.json",
        ts="2026-10-30T11:00:00Z",
        tags=["artifact:turn.log.reaction", "turn:t3", "origin:machine"],
        user_type="conversation",
        message_id="artifact-y",
    )
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    bad = rows(db, "select reason, raw_text from raw.quarantine")
    assert len(bad) == 1 and "reaction: meh is not one of ok, not_ok, neutral" in bad[0]["reason"]
    landed = rows(db, "select turn_id, origin, ts, rn from raw.reaction_index order by index_id")
    assert [(r["turn_id"], r["origin"]) for r in landed] == [("t1", "user"), ("t3", "machine")]
    assert landed[1]["ts"] == dt.datetime(2026, 10, 30, 11, 0)
    assert landed[1]["rn"] == "ef:acme:support:chatbot:message:u1:c1:t3:artifact:artifact-y"


def test_the_index_reader_reads_no_other_column(pg_database: str, tmp_path: Path):
    """The embedding, search vector and anchors never leave the server: the SELECT names its columns."""
    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    platform.submit_turn_feedback(user="u1", conversation_id="c1", turn_id="t1", reaction="ok", at=NOW)
    table = IndexDatabase(pg_database).query("select * from kdcube_acme_support.conv_messages limit 0")
    assert "embedding" in table.column_names  # the real table has it...
    from ingest.sources.reaction_index import ROW_COLUMNS

    assert "embedding" not in ROW_COLUMNS and "search_tsv" not in ROW_COLUMNS and "anchors" not in ROW_COLUMNS


@pytest.mark.parametrize("extra", [["--schema", "kdcube_x"]])
def test_schema_needs_postgres(tmp_path: Path, extra: list[str]):
    (tmp_path / "blobs").mkdir()
    result = run_cli("ingest", "reactions", str(tmp_path / "blobs"), *extra, "--db", tmp_path / "wh.duckdb")
    assert result.returncode == 2 and "--schema names schemas of the reaction index" in result.stderr


def test_the_rn_is_the_blobs_for_anonymous_s3_and_odd_user_ids(pg_database: str, tmp_path: Path):
    """conversation_store.py _who_and_id: an anonymous user's blob path (and rn) holds the fingerprint, a
    registered user's the user id (rn.py quotes it, safe=''); Path.as_uri percent-encodes a file:// path, an
    s3:// URI is not encoded (_uri_for_path). The rn rebuilt from each index row equals the blob's meta.rn."""
    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    at = NOW - dt.timedelta(days=1)
    registered = platform.submit_turn_feedback(
        user="u/1@x.com", conversation_id="c1", turn_id="t1", reaction="ok", at=at
    )
    body = {"turn_id": "t2", "text": "", "confidence": 1.0, "ts": "2026-10-30T10:00:00Z", "reaction": "not_ok"}
    anonymous_uri, anonymous_mid, anonymous_rn = platform.put_message(
        user="anonymous", fingerprint="fp 7%", conversation_id="c2", turn_id="t2", role="artifact",
        text=json.dumps(body), at=at, id="turn.log.reaction", payload={"reaction": {**body, "origin": "user"}},
        meta={"kind": "turn.log.reaction"},
    )  # fmt: skip
    platform.add_message(
        user_id="anonymous", conversation_id="c2", turn_id="t2", role="artifact", text=json.dumps(body),
        hosted_uri=anonymous_uri, ts=body["ts"], tags=["artifact:turn.log.reaction", "turn:t2", "origin:user"],
        user_type="anonymous", message_id=anonymous_mid,
    )  # fmt: skip
    s3_mid = "artifact-2026-10-30T11-00-00-0a1b2c3d-turn.log.reaction"
    platform.add_message(
        user_id="anonymous", conversation_id="c3", turn_id="t3", role="artifact", text=json.dumps(body),
        hosted_uri=f"s3://bucket/pre/cb/tenants/acme/projects/support/conversation/fp%41/c3/t3/{s3_mid}.json",
        ts=body["ts"], tags=["artifact:turn.log.reaction", "turn:t3", "origin:user"], user_type="anonymous",
        message_id=s3_mid,
    )  # fmt: skip
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    rns = {r["conversation_id"]: r["rn"] for r in rows(db, "select conversation_id, rn from raw.reaction_index")}
    assert rns["c1"] == registered
    assert rns["c2"] == anonymous_rn and "fp%207%25" in anonymous_rn
    assert rns["c3"] == f"ef:acme:support:chatbot:message:fp%2541:c3:t3:artifact:{s3_mid}"


def test_a_purge_is_not_undone_by_the_next_load(pg_database: str, tmp_path: Path):
    """The platform keeps index rows past 365 days (its TTL is a read filter): after our purge deleted them,
    the next load neither compares nor reads them again."""
    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    old, recent = NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=2)
    for n in range(3):
        platform.submit_turn_feedback(user="u1", conversation_id=f"c{n}", turn_id="t1", reaction="ok", at=old)
    platform.submit_turn_feedback(user="u1", conversation_id="c0", turn_id="t2", reaction="not_ok", at=recent)
    platform.submit_turn_feedback(user="u1", conversation_id="c9", turn_id="t1", reaction="ok", at=recent)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    assert query(db, "select count(*) from raw.reaction_index")[0][0] == 5
    purged = run_cli("purge", "--yes", "--db", db)
    assert purged.returncode == 0, purged.stderr
    assert query(db, "select count(*) from raw.reaction_index")[0][0] == 2
    loads_before = len(_manifest(db))
    _index(db, pg_database)
    assert query(db, "select count(*) from raw.reaction_index")[0][0] == 2
    (check,) = _manifest(db)[loads_before:]
    assert (check["rows_read"], check["rows_loaded"], check["rows_removed"]) == (0, 0, 0)


def test_a_past_as_of_never_dates_a_removal_before_the_check_that_saw_the_row(pg_database: str, tmp_path: Path):
    """A nightly run as of a past day: a row found gone is dated at the check itself, since a check after that
    day still saw it; a run as of now (a moment before its check) dates it at its as_of."""
    from ingest.sources import ingest_configured_sources

    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    at = NOW - dt.timedelta(days=3)
    for n in range(2):
        platform.submit_turn_feedback(user="u1", conversation_id=f"c{n}", turn_id="t1", reaction="ok", at=at)
    config = tmp_path / "sources.toml"
    config.write_text('[[reactions]]\npostgres_dsn_env = "INDEX_DSN"\n')
    db = tmp_path / "wh.duckdb"
    os.environ["INDEX_DSN"] = pg_database
    try:
        ingest_configured_sources(db, config)
        platform.submit_turn_feedback(user="u1", conversation_id="c0", turn_id="t1", reaction=None, at=at)
        ingest_configured_sources(db, config, observed_at=NOW - dt.timedelta(days=1))  # a past as_of
        platform.submit_turn_feedback(user="u1", conversation_id="c1", turn_id="t1", reaction=None, at=at)
        as_of = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        ingest_configured_sources(db, config, observed_at=as_of)  # as of now
    finally:
        del os.environ["INDEX_DSN"]
    removed = dict(query(db, "select conversation_id, _removed_at from raw.reaction_index order by 1"))
    checks = [m["started_at"] for m in _manifest(db)]
    assert removed["c0"] == checks[1]  # not the past day
    assert removed["c1"] == as_of


def test_a_schema_dropped_from_the_database_is_noticed(pg_database: str, tmp_path: Path):
    run = replay(pg_database, tmp_path / "storage", now=NOW)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    dropped = run.platforms[1].schema
    pg_execute(pg_database, f"drop schema {dropped} cascade")
    _index(db, pg_database)
    still = dict(query(db, "select schema_name, count(*) from raw.reaction_index where _removed_at is null group by 1"))
    assert dropped not in still and still[run.platforms[0].schema] > 0
    assert query(db, "select count(*) from raw.reaction_index where schema_name = ?", [dropped])[0][0] > 0


def test_two_databases_with_the_same_schema_stay_apart(pg_server, pg_database: str, tmp_path: Path):
    name = f"other_{uuid.uuid4().hex[:10]}"
    pg_server.psql(f"create database {name}")
    other = pg_server.dsn(name)
    at = NOW - dt.timedelta(days=1)
    for dsn in (pg_database, other):
        platform = Platform(dsn, tmp_path / dsn.rsplit("/", 1)[1], "acme", "support")
        platform.submit_turn_feedback(user="u1", conversation_id="c1", turn_id="t1", reaction="ok", at=at)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    _index(db, other)  # same schema name, same ids, another database: nothing of the first one is removed
    found = query(db, "select database_name, index_key, _removed_at from raw.reaction_index order by 1")
    assert len(found) == 2 and {r[2] for r in found} == {None}
    assert {r[0] for r in found} == {pg_database.rsplit("/", 1)[1], name}
    pg_server.psql(f"drop database {name} with (force)")


def test_forget_erases_a_users_index_rows(pg_database: str, tmp_path: Path):
    platform = Platform(pg_database, tmp_path / "storage", "acme", "support")
    at = NOW - dt.timedelta(days=1)
    platform.submit_turn_feedback(user="erase-me-42", conversation_id="c1", turn_id="t1", reaction="ok", at=at)
    platform.submit_turn_feedback(user="keep-me", conversation_id="c2", turn_id="t1", reaction="ok", at=at)
    db = tmp_path / "wh.duckdb"
    _index(db, pg_database)
    result = run_cli("forget", "--user-id", "erase-me-42", "--no-build", "--db", db, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^raw\.reaction_index\s+deleted 1$", result.stdout, flags=re.M), result.stdout
    assert [r[0] for r in query(db, "select user_id from raw.reaction_index")] == ["keep-me"]
    assert "erase-me-42" not in db.read_bytes().decode("latin-1")
